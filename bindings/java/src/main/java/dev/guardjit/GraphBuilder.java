package dev.guardjit;

import java.lang.ref.Cleaner;
import java.util.Objects;

/**
 * Builds a graph node by node without protobuf ({@code gj_graph_builder_*}):
 *
 * <pre>{@code
 * try (GraphBuilder b = new GraphBuilder(ctx, "hello")) {
 *   b.addInput("a").addInput("b");
 *   b.addNode("add", "aten.add.Tensor", Arg.ref("a"), Arg.ref("b"));
 *   b.addNode("relu", "aten.relu.default", Arg.ref("add"));
 *   b.setOutputs("relu");
 *   try (Graph g = b.finish()) { ... }
 * }
 * }</pre>
 *
 * Each add checks its node at once and throws {@link GuardjitException} naming what is wrong;
 * a failed add leaves the builder as it was, so it may be corrected and retried. After {@link
 * #finish()} the builder is spent (further use throws {@link IllegalStateException}); close it
 * (idempotent) either way.
 *
 * <p>Thread safety: the methods are synchronized, so a builder may be shared, though building
 * is naturally one thread's job.
 */
public final class GraphBuilder implements AutoCloseable {
  private final HandleState state;
  private final Cleaner.Cleanable cleanable;
  private final Context context;
  private boolean finished;

  public GraphBuilder(Context context, String name) {
    this.context = context;
    long c = context.state.acquire();
    boolean handedOver = false;
    try {
      long pointer = Native.builderCreate(c, Objects.requireNonNull(name, "name"));
      this.state = new HandleState("GraphBuilder", pointer, Native::builderDestroy, context.state);
      handedOver = true;
    } finally {
      if (!handedOver) {
        context.state.release();
      }
    }
    this.cleanable = Handles.CLEANER.register(this, state);
  }

  /** Adds an input (placeholder); inputs are the graph's parameters in the order added. */
  public synchronized GraphBuilder addInput(String name) {
    long p = acquire();
    try {
      Native.builderAddInput(p, Objects.requireNonNull(name, "name"));
    } finally {
      state.release();
    }
    return this;
  }

  /** Adds a constant holding a copy of {@code value} (any strides). */
  public synchronized GraphBuilder addConstant(String name, Tensor value) {
    Objects.requireNonNull(name, "name");
    long p = acquire();
    value.acquireOwner();
    try {
      Native.builderAddConstant(p, name, value.meta);
    } finally {
      java.lang.ref.Reference.reachabilityFence(value);
      value.releaseOwner();
      state.release();
    }
    return this;
  }

  /**
   * Adds a call node: {@code target} is an ATen overload ("aten.add.Tensor") or "getitem",
   * {@code args} are ATen's positional arguments followed by any {@link Arg#kw keyword} ones.
   */
  public synchronized GraphBuilder addNode(String name, String target, Arg... args) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(target, "target");
    int n = args.length;
    int[] kinds = new int[n];
    String[] names = new String[n];
    long[] ints = new long[n];
    double[] floats = new double[n];
    String[] strs = new String[n];
    int[] dtypes = new int[n];
    Object[] lists = new Object[n];
    for (int k = 0; k < n; ++k) {
      Arg a = Objects.requireNonNull(args[k], "args");
      kinds[k] = a.kind;
      names[k] = a.name;
      ints[k] = a.i;
      floats[k] = a.f;
      strs[k] = a.str;
      dtypes[k] = a.dtype == null ? DType.FLOAT32.value() : a.dtype.value();
      lists[k] = a.list;
    }
    long p = acquire();
    try {
      Native.builderAddNode(p, name, target, kinds, names, ints, floats, strs, dtypes, lists);
    } finally {
      state.release();
    }
    return this;
  }

  /** Sets the graph's outputs (names of inputs, constants or nodes). */
  public synchronized GraphBuilder setOutputs(String... names) {
    for (String s : names) {
      Objects.requireNonNull(s, "names");
    }
    long p = acquire();
    try {
      Native.builderSetOutputs(p, names.clone());
    } finally {
      state.release();
    }
    return this;
  }

  /** The finished graph; the builder is spent afterwards, even if this throws. */
  public synchronized Graph finish() {
    long p = acquire();
    finished = true;
    context.state.acquire(); // the graph's own use of the context
    boolean handedOver = false;
    try {
      Graph g = new Graph(Native.builderFinish(p), context);
      handedOver = true;
      return g;
    } finally {
      if (!handedOver) {
        context.state.release();
      }
      state.release();
    }
  }

  public boolean isClosed() {
    return state.isClosed();
  }

  @Override
  public void close() {
    cleanable.clean();
  }

  private long acquire() {
    if (finished) {
      throw new IllegalStateException("GraphBuilder is finished");
    }
    return state.acquire();
  }
}
