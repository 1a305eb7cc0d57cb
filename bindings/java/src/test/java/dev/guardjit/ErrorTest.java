package dev.guardjit;

import static dev.guardjit.TestSupport.assertMessageMentions;
import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every failure surfaces the C error's code and message, and leaves nothing written. */
class ErrorTest {
  static Context ctx;
  static Graph mul;
  static Function fn;

  @BeforeAll
  static void setUp() {
    ctx = new Context();
    mul = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
    fn = Function.create(ctx, mul);
  }

  @AfterAll
  static void tearDown() {
    fn.close();
    mul.close();
    ctx.close();
  }

  static GuardjitException expect(ErrorCode code, Executable call, String... words) {
    GuardjitException e = assertThrows(GuardjitException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    assertEquals(code.value(), e.rawCode());
    assertMessageMentions(e, words);
    assertTrue(e.toString().contains(code.name()));
    return e;
  }

  static Tensor floats(long... shape) {
    return Tensor.allocate(DType.FLOAT32, shape);
  }

  @Test
  void loading() {
    expect(
        ErrorCode.NOT_FOUND,
        () -> Graph.fromFile(ctx, Path.of("/nonexistent/graph.pbtxt")),
        "/nonexistent/graph.pbtxt");
    expect(ErrorCode.INVALID_ARGUMENT, () -> Graph.fromText(ctx, "name: \"g\" nodes {"));
    expect(
        ErrorCode.UNIMPLEMENTED,
        () ->
            Graph.fromText(
                ctx,
                "name: \"g\" placeholders { name: \"x\" }"
                    + " nodes { name: \"y\" target: \"aten.frobnicate.default\" args { ref: \"x\" } }"
                    + " outputs { ref: \"y\" }"),
        "aten.frobnicate.default");
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () ->
            Graph.fromText(
                ctx,
                "name: \"g\" placeholders { name: \"x\" }"
                    + " nodes { name: \"y\" target: \"aten.relu.default\" args { ref: \"nothere\" } }"
                    + " outputs { ref: \"y\" }"),
        "nothere");
  }

