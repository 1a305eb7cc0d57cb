package dev.guardjit;

import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Tensors over raw addresses ({@link Tensor#ofPointer}): CUDA memory reaches the library as
 * kDLCUDA DLTensors (without a driver: UNAVAILABLE naming the input, nothing written), native
 * host memory computes like a buffer, and bad pointers are refused before the call.
 */
class DeviceTensorTest {
  private static boolean cudaAvailable(Context ctx) {
    try {
      ctx.deviceMemoryStats(Device.cuda(0));
      return true;
    } catch (GuardjitException e) {
      return false;
    }
  }

  @Test
  void cudaTensorsReachTheLibrary() {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      Assumptions.assumeFalse(cudaAvailable(ctx), "a CUDA device is present");
      Tensor host = Tensor.of(TestSupport.randomFloats(32, 1), 4, 8);
      Tensor out = Tensor.of(new float[32], 4, 8);
      long address = Native.bufferAddress(host.buffer());
      Tensor x = Tensor.ofPointer(address, Device.cuda(0), DType.FLOAT32, new long[] {4, 8}, null);
      Tensor y =
          Tensor.ofPointer(
              Native.bufferAddress(out.buffer()),
              Device.cuda(0),
              DType.FLOAT32,
              new long[] {4, 8},
              null);
      assertEquals(Device.cuda(0), x.device());
      assertEquals(address, x.address());
      assertTrue(x.toString().contains("cuda:0"), x.toString());
      GuardjitException e = assertThrows(GuardjitException.class, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {y}));
      assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.getMessage());
      assertTrue(
          e.getMessage().contains("'x'") || e.getMessage().contains("input 0"), e.getMessage());
      assertArrayEquals(new float[32], out.toFloatArray());
      e = assertThrows(GuardjitException.class, () -> fn.callAlloc(x, x));
      assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.getMessage());
      // Its bytes are not Java's.
      assertThrows(IllegalStateException.class, x::toFloatArray);
      assertThrows(IllegalStateException.class, x::buffer);
    }
  }

  @Test
  void badPointersAreRefusedBeforeTheCall() {
    long[] shape = {4, 8};
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.ofPointer(0, Device.cuda(0), DType.FLOAT32, shape, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.ofPointer(4098, Device.cuda(0), DType.FLOAT64, shape, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.ofPointer(4096, Device.cuda(-1), DType.FLOAT32, shape, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.ofPointer(4096, new Device(9, 0), DType.FLOAT32, shape, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> Tensor.ofPointer(4096, Device.cuda(0), DType.FLOAT32, shape, new long[] {-8, 1}));
    // An empty tensor may have no address.
    assertEquals(0, Tensor.ofPointer(0, Device.cuda(0), DType.FLOAT32, new long[] {0, 8}, null).numel());
  }

  @Test
  void nativeHostMemoryComputesLikeABuffer() {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      try (Outputs first = fn.callAlloc(Tensor.of(new float[] {1, 2}, 2), Tensor.of(new float[] {3, 4}, 2))) {
        ManagedTensor m = first.get(0);
        assertEquals(Device.cpu(), m.device());
        Tensor raw = Tensor.ofPointer(m.address(), Device.cpu(), DType.FLOAT32, new long[] {2}, null);
        try (Outputs second = fn.callAlloc(raw, raw)) {
          assertArrayEquals(new float[] {9, 64}, second.get(0).toFloatArray());
        }
      }
    }
  }

  @Test
  void viewsOfALibraryCudaOutputStayInsideIt() {
    // A CUDA output as callAlloc hands it out (float32[4, 8] at a device address): views are
    // checked against its 128 bytes, as views of a host output are against its buffer.
    Tensor out =
        Tensor.ofManagedDevice(
            1 << 20, Device.cuda(0), null, DType.FLOAT32, new long[] {4, 8}, null);
    assertEquals(8, out.view(new long[] {8}, null, 96).numel());
    assertEquals(4, out.transpose(0, 1).shape()[1]);
    assertThrows(IllegalArgumentException.class, () -> out.view(new long[] {1 << 20}, null, 0));
    assertThrows(IllegalArgumentException.class, () -> out.view(new long[] {8}, null, 100));
    assertThrows(
        IllegalArgumentException.class, () -> out.view(new long[] {4, 8}, new long[] {9, 1}, 0));
    // Memory the caller vouches for (ofPointer) has no known size.
    Tensor lent =
        Tensor.ofPointer(1 << 20, Device.cuda(0), DType.FLOAT32, new long[] {4, 8}, null);
    assertEquals(1 << 20, lent.view(new long[] {1 << 20}, null, 0).numel());
  }
}
