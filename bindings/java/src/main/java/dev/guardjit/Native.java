package dev.guardjit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The JNI entry points (src/main/c; guardjit_jni.h says which file holds what). Handles are
 * raw pointers as longs; the public classes own them and guarantee that a pointer passed
 * here is alive for the whole call.
 */
final class Native {
  private Native() {}

  /**
   * Where the JNI library came from: "property" (-Dguardjit.jni.library), "jar" (packed in
   * the jar, the usual case) or "library path" (java.library.path).
   */
  static final String SOURCE;

  static {
    String path = System.getProperty("guardjit.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
      SOURCE = "property";
    } else if (loadBundled()) {
      SOURCE = "jar";
    } else {
      System.loadLibrary("guardjit_jni");
      SOURCE = "library path";
    }
  }

  /** The folder of this platform's library in the jar: linux-x86_64, linux-aarch64, ... */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "");
    arch =
        switch (arch) {
          case "amd64", "x86_64" -> "x86_64";
          case "arm64", "aarch64" -> "aarch64";
          default -> arch;
        };
    return (os.startsWith("linux") ? "linux" : os.replace(' ', '_')) + "-" + arch;
  }

  /**
   * Loads the JNI library packed into the jar (dev/guardjit/native/PLATFORM/libguardjit_jni.so,
   * see bindings/java/test.sh): the dynamic loader cannot read inside a jar, so it is copied
   * into a private temporary directory, loaded, and the copy removed (the mapping keeps the
   * code). False when the jar has none for this platform. libguardjit.so itself is found as
   * the JNI library's dependency (its RUNPATH, else LD_LIBRARY_PATH).
   */
  private static boolean loadBundled() {
    String name = System.mapLibraryName("guardjit_jni");
    String resource = "/dev/guardjit/native/" + platform() + "/" + name;
    try (InputStream in = Native.class.getResourceAsStream(resource)) {
      if (in == null) {
        return false;
      }
      Path dir = Files.createTempDirectory("guardjit-jni");
      Path lib = dir.resolve(name);
      try {
        Files.copy(in, lib);
        System.load(lib.toString());
      } finally {
        Files.deleteIfExists(lib);
        Files.deleteIfExists(dir);
      }
      return true;
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("guardjit: cannot unpack " + resource + " from the jar: " + e);
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

  /** Null strings pass NULL (the environment's); mask bit 16 sets maxCacheBytes. */
  static native long contextCreate(
      int numThreads,
      int backend,
      int maxCachedKernels,
      long maxCachedBytes,
      int mask,
      String cacheDir,
      long maxCacheBytes,
      String cacheKey,
      String remoteCache);

  static native void contextDestroy(long context);

  static native long[] contextMemoryStats(long context);

  static native void contextReleaseCachedMemory(long context);

  static native long[] contextDeviceMemoryStats(long context, int deviceType, int deviceId);

  static native void contextReleaseCachedDeviceMemory(long context, int deviceType, int deviceId);

  static native long[] contextCompileCacheStats(long context);

  /** Fills stats (CacheDirStats.of's order) and returns the report. */
  static native String cacheDirInspect(
      String dir, String key, boolean verify, boolean removeBad, long[] stats);

  static native long cacheDirClear(String dir);

  static native long graphFromFile(long context, String path, String externalDataDir);

  static native long graphFromBytes(
      long context, byte[] data, boolean text, String externalDataDir);

  static native void graphDestroy(long graph);

  static native int graphNumInputs(long graph);

  static native int graphNumOutputs(long graph);

  static native String graphInputName(long graph, int index);

  static native String graphOutputName(long graph, int index);

  // Since 0.12: declared metadata of input (input=true) or output `index`.
  static native int graphIoDtype(long graph, boolean input, int index);

  static native long graphIoRank(long graph, boolean input, int index);

  static native long graphIoDim(long graph, boolean input, int index, int dim);

  static native String graphIoDimSymbol(long graph, boolean input, int index, int dim);

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
