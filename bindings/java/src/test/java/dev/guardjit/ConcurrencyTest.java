package dev.guardjit;

import static dev.guardjit.TestSupport.assertClose;
import static dev.guardjit.TestSupport.example;
import static dev.guardjit.TestSupport.randomFloats;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** gj_function_call may run concurrently on one function: 8 threads share one Function. */
class ConcurrencyTest {
  static final int THREADS = 8;
  static final int CALLS = 200;

  @Test
  void eightThreadsCallOneFunction() throws Exception {
    Map<String, float[]> w = TestSupport.floatConstants(example("mlp.pbtxt"));
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Integer>> results = new ArrayList<>();
      try {
        for (int t = 0; t < THREADS; ++t) {
          final int thread = t;
          results.add(
              pool.submit(
                  () -> {
                    // Each thread its own batch sizes (1..4) and data, half through
                    // caller outputs and half through library outputs.
                    int batch = 1 + thread % 4;
                    float[] x = randomFloats(batch * 8, 100 + thread);
                    float[] expected = FunctionTest.mlpReference(w, x, batch);
                    Tensor in = Tensor.of(x, batch, 8);
                    Tensor out = Tensor.allocate(DType.FLOAT32, batch, 4);
                    start.await();
                    for (int i = 0; i < CALLS; ++i) {
                      if (i % 2 == 0) {
                        fn.call(new Tensor[] {in}, new Tensor[] {out});
                        assertClose(expected, out.toFloatArray(), 1e-5);
                      } else {
                        try (Outputs o = fn.callAlloc(in)) {
                          assertClose(expected, o.get(0).toFloatArray(), 1e-5);
                        }
                      }
                    }
                    return CALLS;
                  }));
        }
        start.countDown();
        int total = 0;
        for (Future<Integer> f : results) {
          total += f.get();
        }
        assertEquals(THREADS * CALLS, total);
      } finally {
        pool.shutdownNow();
      }
      FunctionStats s = fn.stats();
      assertEquals(THREADS * CALLS, s.calls());
      assertEquals(s.calls(), s.hits() + s.misses());
      assertEquals(0, ctx.memoryStats().bytesInUse());
    }
  }
}
