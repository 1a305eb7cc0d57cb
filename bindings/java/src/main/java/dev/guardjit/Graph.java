package dev.guardjit;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * An immutable, validated graph (guardjit.proto.Graph: FX-shaped, ATen targets), loaded from
 * protobuf or built with a {@link GraphBuilder}. Functions made from a graph keep their own
 * reference, so a graph may be closed once its functions exist.
 *
 * <p>Thread safety: immutable; every method may be called from any thread. Closing is
 * idempotent; a closed graph throws {@link IllegalStateException}; an unreachable one is freed
 * by a {@link Cleaner}.
 */
public final class Graph implements AutoCloseable {
  final HandleState state;
  private final Cleaner.Cleanable cleanable;
  private final List<String> inputNames;
  private final List<String> outputNames;
  private final List<TensorInfo> inputs;
  private final List<TensorInfo> outputs;

  /** Takes ownership of {@code pointer}, which holds one use of {@code context}. */
  Graph(long pointer, Context context) {
    this.state = new HandleState("Graph", pointer, Native::graphDestroy, context.state);
    this.cleanable = Handles.CLEANER.register(this, state);
    int in = Native.graphNumInputs(pointer);
    int out = Native.graphNumOutputs(pointer);
    List<String> names = new ArrayList<>(in);
    for (int i = 0; i < in; ++i) {
      names.add(Native.graphInputName(pointer, i));
    }
    this.inputNames = Collections.unmodifiableList(names);
    names = new ArrayList<>(out);
    for (int i = 0; i < out; ++i) {
      names.add(Native.graphOutputName(pointer, i));
    }
    this.outputNames = Collections.unmodifiableList(names);
    this.inputs = infos(pointer, true, inputNames);
    this.outputs = infos(pointer, false, outputNames);
  }

  private static List<TensorInfo> infos(long pointer, boolean input, List<String> names) {
    List<TensorInfo> out = new ArrayList<>(names.size());
    for (int i = 0; i < names.size(); ++i) {
      int code = Native.graphIoDtype(pointer, input, i);
      DType dtype = null;
      for (DType d : DType.values()) {
        if (d.value() == code) {
          dtype = d;
        }
      }
      long rank = Native.graphIoRank(pointer, input, i);
      List<TensorInfo.Dim> dims = null;
      if (rank >= 0) {
        dims = new ArrayList<>((int) rank);
        for (int k = 0; k < rank; ++k) {
          long size = Native.graphIoDim(pointer, input, i, k);
          String symbol = Native.graphIoDimSymbol(pointer, input, i, k);
          dims.add(new TensorInfo.Dim(size, symbol == null || symbol.isEmpty() ? null : symbol));
        }
        dims = Collections.unmodifiableList(dims);
      }
      out.add(new TensorInfo(names.get(i), dtype, dims));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Loads a file: protobuf text format if it ends in .pbtxt or .txt, binary otherwise.
   * Relative external data paths resolve against the file's directory.
   *
   * @throws GuardjitException NOT_FOUND (no such file), INVALID_ARGUMENT (malformed graph),
   *     UNIMPLEMENTED (unknown target), DATA_LOSS (short external data), ...
   */
  public static Graph fromFile(Context context, Path path) {
    return fromFile(context, path, null);
  }

  /** {@link #fromFile(Context, Path)} with external data resolved against {@code dataDir}. */
  public static Graph fromFile(Context context, Path path, Path externalDataDir) {
    String p = path.toString();
    String dir = externalDataDir == null ? null : externalDataDir.toString();
    return load(context, c -> Native.graphFromFile(c, p, dir));
  }

  /** A graph from protobuf text format; relative external data paths resolve against the
   * current directory. */
  public static Graph fromText(Context context, String text) {
    return fromText(context, text, null);
  }

  public static Graph fromText(Context context, String text, Path externalDataDir) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    String dir = externalDataDir == null ? null : externalDataDir.toString();
    return load(context, c -> Native.graphFromBytes(c, bytes, true, dir));
  }

  /** A graph from a serialized guardjit.proto.Graph (binary protobuf). The bytes are copied. */
  public static Graph fromBytes(Context context, byte[] proto) {
    return fromBytes(context, proto, null);
  }

  public static Graph fromBytes(Context context, byte[] proto, Path externalDataDir) {
    Objects.requireNonNull(proto, "proto");
    String dir = externalDataDir == null ? null : externalDataDir.toString();
    return load(context, c -> Native.graphFromBytes(c, proto, false, dir));
  }

  @FunctionalInterface
  private interface Loader {
    long load(long context);
  }

  private static Graph load(Context context, Loader loader) {
    long c = context.state.acquire();
    boolean handedOver = false;
    try {
      Graph g = new Graph(loader.load(c), context);
      handedOver = true;
      return g;
    } finally {
      if (!handedOver) {
        context.state.release();
      }
    }
  }

  public int numInputs() {
    return inputNames.size();
  }

  public int numOutputs() {
    return outputNames.size();
  }

  /** The inputs' (placeholders') names in order. */
  public List<String> inputNames() {
    return inputNames;
  }

  /**
   * The outputs' names in order: the node each returns, or "node[k]" for element k of a
   * multi-output node.
   */
  public List<String> outputNames() {
    return outputNames;
  }

  /** What the graph declares of each input (dtype, dims with symbols), in call order. */
  public List<TensorInfo> inputs() {
    return inputs;
  }

  /** What the graph declares of each output. */
  public List<TensorInfo> outputs() {
    return outputs;
  }

  /** The graph as torch.fx's print_tabular shows it. */
  public String toTabular() {
    long p = state.acquire();
    try {
      return Native.graphToTabular(p);
    } finally {
      state.release();
    }
  }

  /**
   * What guardjit compiles the graph into for {@code target} ("cpu", or "cuda:sm_90" and the
   * like, which needs NVRTC but no GPU) with inputs of these dtypes and shapes; with {@code
   * emulate}, also runs the target's kernels on random inputs (seeded) and compares with the
   * eager interpreter. Takes the compilers' time (0.1 s to a few seconds).
   *
   * @throws GuardjitException INVALID_ARGUMENT (unknown target, wrong inputs), UNAVAILABLE (no
   *     NVRTC), UNIMPLEMENTED, INTERNAL, OUT_OF_RANGE
   */
  public CompileReport compileReport(
      String target, boolean emulate, long seed, TensorSpec... inputs) {
    long[] meta = TensorSpec.packAll(inputs);
    long[] check = new long[4];
    long p = state.acquire();
    String text;
    try {
      text = Native.graphCompileReport(p, meta, inputs.length, target, emulate, seed, check);
    } finally {
      state.release();
    }
    return new CompileReport(
        text,
        check[0] != 0,
        ErrorCode.fromValue((int) check[1]),
        Double.longBitsToDouble(check[2]),
        check[3] != 0);
  }

  public boolean isClosed() {
    return state.isClosed();
  }

  /** Frees the graph; functions made from it keep working. Idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }
}
