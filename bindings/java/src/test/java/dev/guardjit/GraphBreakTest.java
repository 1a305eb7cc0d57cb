package dev.guardjit;

import static dev.guardjit.TestSupport.assertClose;
import static dev.guardjit.TestSupport.example;
import static dev.guardjit.TestSupport.randomFloats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** C API 0.8's function options: graph breaks, fullgraph, modes and async compiles. */
class GraphBreakTest {
  static Context ctx;

  @BeforeAll
  static void setUp() {
    ctx = new Context(new ContextOptions().numThreads(2));
  }

  @AfterAll
  static void tearDown() {
    ctx.close();
  }

  /** seed_graph_break (Dynamo's toy example): a / (|a| + 1) * (b.sum() < 0 ? -b : b). */
  static void callGraphBreak(Function fn, float[] a, float[] b) {
    float sum = 0;
    for (float v : b) {
      sum += v;
    }
    float sign = sum < 0 ? -1 : 1;
    float[] expected = new float[a.length];
    for (int i = 0; i < a.length; ++i) {
      expected[i] = a[i] / (Math.abs(a[i]) + 1) * sign * b[i];
    }
    try (Outputs out = fn.callAlloc(Tensor.of(a, a.length), Tensor.of(b, b.length))) {
      assertClose(expected, out.get(0).toFloatArray(), 1e-6);
    }
  }

  @Test
  void graphBreaksSplitTheGraphUnlessFullgraph() {
    float[] a = randomFloats(10, 7);
    float[] positive = new float[10];
    float[] negative = new float[10];
    java.util.Arrays.fill(positive, 0.5f);
    java.util.Arrays.fill(negative, -0.5f);
    try (Graph g = Graph.fromFile(ctx, example("seed_graph_break.pbtxt"))) {
      try (Function fn = Function.create(ctx, g)) {
        callGraphBreak(fn, a, positive);
        FunctionStats s = fn.stats();
        assertEquals(2, s.graphCount(), s.toString());
        assertEquals(1, s.graphBreakCount(), s.toString());
        String explain = fn.explain();
        assertTrue(explain.contains("Graph Count: 2"), explain);
        // The other branch is a third graph, compiled when first reached.
        callGraphBreak(fn, a, negative);
        assertEquals(3, fn.stats().graphCount());
      }
      try (Function fn = Function.create(ctx, g, new FunctionOptions().fullgraph(true))) {
        ErrorTest.expect(
            ErrorCode.UNIMPLEMENTED,
            () -> fn.callAlloc(Tensor.of(a, 10), Tensor.of(positive, 10)).close(),
            "graph break at node 'cond'");
      }
    }
  }

  @Test
  void reduceOverheadIsIgnoredOnCpu() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn =
            Function.create(
                ctx,
                g,
                new FunctionOptions().mode(FunctionMode.REDUCE_OVERHEAD).maxGraphsPerEntry(2))) {
      float[] x = randomFloats(6, 1);
      float[] b = randomFloats(6, 2);
      for (int i = 0; i < 3; ++i) {
        fn.callAlloc(Tensor.of(x, 6), Tensor.of(b, 6)).close();
      }
      FunctionStats s = fn.stats();
      assertEquals(3, s.calls(), s.toString());
      assertEquals(2, s.hits(), s.toString());
      assertEquals(1, s.graphCount(), s.toString());
      assertEquals(0, s.cudaGraphsRecorded(), s.toString());
      assertEquals(0, s.cudaGraphReplays(), s.toString());
      ErrorTest.expect(
          ErrorCode.INVALID_ARGUMENT,
          () -> Function.create(ctx, g, new FunctionOptions().maxGraphsPerEntry(-1)).close());
    }
  }

  /** An async compile answers every call (eagerly at first), then serves the compiled entry. */
  @Test
  void asyncCompileServesItsEntry() throws InterruptedException {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g, new FunctionOptions().compile(CompileMode.ASYNC))) {
      float[] x = {1, 2, 3};
      float[] b = {4, 5, 6};
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (true) {
        try (Outputs out = fn.callAlloc(Tensor.of(x, 3), Tensor.of(b, 3))) {
          assertClose(new float[] {4, 10, 18}, out.get(0).toFloatArray(), 0);
        }
        FunctionStats s = fn.stats();
        if (s.hits() > 0) {
          assertEquals(1, s.compiles(), s.toString());
          break;
        }
        assertTrue(System.nanoTime() < deadline, "never hit: " + s);
        Thread.sleep(5);
      }
    }
  }
}
