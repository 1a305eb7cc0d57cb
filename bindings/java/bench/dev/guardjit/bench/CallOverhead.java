package dev.guardjit.bench;

import dev.guardjit.Context;
import dev.guardjit.DType;
import dev.guardjit.Function;
import dev.guardjit.Graph;
import dev.guardjit.Outputs;
import dev.guardjit.Tensor;
import java.nio.file.Path;

/**
 * The Java side of the call-overhead comparison (bench/run.sh): cached {@link Function#call}
 * into caller tensors and {@link Function#callAlloc} + close, on seed_mul with float32[N]
 * inputs, after a JIT warm-up. Usage: CallOverhead GRAPH [N] [ITERATIONS]
 */
public final class CallOverhead {
  private CallOverhead() {}

  public static void main(String[] args) {
    Path graph = Path.of(args[0]);
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    long iters = args.length > 2 ? Long.parseLong(args[2]) : 1_000_000;
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, graph);
        Function fn = Function.create(ctx, g)) {
      Tensor x = Tensor.allocate(DType.FLOAT32, n);
      Tensor b = Tensor.allocate(DType.FLOAT32, n);
      Tensor y = Tensor.allocate(DType.FLOAT32, n);
      Tensor[] inputs = {x, b};
      Tensor[] outputs = {y};
      for (int round = 0; round < 3; ++round) {
        for (long i = 0; i < iters / 10; ++i) {
          fn.call(inputs, outputs);
        }
        long t0 = System.nanoTime();
        for (long i = 0; i < iters; ++i) {
          fn.call(inputs, outputs);
        }
        System.out.printf(
            "Java call        float32[%d]: %.0f ns/call%n", n, (System.nanoTime() - t0) / (double) iters);
        t0 = System.nanoTime();
        for (long i = 0; i < iters; ++i) {
          try (Outputs out = fn.callAlloc(x, b)) {
            if (out.size() != 1) {
              throw new AssertionError();
            }
          }
        }
        System.out.printf(
            "Java call_alloc  float32[%d]: %.0f ns/call%n", n, (System.nanoTime() - t0) / (double) iters);
      }
    }
  }
}
