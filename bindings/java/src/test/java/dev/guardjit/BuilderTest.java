package dev.guardjit;

import static dev.guardjit.ErrorTest.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BuilderTest {
  static Context ctx;

  @BeforeAll
  static void setUp() {
    ctx = new Context();
  }

  @AfterAll
  static void tearDown() {
    ctx.close();
  }

  @Test
  void helloWorldReluOfASum() {
    try (GraphBuilder b = new GraphBuilder(ctx, "hello")) {
      b.addInput("a").addInput("b");
      b.addNode("add", "aten.add.Tensor", Arg.ref("a"), Arg.ref("b"));
      b.addNode("relu", "aten.relu.default", Arg.ref("add"));
      b.setOutputs("relu");
      try (Graph g = b.finish();
          Function fn = Function.create(ctx, g);
          Outputs out =
              fn.callAlloc(
                  Tensor.of(new float[] {1, -2, 3, -4, 5, -6}, 2, 3),
                  Tensor.of(new float[] {0.5f, 0.5f, 10}, 3))) {
        assertEquals(List.of("a", "b"), g.inputNames());
        assertArrayEquals(new long[] {2, 3}, out.get(0).shape());
        assertArrayEquals(new float[] {1.5f, 0, 13, 0, 5.5f, 4}, out.get(0).toFloatArray());
      }
    }
  }

  @Test
  void keywordsListsConstantsAndGetitem() {
    try (GraphBuilder b = new GraphBuilder(ctx, "mixed")) {
      b.addInput("x");
      // A [2, 3] constant, added from a strided (transposed) tensor: it is copied.
      Tensor w = Tensor.of(new float[] {1, 4, 2, 5, 3, 6}, 3, 2).transpose(0, 1);
      b.addConstant("w", w);
      // add(x, w, alpha=2) = x + 2 w
      b.addNode("add", "aten.add.Tensor", Arg.ref("x"), Arg.ref("w"), Arg.kw("alpha", Arg.of(2)));
      // sum over dim 1, keepdim
      b.addNode(
          "sum", "aten.sum.dim_IntList", Arg.ref("add"), Arg.ints(1), Arg.of(true));
      b.addNode("cat", "aten.cat.default", Arg.refs("add", "sum"), Arg.of(1L));
      b.addNode("argmax", "aten.argmax.default", Arg.ref("cat"), Arg.of(1L));
      // native_layer_norm(add, [3], None, None, 1e-5) returns (out, mean, rstd).
      b.addNode(
          "ln", "aten.native_layer_norm.default", Arg.ref("add"), Arg.ints(3), Arg.none(),
          Arg.none(), Arg.of(1e-5));
      b.addNode("mean", "getitem", Arg.ref("ln"), Arg.of(1L));
      b.setOutputs("cat", "argmax", "mean");
      try (Graph g = b.finish();
          Function fn = Function.create(ctx, g);
          Outputs out = fn.callAlloc(Tensor.of(new float[] {0, 0, 0, 1, 1, -100}, 2, 3))) {
        assertEquals(List.of("cat", "argmax", "mean"), g.outputNames());
        // add = [[2, 4, 6], [9, 11, -88]]; sum = [[12], [-68]]
        assertArrayEquals(new float[] {2, 4, 6, 12, 9, 11, -88, -68}, out.get(0).toFloatArray());
        assertEquals(DType.INT64, out.get(1).dtype());
        assertArrayEquals(new long[] {3, 1}, out.get(1).toLongArray());
        assertArrayEquals(new long[] {2, 1}, out.get(2).shape());
        assertArrayEquals(new float[] {4, -68f / 3}, out.get(2).toFloatArray(), 1e-5f);
      }
    }
  }

  @Test
  void dtypeAndNoneArguments() {
    try (GraphBuilder b = new GraphBuilder(ctx, "cast")) {
      b.addInput("x");
      // _to_copy(x, dtype=float64) and sum(x, dtype=None)
      b.addNode("to", "aten._to_copy.default", Arg.ref("x"), Arg.kw("dtype", Arg.of(DType.FLOAT64)));
      b.addNode("s", "aten.sum.default", Arg.ref("x"), Arg.kw("dtype", Arg.none()));
      b.setOutputs("to", "s");
      try (Graph g = b.finish();
          Function fn = Function.create(ctx, g);
          Outputs out = fn.callAlloc(Tensor.of(new float[] {0.5f, 1.5f}, 2))) {
        assertEquals(DType.FLOAT64, out.get(0).dtype());
        assertArrayEquals(new double[] {0.5, 1.5}, out.get(0).toDoubleArray());
        assertArrayEquals(new float[] {2}, out.get(1).toFloatArray());
      }
    }
  }

  @Test
  void aFailedAddLeavesTheBuilderUsable() {
    try (GraphBuilder b = new GraphBuilder(ctx, "retry")) {
      b.addInput("x");
      expect(
          ErrorCode.INVALID_ARGUMENT,
          () -> b.addNode("y", "aten.relu.default", Arg.ref("typo")),
          "typo");
      expect(
          ErrorCode.UNIMPLEMENTED,
          () -> b.addNode("y", "aten.nosuchop.default", Arg.ref("x")),
          "aten.nosuchop.default");
      expect(ErrorCode.INVALID_ARGUMENT, () -> b.addInput("x"), "x"); // duplicate name
      expect(ErrorCode.INVALID_ARGUMENT, () -> b.setOutputs("nothing"), "nothing");
      b.addNode("y", "aten.relu.default", Arg.ref("x"));
      b.setOutputs("y");
      try (Graph g = b.finish();
          Function fn = Function.create(ctx, g);
          Outputs out = fn.callAlloc(Tensor.of(new float[] {-1, 1}, 2))) {
        assertArrayEquals(new float[] {0, 1}, out.get(0).toFloatArray());
      }
    }
  }

  @Test
  void argToStringIsReadable() {
    assertEquals("alpha=2", Arg.kw("alpha", Arg.of(2)).toString());
    assertEquals("[a, b]", Arg.refs("a", "b").toString());
    assertEquals("ref x", Arg.ref("x").toString());
  }
}
