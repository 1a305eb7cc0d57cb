package dev.guardjit;

import static dev.guardjit.TestSupport.assertClose;
import static dev.guardjit.TestSupport.example;
import static dev.guardjit.TestSupport.randomFloats;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FunctionTest {
  static Context ctx;

  @BeforeAll
  static void setUp() {
    ctx = new Context(new ContextOptions().numThreads(2));
  }

  @AfterAll
  static void tearDown() {
    ctx.close();
  }

  @Test
  void seedMulOnSeveralShapes() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      long[][] shapes = {{10}, {3}, {2, 5}, {4, 1, 3}};
      int seed = 0;
      for (long[] shape : shapes) {
        int n = (int) java.util.Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        float[] x = randomFloats(n, seed++);
        float[] b = randomFloats(n, seed++);
        float[] expected = new float[n];
        for (int i = 0; i < n; ++i) {
          expected[i] = x[i] * b[i];
        }
        // Library-allocated outputs ...
        try (Outputs out = fn.callAlloc(Tensor.of(x, shape), Tensor.of(b, shape))) {
          assertEquals(1, out.size());
          assertArrayEquals(shape, out.get(0).shape());
          assertEquals(DType.FLOAT32, out.get(0).dtype());
          assertClose(expected, out.get(0).toFloatArray(), 0);
        }
        // ... and caller-provided ones, the second call on a shape being a hit.
        Tensor y = Tensor.allocate(DType.FLOAT32, shape);
        fn.call(new Tensor[] {Tensor.of(x, shape), Tensor.of(b, shape)}, new Tensor[] {y});
        assertClose(expected, y.toFloatArray(), 0);
      }
      FunctionStats s = fn.stats();
      assertEquals(8, s.calls());
      assertEquals(s.calls(), s.hits() + s.misses());
      assertTrue(s.hits() >= 4, s.toString());
      assertTrue(s.compiles() >= 1 && s.compiles() <= 4, s.toString());
    }
  }

  @Test
  void twoOutputsIncludingBool() {
    try (Graph g = Graph.fromFile(ctx, example("seed_abs_div.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      assertEquals(2, fn.numInputs());
      assertEquals(2, fn.numOutputs());
      for (float sign : new float[] {1, -1}) {
        float[] a = randomFloats(10, 11);
        float[] b = randomFloats(10, 12);
        double sum = 0;
        for (int i = 0; i < 10; ++i) {
          b[i] = sign * Math.abs(b[i]);
          sum += b[i];
        }
        float[] div = new float[10];
        for (int i = 0; i < 10; ++i) {
          div[i] = a[i] / (Math.abs(a[i]) + 1);
        }
        try (Outputs out = fn.callAlloc(Tensor.of(a, 10), Tensor.of(b, 10))) {
          assertClose(div, out.get(0).toFloatArray(), 1e-6);
          assertEquals(DType.BOOL, out.get(1).dtype());
          assertArrayEquals(new long[0], out.get(1).shape());
          assertArrayEquals(new boolean[] {sum < 0}, out.get(1).toBooleanArray());
        }
      }
    }
  }

  /** nn.Sequential(Linear(8, 16), ReLU(), Linear(16, 4)) with the graph's own weights. */
  static float[] mlpReference(Map<String, float[]> w, float[] x, int batch) {
    float[] h = new float[batch * 16];
    for (int r = 0; r < batch; ++r) {
      for (int o = 0; o < 16; ++o) {
        double acc = w.get("fc1_bias")[o];
        for (int i = 0; i < 8; ++i) {
          acc += (double) x[r * 8 + i] * w.get("fc1_weight")[o * 8 + i];
        }
        h[r * 16 + o] = (float) Math.max(0, acc);
      }
    }
    float[] y = new float[batch * 4];
    for (int r = 0; r < batch; ++r) {
      for (int o = 0; o < 4; ++o) {
        double acc = w.get("fc2_bias")[o];
        for (int i = 0; i < 16; ++i) {
          acc += (double) h[r * 16 + i] * w.get("fc2_weight")[o * 16 + i];
        }
        y[r * 4 + o] = (float) acc;
      }
    }
    return y;
  }

  @Test
  void mlpMatchesAJavaReference() throws IOException {
    Map<String, float[]> w = TestSupport.floatConstants(example("mlp.pbtxt"));
    assertEquals(16 * 8, w.get("fc1_weight").length);
    assertEquals(4, w.get("fc2_bias").length);
    try (Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
        Function fn = Function.create(ctx, g, new FunctionOptions().name("mlp_java"))) {
      for (int batch : new int[] {4, 1, 7, 4}) {
        float[] x = randomFloats(batch * 8, batch);
        try (Outputs out = fn.callAlloc(Tensor.of(x, batch, 8))) {
          assertArrayEquals(new long[] {batch, 4}, out.get(0).shape());
          assertClose(mlpReference(w, x, batch), out.get(0).toFloatArray(), 1e-5);
        }
      }
      // The name shows in error messages (explain() prints the graph's name today).
      GuardjitException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              GuardjitException.class, () -> fn.callAlloc(Tensor.of(new float[8], 1, 8),
                  Tensor.of(new float[8], 1, 8)));
      TestSupport.assertMessageMentions(e, "mlp_java");
      assertEquals(1, fn.stats().hits());
    }
  }

  @Test
  void shapeDependentBranchRecompiles() {
    try (Graph g = Graph.fromFile(ctx, example("seed_cat_branch.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      // cat of 3 + 3 elements: size 6 > 2, so z * 2.
      try (Outputs out =
          fn.callAlloc(
              Tensor.of(new float[] {1, 2, 3}, 3), Tensor.of(new float[] {4, 5, 6}, 3))) {
        assertArrayEquals(new float[] {2, 4, 6, 8, 10, 12}, out.get(0).toFloatArray());
      }
      // cat of 1 + 1: size 2, so z + 2.
      try (Outputs out =
          fn.callAlloc(Tensor.of(new float[] {1}, 1), Tensor.of(new float[] {4}, 1))) {
        assertArrayEquals(new float[] {3, 6}, out.get(0).toFloatArray());
      }
      FunctionStats s = fn.stats();
      assertEquals(2, s.misses());
      assertEquals(1, s.recompiles());
      assertEquals(2, s.cacheEntries());
      String guards = fn.dumpGuards();
      assertTrue(guards.contains("entry 0") && guards.contains("entry 1"), guards);
      assertTrue(guards.contains("TENSOR_MATCH"), guards);
      assertTrue(fn.explain().contains("Recompile Reasons"), fn.explain());
    }
  }

  @Test
  void stridedInputsAndOutputs() {
    try (Graph g = Graph.fromFile(ctx, example("seed_cat_add.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      float[] x = {1, 2, 3, 4, 5, 6}; // [2, 3]
      float[] ySource = new float[12]; // [3, 4], viewed transposed as [4, 3]
      for (int i = 0; i < 12; ++i) {
        ySource[i] = 100 + i;
      }
      Tensor y = Tensor.of(ySource, 3, 4).transpose(0, 1);
      assertFalse(y.isContiguous());
      float[] expected = new float[18];
      for (int i = 0; i < 6; ++i) {
        expected[i] = x[i] + 2;
      }
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 3; ++c) {
          expected[6 + r * 3 + c] = ySource[c * 4 + r] + 2;
        }
      }
      float[] yT = new float[12];
      for (int i = 0; i < 12; ++i) {
        yT[i] = expected[6 + i] - 2;
      }
      assertArrayEquals(yT, y.toFloatArray()); // the strided read-back itself
      // Output into a transposed view of a [3, 6] buffer.
      Tensor outBase = Tensor.allocate(DType.FLOAT32, 3, 6);
      Tensor out = outBase.transpose(0, 1);
      fn.call(new Tensor[] {Tensor.of(x, 2, 3), y}, new Tensor[] {out});
      assertClose(expected, out.toFloatArray(), 0);
      float[] raw = outBase.toFloatArray();
      assertEquals(expected[1], raw[6], 0); // out[0][1] lives at base[1][0]
    }
  }

  @Test
  void zeroCopyOverTheCallersByteBuffer() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      // One direct buffer holds both inputs and the output, at offsets.
      ByteBuffer arena = ByteBuffer.allocateDirect(256).order(ByteOrder.nativeOrder());
      for (int i = 0; i < 4; ++i) {
        arena.putFloat(16 + 4 * i, i + 1); // x at byte 16
        arena.putFloat(64 + 4 * i, 10); // b at byte 64
      }
      Tensor x = Tensor.wrap(arena, DType.FLOAT32, new long[] {4}, null, 16);
      Tensor b = Tensor.wrap(arena.position(64), DType.FLOAT32, 4); // from the position
      arena.position(0);
      Tensor y = Tensor.wrap(arena, DType.FLOAT32, new long[] {4}, null, 128);
      fn.call(new Tensor[] {x, b}, new Tensor[] {y});
      for (int i = 0; i < 4; ++i) {
        assertEquals(10f * (i + 1), arena.getFloat(128 + 4 * i)); // written in place
      }
      // The caller changes the input bytes; the next call sees them with no copy.
      arena.putFloat(16, -7);
      fn.call(new Tensor[] {x, b}, new Tensor[] {y});
      assertEquals(-70f, arena.getFloat(128));
    }
  }

  @Test
  void managedOutputFeedsAnotherCall() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g);
        Outputs first =
            fn.callAlloc(Tensor.of(new float[] {1, 2, 3}, 3), Tensor.of(new float[] {2, 2, 2}, 3));
        Outputs second = fn.callAlloc(first.get(0).tensor(), first.get(0).tensor())) {
      assertArrayEquals(new float[] {4, 16, 36}, second.get(0).toFloatArray());
      ByteBuffer view = second.get(0).buffer();
      assertTrue(view.isDirect());
      assertEquals(12, view.capacity());
      assertEquals(16f, view.getFloat(4));
      assertArrayEquals(new long[] {1}, second.get(0).strides());
    }
  }

  @Test
  void otherDtypesRoundTrip() {
    try (GraphBuilder b = new GraphBuilder(ctx, "add")) {
      b.addInput("a").addInput("b");
      b.addNode("add", "aten.add.Tensor", Arg.ref("a"), Arg.ref("b"));
      b.setOutputs("add");
      try (Graph g = b.finish();
          Function fn = Function.create(ctx, g)) {
        try (Outputs o =
            fn.callAlloc(Tensor.of(new double[] {0.1, 1e300}, 2), Tensor.of(new double[] {0.2, 1e300}, 2))) {
          assertEquals(DType.FLOAT64, o.get(0).dtype());
          assertArrayEquals(new double[] {0.1 + 0.2, 2e300}, o.get(0).toDoubleArray());
        }
        try (Outputs o =
            fn.callAlloc(Tensor.of(new int[] {1, -2, 3}, 3), Tensor.of(new int[] {10, 20, 30}, 3))) {
          assertArrayEquals(new int[] {11, 18, 33}, o.get(0).toIntArray());
        }
        try (Outputs o =
            fn.callAlloc(Tensor.of(new long[] {1L << 40}, 1), Tensor.of(new long[] {5}, 1))) {
          assertArrayEquals(new long[] {(1L << 40) + 5}, o.get(0).toLongArray());
        }
        // int32 + float32 promotes to float32, as in PyTorch.
        try (Outputs o =
            fn.callAlloc(Tensor.of(new int[] {1, 2}, 2), Tensor.of(new float[] {0.5f, 0.25f}, 2))) {
          assertEquals(DType.FLOAT32, o.get(0).dtype());
          assertArrayEquals(new float[] {1.5f, 2.25f}, o.get(0).toFloatArray());
        }
        // Empty tensors work too.
        try (Outputs o =
            fn.callAlloc(Tensor.of(new float[0], 0, 3), Tensor.of(new float[0], 0, 3))) {
          assertArrayEquals(new long[] {0, 3}, o.get(0).shape());
          assertEquals(0, o.get(0).toFloatArray().length);
          assertEquals(0, o.get(0).buffer().capacity());
        }
      }
    }
  }

  @Test
  void recompileLimitThenEagerFallback() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn =
            Function.create(
                ctx, g,
                new FunctionOptions().recompileLimit(1).dynamic(DynamicMode.STATIC))) {
      for (int n = 2; n <= 5; ++n) {
        float[] x = randomFloats(n, n);
        try (Outputs o = fn.callAlloc(Tensor.of(x, n), Tensor.of(x, n))) {
          float[] expected = new float[n];
          for (int i = 0; i < n; ++i) {
            expected[i] = x[i] * x[i];
          }
          assertClose(expected, o.get(0).toFloatArray(), 0);
        }
      }
      FunctionStats s = fn.stats();
      assertEquals(1, s.cacheEntries());
      assertEquals(3, s.fallbackCalls());
    }
  }

  @Test
  void dynamicModesShareOneEntry() {
    FunctionOptions[] options = {
      new FunctionOptions().dynamic(DynamicMode.DYNAMIC),
      new FunctionOptions().markDynamic(0, 0).markDynamic(1, 0),
      new FunctionOptions().markDynamic(0, 0, 2, 64).markDynamic(1, 0, 2, 64),
    };
    for (FunctionOptions opt : options) {
      try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
          Function fn = Function.create(ctx, g, opt)) {
        for (int n : new int[] {5, 9, 17, 33}) {
          float[] x = randomFloats(n, n);
          try (Outputs o = fn.callAlloc(Tensor.of(x, n), Tensor.of(x, n))) {
            assertEquals(n, o.get(0).toFloatArray().length);
            assertEquals(x[n - 1] * x[n - 1], o.get(0).toFloatArray()[n - 1]);
          }
        }
        assertEquals(1, fn.stats().cacheEntries(), fn.explain());
        assertEquals(1, fn.stats().compiles());
      }
    }
  }

  @Test
  void precompileMakesTheFirstCallAHit() {
    try (Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      fn.precompile(TensorSpec.of(DType.FLOAT32, 3, 8));
      assertEquals(1, fn.stats().compiles());
      fn.precompile(TensorSpec.of(DType.FLOAT32, 3, 8)); // no-op
      assertEquals(1, fn.stats().compiles());
      try (Outputs o = fn.callAlloc(Tensor.of(randomFloats(24, 3), 3, 8))) {
        assertArrayEquals(new long[] {3, 4}, o.get(0).shape());
      }
      FunctionStats s = fn.stats();
      assertEquals(1, s.hits());
      assertEquals(1, s.compiles());
    }
  }

  @Test
  void callOptionsGuardOnGradMode() {
    try (Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      Tensor x = Tensor.of(new float[] {1, 2}, 2);
      fn.callAlloc(x, x).close();
      fn.callAlloc(CallOptions.DEFAULT.withGradMode(false), x, x).close();
      fn.callAlloc(CallOptions.DEFAULT.withRequiresGrad(true, false), x, x).close();
      fn.callAlloc(CallOptions.DEFAULT.withTimeout(java.time.Duration.ofSeconds(30)), x, x).close();
      FunctionStats s = fn.stats();
      assertEquals(4, s.calls());
      assertEquals(3, s.compiles(), fn.explain()); // grad mode and requires_grad are guarded
      assertTrue(fn.dumpGuards().contains("grad_mode=False"), fn.dumpGuards());
      assertNotEquals(0, s.hits());
    }
  }
}
