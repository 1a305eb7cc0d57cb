package dev.guardjit;

import static dev.guardjit.TestSupport.assertClose;
import static dev.guardjit.TestSupport.assertMessageMentions;
import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GraphTest {
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
  void versionIsTheHeaders() {
    assertEquals(0, Guardjit.apiVersionMajor());
    assertTrue(Guardjit.apiVersionMinor() >= 12, "C API 0.12+ expected");
    assertTrue(Guardjit.version().matches("\\d+\\.\\d+\\.\\d+"), Guardjit.version());
  }

  @Test
  void inputsAndOutputsDeclaredByTheFile() {
    String text =
        "name: \"meta\"\n"
            + "placeholders { name: \"x\" meta { dtype: FLOAT32 dims { symbol: \"batch\" }"
            + " dims { size: 3 } dims {} } }\n"
            + "placeholders { name: \"y\" }\n"
            + "outputs { ref: \"x\" }\n"
            + "output_meta { dtype: INT64 unknown_rank: true }\n";
    try (Graph g = Graph.fromText(ctx, text)) {
      assertEquals(
          List.of(
              new TensorInfo(
                  "x",
                  DType.FLOAT32,
                  List.of(
                      new TensorInfo.Dim(-1, "batch"),
                      new TensorInfo.Dim(3, null),
                      new TensorInfo.Dim(-1, null))),
              new TensorInfo("y", null, null)),
          g.inputs());
      assertEquals(List.of(new TensorInfo("x", DType.INT64, null)), g.outputs());
    }
  }

  @Test
  void everyExampleLoadsWithItsPlaceholders() throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(TestSupport.examples())) {
      files = s.filter(p -> p.toString().endsWith(".pbtxt")).sorted().toList();
    }
    assertTrue(files.size() >= 5, "examples: " + files);
    Pattern placeholder = Pattern.compile("(?m)^placeholders \\{ name: \"(\\w+)\"");
    for (Path file : files) {
      try (Graph g = Graph.fromFile(ctx, file)) {
        Matcher m = placeholder.matcher(Files.readString(file));
        List<String> expected = new java.util.ArrayList<>();
        while (m.find()) {
          expected.add(m.group(1));
        }
        assertEquals(expected, g.inputNames(), file.toString());
        assertTrue(g.numOutputs() >= 1, file.toString());
        assertTrue(g.toTabular().contains("placeholder"), g.toTabular());
      }
    }
  }

  @Test
  void namesOfATwoOutputGraph() {
    try (Graph g = Graph.fromFile(ctx, example("seed_abs_div.pbtxt"))) {
      assertEquals(List.of("a", "b"), g.inputNames());
      assertEquals(List.of("div", "lt"), g.outputNames());
      String tab = g.toTabular();
      assertTrue(tab.contains("aten.abs.default") && tab.contains("aten.lt.Scalar"), tab);
    }
  }

  @Test
  void fromTextRunsLikeFromFile() throws IOException {
    String text = Files.readString(example("seed_cat_add.pbtxt"));
    try (Graph g = Graph.fromText(ctx, text);
        Function fn = Function.create(ctx, g);
        Outputs out =
            fn.callAlloc(
                Tensor.of(new float[] {1, 2}, 1, 2), Tensor.of(new float[] {3, 4, 5, 6}, 2, 2))) {
      assertArrayEquals(new long[] {3, 2}, out.get(0).shape());
      assertArrayEquals(new float[] {3, 4, 5, 6, 7, 8}, out.get(0).toFloatArray());
    }
  }

  /** neg(relu(x)) as binary guardjit.proto.Graph, written field by field. */
  static byte[] reluNegProto() {
    TestSupport.Proto meta = new TestSupport.Proto().varint(1, 1); // FLOAT32
    return new TestSupport.Proto()
        .string(1, "relu_neg")
        .message(2, new TestSupport.Proto().string(1, "x").message(2, meta))
        .message(
            4,
            new TestSupport.Proto()
                .string(1, "relu")
                .string(2, "aten.relu.default")
                .message(3, new TestSupport.Proto().string(1, "x")))
        .message(
            4,
            new TestSupport.Proto()
                .string(1, "neg")
                .string(2, "aten.neg.default")
                .message(3, new TestSupport.Proto().string(1, "relu")))
        .message(5, new TestSupport.Proto().string(1, "neg"))
        .toBytes();
  }

  @Test
  void fromBytesLoadsBinaryProtobuf() {
    try (Graph g = Graph.fromBytes(ctx, reluNegProto());
        Function fn = Function.create(ctx, g);
        Outputs out = fn.callAlloc(Tensor.of(new float[] {-1, 2, -3, 4}, 4))) {
      assertEquals(List.of("x"), g.inputNames());
      assertEquals(List.of("neg"), g.outputNames());
      assertArrayEquals(new float[] {-0f, -2, -0f, -4}, out.get(0).toFloatArray());
    }
  }

  @Test
  void malformedBytesAreInvalidArgument() {
    GuardjitException e =
        assertThrows(
            GuardjitException.class, () -> Graph.fromBytes(ctx, new byte[] {(byte) 0xff, 1, 2}));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    assertMessageMentions(e);
  }

  static String externalGraph(String file, long length) {
    return "name: \"ext\"\n"
        + "placeholders { name: \"x\" meta { dtype: FLOAT32 sizes: 3 } }\n"
        + "constants { name: \"c\" dtype: FLOAT32 sizes: 3 external { path: \"" + file
        + "\" offset: 0 length: " + length + " } }\n"
        + "nodes { name: \"add\" target: \"aten.add.Tensor\" args { ref: \"x\" } args { ref: \"c\" } }\n"
        + "outputs { ref: \"add\" }\n";
  }

  @Test
  void externalDataResolvesAgainstTheGivenDirectory(@TempDir Path dir) throws IOException {
    ByteBuffer data = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
    data.putFloat(10).putFloat(20).putFloat(30);
    Files.write(dir.resolve("c.bin"), data.array());
    try (Graph g = Graph.fromText(ctx, externalGraph("c.bin", 12), dir);
        Function fn = Function.create(ctx, g);
        Outputs out = fn.callAlloc(Tensor.of(new float[] {1, 2, 3}, 3))) {
      assertArrayEquals(new float[] {11, 22, 33}, out.get(0).toFloatArray());
    }
    // fromFile resolves against the graph file's directory.
    Path pbtxt = dir.resolve("ext.pbtxt");
    Files.writeString(pbtxt, externalGraph("c.bin", 12));
    try (Graph g = Graph.fromFile(ctx, pbtxt)) {
      assertEquals(List.of("x"), g.inputNames());
    }
    // Missing file: NOT_FOUND; short file: DATA_LOSS; both name the file.
    GuardjitException missing =
        assertThrows(
            GuardjitException.class, () -> Graph.fromText(ctx, externalGraph("nope.bin", 12), dir));
    assertEquals(ErrorCode.NOT_FOUND, missing.code());
    assertMessageMentions(missing, "nope.bin");
    Files.write(dir.resolve("short.bin"), new byte[4]);
    GuardjitException shortFile =
        assertThrows(
            GuardjitException.class,
            () -> Graph.fromText(ctx, externalGraph("short.bin", 12), dir));
    assertEquals(ErrorCode.DATA_LOSS, shortFile.code());
    assertMessageMentions(shortFile, "short.bin");
  }

  @Test
  void compileReportForCpuWithEmulation() {
    try (Graph g = Graph.fromFile(ctx, example("seed_abs_div.pbtxt"))) {
      CompileReport r =
          g.compileReport(
              "cpu", true, 7, TensorSpec.of(DType.FLOAT32, 10), TensorSpec.of(DType.FLOAT32, 10));
      assertTrue(r.text().length() > 100, r.text());
      assertTrue(r.checked());
      assertEquals(ErrorCode.OK, r.runCode());
      assertTrue(r.withinTolerance(), "max abs error " + r.maxAbsError());
      assertTrue(r.maxAbsError() >= 0 && r.maxAbsError() < 1e-5);

      GuardjitException e =
          assertThrows(
              GuardjitException.class,
              () -> g.compileReport("tpu:v9", false, 0, TensorSpec.of(DType.FLOAT32, 10),
                  TensorSpec.of(DType.FLOAT32, 10)));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
      assertMessageMentions(e, "tpu:v9");
    }
  }

  @Test
  void graphCanBeClosedBeforeItsFunction() {
    Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
    try (Function fn = Function.create(ctx, g)) {
      g.close();
      assertTrue(g.isClosed());
      assertThrows(IllegalStateException.class, g::toTabular);
      try (Outputs out =
          fn.callAlloc(Tensor.of(new float[] {2, 3}, 2), Tensor.of(new float[] {4, 5}, 2))) {
        assertClose(new float[] {8, 15}, out.get(0).toFloatArray(), 0);
      }
      assertFalse(fn.isClosed());
    }
  }
}
