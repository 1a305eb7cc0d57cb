package dev.guardjit;

import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class LoggingTest {
  @Test
  void recompileReasonsReachTheHandler() {
    List<String> lines = new CopyOnWriteArrayList<>();
    Guardjit.setLogHandler((topic, message) -> lines.add(topic + ": " + message));
    Guardjit.setLogTopics("recompiles");
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g, new FunctionOptions().dynamic(DynamicMode.STATIC))) {
      Tensor a = Tensor.of(new float[] {1, 2}, 2);
      Tensor b = Tensor.of(new float[] {1, 2, 3}, 3);
      fn.callAlloc(a, a).close();
      fn.callAlloc(b, b).close(); // a recompile, with its reason
    } finally {
      Guardjit.setLogTopics("");
      Guardjit.setLogHandler(null);
    }
    assertTrue(
        lines.stream().anyMatch(l -> l.startsWith("recompiles: ") && l.contains("size")),
        lines.toString());
  }

  @Test
  void aThrowingHandlerDoesNotBreakCalls() {
    Guardjit.setLogHandler(
        (topic, message) -> {
          throw new RuntimeException("handler failure");
        });
    Guardjit.setLogTopics("all");
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g);
        Outputs out =
            fn.callAlloc(Tensor.of(new float[] {3}, 1), Tensor.of(new float[] {4}, 1))) {
      assertTrue(out.get(0).toFloatArray()[0] == 12f);
    } finally {
      Guardjit.setLogTopics("");
      Guardjit.setLogHandler(null);
    }
  }
}
