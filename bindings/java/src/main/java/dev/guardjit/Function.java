package dev.guardjit;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A graph plus its guard cache: each call is checked against the guards of the cache entries
 * (dtype, shape, strides, aliasing, ambient state); a hit runs the entry's compiled code, a
 * miss compiles a new entry (up to the recompile limit).
 *
 * <pre>{@code
 * try (Context ctx = new Context();
 *      Graph g = Graph.fromFile(ctx, Path.of("examples/mlp.pbtxt"));
 *      Function fn = Function.create(ctx, g);
 *      Outputs out = fn.callAlloc(Tensor.of(x, 4, 8))) {
 *   float[] y = out.get(0).toFloatArray();
 * }
 * }</pre>
 *
 * <p>Thread safety: every method may be called from any thread, and calls may run
 * concurrently on one function (the C API's guarantee for {@code gj_function_call}); misses
 * on different shapes compile concurrently. {@link #close()} may also come from any thread:
 * calls already running finish first, later ones throw {@link IllegalStateException}. Closing
 * is idempotent; an unreachable function is freed by a {@link Cleaner}. Closing a function
 * frees its compiled code (beyond what the context caches).
 */
public final class Function implements AutoCloseable {
  private final HandleState state;
  private final Cleaner.Cleanable cleanable;
  private final String name;
  private final int numInputs;
  private final int numOutputs;

  private Function(long pointer, Context context, String name) {
    this.state = new HandleState("Function", pointer, Native::functionDestroy, context.state);
    this.cleanable = Handles.CLEANER.register(this, state);
    this.name = name;
    this.numInputs = Native.functionNumInputs(pointer);
    this.numOutputs = Native.functionNumOutputs(pointer);
  }

  /** A function with default options. */
  public static Function create(Context context, Graph graph) {
    return create(context, graph, new FunctionOptions());
  }

  /**
   * A function of {@code graph} in {@code context}. The function keeps its own reference to
   * the graph, which may be closed afterwards.
   */
  public static Function create(Context context, Graph graph, FunctionOptions options) {
    Objects.requireNonNull(options, "options");
    long c = context.state.acquire();
    boolean handedOver = false;
    try {
      long g = graph.state.acquire();
      try {
        Function f = new Function(options.create(c, g), context, options.name());
        handedOver = true;
        return f;
      } finally {
        graph.state.release();
      }
    } finally {
      if (!handedOver) {
        context.state.release();
      }
    }
  }

  /** The name given in the options, or null for the graph's name. */
  public String name() {
    return name;
  }

  public int numInputs() {
    return numInputs;
  }

  public int numOutputs() {
    return numOutputs;
  }

  /**
   * Runs the function into caller-provided outputs, each of the output's dtype and shape (any
   * non-overlapping strides; an output may overlap an input). Blocks until the results are
   * written; on error nothing is written.
   *
   * @throws GuardjitException INVALID_ARGUMENT naming the input or output (wrong count, dtype
   *     or shape, misaligned data, shapes an op rejects), OUT_OF_RANGE, CANCELLED,
   *     DEADLINE_EXCEEDED
   * @throws IllegalStateException if this function, or a {@link ManagedTensor} an argument
   *     views, is closed
   * @throws IllegalArgumentException if an output's buffer is read-only
   */
  public void call(Tensor[] inputs, Tensor[] outputs) {
    call(inputs, outputs, CallOptions.DEFAULT);
  }

  /** {@link #call(Tensor[], Tensor[])} with options (timeout, cancel flag, grad mode, ...). */
  public void call(Tensor[] inputs, Tensor[] outputs, CallOptions options) {
    for (Tensor t : outputs) {
      if (Objects.requireNonNull(t, "outputs").isReadOnly()) {
        throw new IllegalArgumentException("output tensor's buffer is read-only");
      }
    }
    Packed packed = new Packed(inputs, outputs);
    long p = state.acquire();
    try {
      packed.acquire();
      Native.functionCall(
          p,
          packed.meta,
          inputs.length,
          outputs.length,
          options.gradMode,
          options.deterministic,
          options.timeoutUs,
          options.requiresGrad,
          options.cancel == null ? 0 : options.cancel.address,
          options.stream,
          options.synchronize);
    } finally {
      // The native side got raw addresses: keep the buffers (and the flag) alive.
      Reference.reachabilityFence(packed);
      Reference.reachabilityFence(options);
      packed.release();
      state.release();
    }
  }

  /**
   * Runs the function and returns its outputs in library-allocated memory (contiguous, one
   * buffer each); close them (or the returned {@link Outputs}) to give the memory back.
   *
   * @throws GuardjitException as {@link #call(Tensor[], Tensor[])}
   */
  public Outputs callAlloc(Tensor... inputs) {
    return callAlloc(CallOptions.DEFAULT, inputs);
  }

  /** {@link #callAlloc(Tensor...)} with options. */
  public Outputs callAlloc(CallOptions options, Tensor... inputs) {
    Packed packed = new Packed(inputs, new Tensor[0]);
    long p = state.acquire();
    Object[] result;
    try {
      packed.acquire();
      result =
          Native.functionCallAlloc(
              p,
              packed.meta,
              inputs.length,
              numOutputs,
              options.gradMode,
              options.deterministic,
              options.timeoutUs,
              options.requiresGrad,
              options.cancel == null ? 0 : options.cancel.address,
              options.stream,
              options.synchronize);
    } finally {
      Reference.reachabilityFence(packed);
      Reference.reachabilityFence(options);
      packed.release();
      state.release();
    }
    return unpack(result, numOutputs);
  }

  /** Wraps callAlloc's result (see calls.c) so that each output is owned at once. */
  private static Outputs unpack(Object[] result, int n) {
    long[] info = (long[]) result[0];
    ManagedTensor[] tensors = new ManagedTensor[n];
    int pos = 0;
    // Own every pointer before anything can throw, so none leaks.
    long[] pointers = new long[n];
    for (int i = 0, q = 0; i < n; ++i) {
      pointers[i] = info[q];
      q += 7 + 2 * (int) info[q + 3];
    }
    try {
      for (int i = 0; i < n; ++i) {
        DType dtype = DType.fromDLPack(info[pos + 1], info[pos + 2]);
        int ndim = (int) info[pos + 3];
        Device device = new Device((int) info[pos + 4], (int) info[pos + 5]);
        long address = info[pos + 6];
        long[] shape = java.util.Arrays.copyOfRange(info, pos + 7, pos + 7 + ndim);
        long[] strides = java.util.Arrays.copyOfRange(info, pos + 7 + ndim, pos + 7 + 2 * ndim);
        tensors[i] =
            new ManagedTensor(
                pointers[i],
                (java.nio.ByteBuffer) result[i + 1],
                dtype,
                shape,
                strides,
                device,
                address);
        pos += 7 + 2 * ndim;
      }
    } catch (RuntimeException | Error e) {
      for (int i = 0; i < n; ++i) {
        if (tensors[i] != null) {
          tensors[i].close();
        } else {
          Native.tensorRelease(pointers[i]);
        }
      }
      throw e;
    }
    return new Outputs(tensors);
  }

  /**
   * Compiles the cache entry a call with inputs of this metadata would use, without running
   * it, so that the first real call is a hit. A no-op when an entry already serves it.
   *
   * @throws GuardjitException as a call's for inputs; FAILED_PRECONDITION when the function
   *     is past its recompile limit
   */
  public void precompile(TensorSpec... inputs) {
    precompile(CallOptions.DEFAULT, inputs);
  }

  /** {@link #precompile(TensorSpec...)} for calls with these options' grad mode and flags. */
  public void precompile(CallOptions options, TensorSpec... inputs) {
    long[] meta = TensorSpec.packAll(inputs);
    long p = state.acquire();
    try {
      Native.functionPrecompile(
          p, meta, inputs.length, options.gradMode, options.deterministic, options.requiresGrad);
    } finally {
      state.release();
    }
  }

  /** The guard cache's counters. */
  public FunctionStats stats() {
    long p = state.acquire();
    try {
      return FunctionStats.of(Native.functionStats(p));
    } finally {
      state.release();
    }
  }

  /**
   * torch._dynamo.explain()-style text: graph and op counts, ops, guards of every entry,
   * compile times, cache state, counters, recompile reasons, guard latency.
   */
  public String explain() {
    long p = state.acquire();
    try {
      return Native.functionExplain(p);
    } finally {
      state.release();
    }
  }

  /** The guards of every cache entry in TREE_GUARD_MANAGER form, most recently used first. */
  public String dumpGuards() {
    long p = state.acquire();
    try {
      return Native.functionDumpGuards(p);
    } finally {
      state.release();
    }
  }

  public boolean isClosed() {
    return state.isClosed();
  }

  /** Frees the function and its compiled code once no call is running; idempotent. */
  @Override
  public void close() {
    cleanable.clean();
  }

  /** The tensors of one call in the JNI glue's form, and the outputs they view. */
  private static final class Packed {
    final long[] meta;
    private final Tensor[] tensors; // what meta's addresses point into, kept reachable
    private final Tensor[] owned; // tensors viewing a ManagedTensor, or null
    private int acquired;

    Packed(Tensor[] inputs, Tensor[] outputs) {
      int n = inputs.length + outputs.length;
      tensors = new Tensor[n];
      int len = 0;
      int numOwned = 0;
      for (int i = 0; i < n; ++i) {
        Tensor t = i < inputs.length ? inputs[i] : outputs[i - inputs.length];
        Objects.requireNonNull(t, i < inputs.length ? "inputs" : "outputs");
        tensors[i] = t;
        len += t.meta.length;
        if (t.owner != null) {
          ++numOwned;
        }
      }
      meta = new long[len];
      owned = numOwned == 0 ? null : new Tensor[numOwned];
      int pos = 0;
      int o = 0;
      for (int i = 0; i < n; ++i) {
        Tensor t = tensors[i];
        System.arraycopy(t.meta, 0, meta, pos, t.meta.length);
        pos += t.meta.length;
        if (t.owner != null) {
          owned[o++] = t;
        }
      }
    }

    /** Keeps every viewed ManagedTensor open for the call. */
    void acquire() {
      if (owned == null) {
        return;
      }
      try {
        for (Tensor t : owned) {
          t.acquireOwner();
          ++acquired;
        }
      } catch (RuntimeException e) {
        release();
        throw e;
      }
    }

    void release() {
      for (int i = 0; i < acquired; ++i) {
        owned[i].releaseOwner();
      }
      acquired = 0;
    }
  }
}
