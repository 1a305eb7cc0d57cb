package dev.guardjit.examples;

import dev.guardjit.Arg;
import dev.guardjit.Context;
import dev.guardjit.Function;
import dev.guardjit.Graph;
import dev.guardjit.GraphBuilder;
import dev.guardjit.Guardjit;
import dev.guardjit.GuardjitException;
import dev.guardjit.Outputs;
import dev.guardjit.Tensor;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The Java binding in one page: load an example graph, call it on two batch sizes, read the
 * cache's counters, then build relu(a + b) with the builder.
 *
 * <p>Usage: {@code java -Djava.library.path=build/cmake -cp ... dev.guardjit.examples.HelloGuardjit
 * examples/mlp.pbtxt}
 */
public final class HelloGuardjit {
  private HelloGuardjit() {}

  public static void main(String[] args) {
    Path graphFile = Path.of(args.length > 0 ? args[0] : "examples/mlp.pbtxt");
    System.out.println("guardjit " + Guardjit.version());
    try (Context ctx = new Context();
        Graph graph = Graph.fromFile(ctx, graphFile);
        Function mlp = Function.create(ctx, graph)) {
      System.out.println(graphFile.getFileName() + ": inputs " + graph.inputNames()
          + ", outputs " + graph.outputNames());
      for (int batch : new int[] {4, 2, 4}) {
        float[] x = new float[batch * 8];
        for (int i = 0; i < x.length; ++i) {
          x[i] = (i % 8) / 8f - 0.5f;
        }
        try (Outputs out = mlp.callAlloc(Tensor.of(x, batch, 8))) {
          float[] y = out.get(0).toFloatArray();
          System.out.println("mlp(x[" + batch + ", 8]) -> " + Arrays.toString(out.get(0).shape())
              + ", first row " + Arrays.toString(Arrays.copyOf(y, 4)));
        }
      }
      System.out.println(mlp.stats());

      try (GraphBuilder b = new GraphBuilder(ctx, "hello")) {
        b.addInput("a").addInput("b");
        b.addNode("add", "aten.add.Tensor", Arg.ref("a"), Arg.ref("b"));
        b.addNode("relu", "aten.relu.default", Arg.ref("add"));
        b.setOutputs("relu");
        try (Graph hello = b.finish();
            Function fn = Function.create(ctx, hello);
            Outputs out =
                fn.callAlloc(
                    Tensor.of(new float[] {1, -2, 3, -4, 5, -6}, 2, 3),
                    Tensor.of(new float[] {0.5f, 0.5f, 10}, 3))) {
          System.out.println("relu(a + b) = " + Arrays.toString(out.get(0).toFloatArray()));
        }
      }
    } catch (GuardjitException e) {
      System.err.println("guardjit failed (" + e.code() + "): " + e.getMessage());
      System.exit(1);
    }
  }
}
