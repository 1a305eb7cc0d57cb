package dev.guardjit;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Options of a {@link Function} ({@code gj_function_options}); unset fields keep the library's
 * defaults. A mutable builder: {@code new FunctionOptions().name("mlp").recompileLimit(4)}.
 */
public final class FunctionOptions {
  private String name;
  private Integer recompileLimit;
  private DynamicMode dynamic = DynamicMode.AUTO;
  private final List<long[]> markDynamic = new ArrayList<>();
  private boolean fullgraph;
  private FunctionMode mode = FunctionMode.DEFAULT;
  private int maxGraphsPerEntry;
  private CompileMode compile = CompileMode.SYNC;

  /** For logs and explain(); default the graph's name. */
  public FunctionOptions name(String name) {
    this.name = name;
    return this;
  }

  /** Cache entries before the function runs only what it has (default 8). */
  public FunctionOptions recompileLimit(int recompileLimit) {
    this.recompileLimit = recompileLimit;
    return this;
  }

  public FunctionOptions dynamic(DynamicMode dynamic) {
    this.dynamic = Objects.requireNonNull(dynamic, "dynamic");
    return this;
  }

  /**
   * torch._dynamo.mark_dynamic(input, dim, min, max): the dim is symbolic from the first
   * compile; a size outside [min, max] fails the entry's guards. Ignored with {@link
   * DynamicMode#STATIC}.
   */
  public FunctionOptions markDynamic(int input, int dim, long min, long max) {
    markDynamic.add(new long[] {input, dim, min, max});
    return this;
  }

  /** {@link #markDynamic(int, int, long, long)} for any size (min 2, no max). */
  public FunctionOptions markDynamic(int input, int dim) {
    return markDynamic(input, dim, 2, Long.MAX_VALUE);
  }

  /**
   * torch.compile's {@code fullgraph=True}: a graph break (a cond whose predicate reads tensor
   * values, an op whose output size depends on values) fails the call with {@link
   * ErrorCode#UNIMPLEMENTED} naming the node, instead of splitting the graph into segments (the
   * default).
   */
  public FunctionOptions fullgraph(boolean fullgraph) {
    this.fullgraph = fullgraph;
    return this;
  }

  /** How CUDA calls run (default {@link FunctionMode#DEFAULT}). */
  public FunctionOptions mode(FunctionMode mode) {
    this.mode = Objects.requireNonNull(mode, "mode");
    return this;
  }

  /**
   * CUDA graphs (one per size key) each cache entry keeps in {@link FunctionMode#REDUCE_OVERHEAD}
   * before evicting the least recently used; 0 = the default, 8. Negative is {@link
   * ErrorCode#INVALID_ARGUMENT} when the function is created.
   */
  public FunctionOptions maxGraphsPerEntry(int maxGraphsPerEntry) {
    this.maxGraphsPerEntry = maxGraphsPerEntry;
    return this;
  }

  /** When a miss compiles (default {@link CompileMode#SYNC}). */
  public FunctionOptions compile(CompileMode compile) {
    this.compile = Objects.requireNonNull(compile, "compile");
    return this;
  }

  String name() {
    return name;
  }

  long create(long context, long graph) {
    long[] dims = null;
    if (!markDynamic.isEmpty()) {
      dims = new long[4 * markDynamic.size()];
      for (int i = 0; i < markDynamic.size(); ++i) {
        System.arraycopy(markDynamic.get(i), 0, dims, 4 * i, 4);
      }
    }
    return Native.functionCreate(
        context,
        graph,
        name,
        recompileLimit == null ? 0 : recompileLimit,
        recompileLimit != null,
        dynamic.value,
        dims,
        fullgraph,
        mode.value,
        maxGraphsPerEntry,
        compile.value);
  }
}
