package dev.guardjit;

import java.nio.ByteBuffer;

/**
 * The JNI entry points (src/main/c; guardjit_jni.h says which file holds what). Handles are
 * raw pointers as longs; the public classes own them and guarantee that a pointer passed
 * here is alive for the whole call.
 */
final class Native {
  private Native() {}

  static {
    String path = System.getProperty("guardjit.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("guardjit_jni");
    }
  }

  /** Forces the library to load (class initialization). */
  static void load() {}

  /** A direct buffer's address (0 for a heap buffer); the caller keeps the buffer reachable. */
  static native long bufferAddress(ByteBuffer buffer);

  static native String version();

  static native int apiVersion();

  static native void setLogTopics(String spec);

  static native void setLogHandler(LogHandler handler);

  static native long contextCreate(
      int numThreads, int backend, int maxCachedKernels, long maxCachedBytes, int mask);

  static native void contextDestroy(long context);

  static native long[] contextMemoryStats(long context);

  static native void contextReleaseCachedMemory(long context);

  static native long[] contextDeviceMemoryStats(long context, int deviceType, int deviceId);

  static native void contextReleaseCachedDeviceMemory(long context, int deviceType, int deviceId);

  static native long graphFromFile(long context, String path, String externalDataDir);

  static native long graphFromBytes(
      long context, byte[] data, boolean text, String externalDataDir);

  static native void graphDestroy(long graph);

  static native int graphNumInputs(long graph);

  static native int graphNumOutputs(long graph);

  static native String graphInputName(long graph, int index);

  static native String graphOutputName(long graph, int index);

  static native String graphToTabular(long graph);

  static native String graphCompileReport(
      long graph,
      long[] meta,
      int numInputs,
      String target,
      boolean emulate,
      long seed,
      long[] checkOut);

  static native long builderCreate(long context, String name);

  static native void builderDestroy(long builder);

  static native void builderAddInput(long builder, String name);

  static native void builderAddConstant(long builder, String name, long[] meta);

  static native void builderAddNode(
      long builder,
      String name,
      String target,
      int[] kinds,
      String[] names,
      long[] ints,
      double[] floats,
      String[] strs,
      int[] dtypes,
      Object[] lists);

  static native void builderSetOutputs(long builder, String[] names);

  static native long builderFinish(long builder);

  static native long functionCreate(
      long context,
      long graph,
      String name,
      int recompileLimit,
      boolean hasRecompileLimit,
      int dynamic,
      long[] markDynamic,
      boolean fullgraph,
      int mode,
      int maxGraphsPerEntry,
      int compile);

  static native void functionDestroy(long function);

  static native int functionNumInputs(long function);

  static native int functionNumOutputs(long function);

  static native void functionCall(
      long function,
      long[] meta,
      int numInputs,
      int numOutputs,
      int gradMode,
      int deterministic,
      long timeoutUs,
      byte[] requiresGrad,
      long cancel,
      long stream,
      int synchronize);

  static native Object[] functionCallAlloc(
      long function,
      long[] meta,
      int numInputs,
      int numOutputs,
      int gradMode,
      int deterministic,
      long timeoutUs,
      byte[] requiresGrad,
      long cancel,
      long stream,
      int synchronize);

  static native void functionPrecompile(
      long function,
      long[] meta,
      int numInputs,
      int gradMode,
      int deterministic,
      byte[] requiresGrad);

  /** For tests: [struct_size, end of synchronize, stream, synchronize] a call would pass. */
  static native long[] callOptionsPassed(long stream, int synchronize);

  static native long[] functionStats(long function);

  static native String functionExplain(long function);

  static native String functionDumpGuards(long function);

  static native void tensorRelease(long tensor);
}
