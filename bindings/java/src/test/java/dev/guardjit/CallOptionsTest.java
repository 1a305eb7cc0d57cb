package dev.guardjit;

import static dev.guardjit.TestSupport.assertClose;
import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class CallOptionsTest {
  @Test
  void streamAndSynchronizeReachTheCallOptions() {
    // All defaults: the glue passes NULL options.
    assertArrayEquals(new long[] {0, 0, 0, 0}, Native.callOptionsPassed(0, 0));
    long[] passed = Native.callOptionsPassed(0x1234_5678L, 1);
    assertTrue(passed[1] <= passed[0], "synchronize ends at " + passed[1]
        + ", past struct_size " + passed[0] + ": the library would not read it");
    assertEquals(0x1234_5678L, passed[2]);
    assertEquals(1, passed[3]);
  }

  /**
   * guardjit.h: a call's stream and synchronize are "Ignored for CPU calls". An address that
   * is no CUstream (a direct buffer's) must leave CPU calls as they were; were the library to
   * use it as a stream, the call would fail or crash.
   */
  @Test
  void cpuCallsIgnoreTheStream() {
    ByteBuffer notAStream = ByteBuffer.allocateDirect(64);
    long address = Native.bufferAddress(notAStream);
    assertNotEquals(0, address);
    CallOptions options = CallOptions.DEFAULT.withStream(address).withSynchronize(true);
    float[] x = {1, 2, 3, 4};
    float[] b = {2, 2, -1, -1};
    float[] expected = {2, 4, -3, -4};
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      try (Outputs out = fn.callAlloc(options, Tensor.of(x, 4), Tensor.of(b, 4))) {
        assertClose(expected, out.get(0).toFloatArray(), 0);
      }
      Tensor y = Tensor.allocate(DType.FLOAT32, 4);
      fn.call(new Tensor[] {Tensor.of(x, 4), Tensor.of(b, 4)}, new Tensor[] {y}, options);
      assertClose(expected, y.toFloatArray(), 0);
    }
    java.lang.ref.Reference.reachabilityFence(notAStream);
  }
}