  @Test
  void wrongInputs() {
    Tensor y = floats(3);
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () -> fn.call(new Tensor[] {floats(3)}, new Tensor[] {y}),
        "2 inputs");
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () -> fn.callAlloc(floats(3), floats(4)),
        "aten.mul.Tensor");
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () -> fn.callAlloc(floats(3), floats(3), floats(3)),
        "2 inputs");
  }

  @Test
  void wrongOutputsWriteNothing() {
    Tensor x = Tensor.of(new float[] {1, 2, 3}, 3);
    Tensor y = Tensor.of(new float[] {7, 7, 7, 7}, 4);
    expect(ErrorCode.INVALID_ARGUMENT, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {y}), "output");
    assertArrayEquals(new float[] {7, 7, 7, 7}, y.toFloatArray());
    Tensor wrongType = Tensor.of(new int[] {7, 7, 7}, 3);
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () -> fn.call(new Tensor[] {x, x}, new Tensor[] {wrongType}),
        "output");
    expect(
        ErrorCode.INVALID_ARGUMENT,
        () -> fn.call(new Tensor[] {x, x}, new Tensor[] {}),
        "output");
  }

  @Test
  void misalignedData() {
    ByteBuffer buf = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    Tensor odd = Tensor.wrap(buf, DType.FLOAT32, new long[] {3}, null, 1);
    expect(ErrorCode.INVALID_ARGUMENT, () -> fn.callAlloc(odd, odd), "align");
  }

  @Test
  void sizesPastInt64AreOutOfRange() {
    TensorSpec huge = TensorSpec.of(DType.FLOAT32, 1L << 62, 8);
    expect(ErrorCode.OUT_OF_RANGE, () -> fn.precompile(huge, huge));
  }

  @Test
  void precompilePastTheRecompileLimit() {
    try (Function limited =
        Function.create(
            ctx, mul, new FunctionOptions().recompileLimit(1).dynamic(DynamicMode.STATIC))) {
      limited.precompile(TensorSpec.of(DType.FLOAT32, 3), TensorSpec.of(DType.FLOAT32, 3));
      expect(
          ErrorCode.FAILED_PRECONDITION,
          () ->
              limited.precompile(
                  TensorSpec.of(DType.FLOAT32, 4), TensorSpec.of(DType.FLOAT32, 4)));
    }
  }

  @Test
  void cancelledCallWritesNothing() {
    CancelFlag flag = new CancelFlag();
    flag.cancel();
    assertTrue(flag.isCancelled());
    Tensor x = Tensor.of(new float[] {1, 2, 3}, 3);
    Tensor y = Tensor.of(new float[] {7, 7, 7}, 3);
    CallOptions options = CallOptions.DEFAULT.withCancelFlag(flag);
    expect(ErrorCode.CANCELLED, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {y}, options));
    assertArrayEquals(new float[] {7, 7, 7}, y.toFloatArray());
    expect(ErrorCode.CANCELLED, () -> fn.callAlloc(options, x, x));
    flag.reset();
    fn.call(new Tensor[] {x, x}, new Tensor[] {y}, options);
    assertArrayEquals(new float[] {1, 4, 9}, y.toFloatArray());
  }

  @Test
  void timeoutIsDeadlineExceeded() {
    // A miss compiles inside the call (tens of ms), far past a 1 us limit.
    try (Graph g = Graph.fromFile(ctx, example("attention.pbtxt"));
        Function attention = Function.create(ctx, g)) {
      Tensor x = Tensor.allocate(DType.FLOAT32, 2, 4, 8);
      Tensor out = Tensor.of(new float[64], 2, 4, 8);
      CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofNanos(1000));
      expect(
          ErrorCode.DEADLINE_EXCEEDED,
          () -> attention.call(new Tensor[] {x}, new Tensor[] {out}, options));
      assertArrayEquals(new float[64], out.toFloatArray());
    }
  }

  @Test
  void javaSideMisuseIsNotAGuardjitException() {
    // Too small a buffer for the shape, heap buffers, NUL in names, read-only outputs.
    ByteBuffer small = ByteBuffer.allocateDirect(8);
    assertThrows(IllegalArgumentException.class, () -> Tensor.wrap(small, DType.FLOAT32, 3));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.wrap(ByteBuffer.allocate(64), DType.FLOAT32, 3));
    assertThrows(IllegalArgumentException.class, () -> Tensor.of(new float[4], 5));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.allocate(DType.FLOAT32, 4).view(new long[] {4}, new long[] {2}, 0));
    try (GraphBuilder b = new GraphBuilder(ctx, "nul")) {
      assertThrows(IllegalArgumentException.class, () -> b.addInput("a\0b"));
      b.addInput("a"); // still usable
    }
    Tensor x = Tensor.of(new float[] {1, 2, 3}, 3);
    ByteBuffer ro = ByteBuffer.allocateDirect(12).asReadOnlyBuffer();
    Tensor readOnly = Tensor.wrap(ro, DType.FLOAT32, 3);
    assertThrows(
        IllegalArgumentException.class, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {readOnly}));
    // A read-only buffer is a fine input.
    try (Outputs o = fn.callAlloc(readOnly, x)) {
      assertArrayEquals(new float[] {0, 0, 0}, o.get(0).toFloatArray());
    }
  }

  @Test
  void codesMirrorTheHeader() {
    assertEquals(17, ErrorCode.values().length);
    for (ErrorCode c : ErrorCode.values()) {
      assertEquals(c, ErrorCode.fromValue(c.value()));
    }
    assertEquals(3, ErrorCode.INVALID_ARGUMENT.value());
    assertEquals(16, ErrorCode.UNAUTHENTICATED.value());
    assertEquals(ErrorCode.UNKNOWN, ErrorCode.fromValue(99));
  }
}
