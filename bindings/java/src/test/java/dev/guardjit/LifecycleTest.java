package dev.guardjit;

import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Handles are freed exactly once, and a closed handle throws instead of crashing. */
class LifecycleTest {
  static Tensor floats(float... v) {
    return Tensor.of(v, v.length);
  }

  @Test
  void closingTwiceIsSafe() {
    Context ctx = new Context();
    Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
    Function fn = Function.create(ctx, g);
    Outputs out = fn.callAlloc(floats(1, 2), floats(3, 4));
    GraphBuilder b = new GraphBuilder(ctx, "b");
    for (int i = 0; i < 2; ++i) {
      out.close();
      out.get(0).close();
      b.close();
      fn.close();
      g.close();
      ctx.close();
    }
    assertTrue(ctx.isClosed() && g.isClosed() && fn.isClosed() && b.isClosed());
    assertTrue(out.get(0).isClosed());
  }

  @Test
  void useAfterCloseThrowsIllegalState() {
    Context ctx = new Context();
    Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
    Function fn = Function.create(ctx, g);
    Tensor x = floats(1, 2);
    Outputs out = fn.callAlloc(x, x);
    ManagedTensor m = out.get(0);
    Tensor view = m.tensor();
    m.close();
    assertThrows(IllegalStateException.class, m::toFloatArray);
    assertThrows(IllegalStateException.class, m::buffer);
    assertThrows(IllegalStateException.class, m::tensor);
    assertThrows(IllegalStateException.class, view::toFloatArray);
    assertThrows(IllegalStateException.class, view::buffer);
    assertThrows(IllegalStateException.class, () -> fn.callAlloc(view, x)); // as an input
    assertThrows(
        IllegalStateException.class, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {view}));
    assertArrayEquals(new long[] {2}, m.shape()); // metadata stays readable

    fn.close();
    assertThrows(IllegalStateException.class, () -> fn.callAlloc(x, x));
    assertThrows(IllegalStateException.class, () -> fn.call(new Tensor[] {x, x}, new Tensor[] {x}));
    assertThrows(IllegalStateException.class, fn::stats);
    assertThrows(IllegalStateException.class, fn::explain);
    assertThrows(IllegalStateException.class, fn::dumpGuards);
    assertThrows(
        IllegalStateException.class, () -> fn.precompile(x.spec(), x.spec()));

    g.close();
    assertThrows(IllegalStateException.class, g::toTabular);
    assertThrows(IllegalStateException.class, () -> Function.create(ctx, g));
    assertThrows(IllegalStateException.class, () -> g.compileReport("cpu", false, 0));

    try (GraphBuilder b = new GraphBuilder(ctx, "once")) {
      b.addInput("a").setOutputs("a");
      b.finish().close();
      assertThrows(IllegalStateException.class, () -> b.addInput("c"));
      assertThrows(IllegalStateException.class, b::finish);
    }

    ctx.close();
    assertThrows(IllegalStateException.class, ctx::memoryStats);
    assertThrows(IllegalStateException.class, ctx::compileCacheStats);
    assertThrows(IllegalStateException.class, ctx::releaseCachedMemory);
    assertThrows(
        IllegalStateException.class, () -> Graph.fromFile(ctx, example("seed_mul.pbtxt")));
    assertThrows(IllegalStateException.class, () -> new GraphBuilder(ctx, "late"));
  }

  @Test
  void aContextOutlivesItsChildren() {
    Context ctx = new Context();
    Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
    Function fn = Function.create(ctx, g);
    ctx.close(); // deferred: the graph and function still hold it
    assertTrue(ctx.isClosed());
    g.close();
    try (Outputs out = fn.callAlloc(floats(2, 3), floats(4, 5))) {
      assertArrayEquals(new float[] {8, 15}, out.get(0).toFloatArray());
    }
    fn.close(); // now the context is destroyed too
  }

  @Test
  void deviceMemoryStatsOfTheHostAreTheContexts() {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      Tensor x = Tensor.of(TestSupport.randomFloats(16 * 8, 3), 16, 8);
      try (Outputs out = fn.callAlloc(x)) {
        MemoryStats host = ctx.deviceMemoryStats(Device.cpu());
        assertEquals(ctx.memoryStats(), host);
        assertTrue(host.bytesInUse() >= 16 * 4 * 4, host.toString());
      }
      ctx.releaseCachedDeviceMemory(Device.cpu());
      MemoryStats after = ctx.deviceMemoryStats(Device.cpu());
      assertEquals(0, after.bytesInUse() + after.bytesCached(), after.toString());
      // A CUDA device: its allocator's counters where a driver and device exist, else UNAVAILABLE
      // naming the device.
      try {
        MemoryStats cuda = ctx.deviceMemoryStats(Device.cuda(0));
        assertEquals(0, cuda.compiledModules(), cuda.toString());
      } catch (GuardjitException e) {
        assertEquals(ErrorCode.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("CUDA device 0"), e.getMessage());
      }
      GuardjitException negative =
          assertThrows(GuardjitException.class, () -> ctx.deviceMemoryStats(Device.cuda(-1)));
      assertEquals(ErrorCode.INVALID_ARGUMENT, negative.code());
      assertTrue(negative.getMessage().contains("device id -1 is negative"), negative.getMessage());
    }
  }

  @Test
  void libraryMemoryReturnsAfterManyCalls() {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      Tensor x = Tensor.of(TestSupport.randomFloats(64 * 8, 1), 64, 8);
      fn.callAlloc(x).close(); // compile
      MemoryStats before = ctx.memoryStats();
      assertEquals(0, before.bytesInUse(), before.toString());
      for (int i = 0; i < 2000; ++i) {
        try (Outputs out = fn.callAlloc(x)) {
          assertEquals(64 * 4, out.get(0).numel());
        }
      }
      MemoryStats after = ctx.memoryStats();
      assertEquals(0, after.bytesInUse(), after.toString());
      // The caching allocator served the calls from its cache.
      assertTrue(after.systemAllocations() - before.systemAllocations() < 10, after.toString());
      assertTrue(after.cacheHits() - before.cacheHits() >= 2000, after.toString());
      assertEquals(before.compiledModules(), after.compiledModules());

      // Open outputs count in use until closed.
      List<Outputs> open = new ArrayList<>();
      for (int i = 0; i < 10; ++i) {
        open.add(fn.callAlloc(x));
      }
      assertTrue(ctx.memoryStats().bytesInUse() >= 10 * 64 * 4 * 4, ctx.memoryStats().toString());
      open.forEach(Outputs::close);
      assertEquals(0, ctx.memoryStats().bytesInUse());
      ctx.releaseCachedMemory();
      assertEquals(0, ctx.memoryStats().bytesCached());
    }
  }

  @Test
  void functionsFreeTheirCompiledCode() {
    try (Context ctx = new Context(new ContextOptions().maxCachedKernels(0));
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"))) {
      Tensor x = floats(1, 2, 3);
      for (int i = 0; i < 20; ++i) {
        try (Function fn = Function.create(ctx, g)) {
          fn.callAlloc(x, x).close();
          assertTrue(ctx.memoryStats().compiledModules() >= 1);
        }
      }
      MemoryStats s = ctx.memoryStats();
      assertEquals(0, s.compiledModules(), s.toString());
      assertEquals(0, s.cachedKernels(), s.toString());
    }
  }

  @Test
  void theCleanerReleasesUnclosedOutputs() throws InterruptedException {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      Tensor x = Tensor.of(new float[1024], 1024);
      for (int i = 0; i < 100; ++i) {
        fn.callAlloc(x, x); // dropped unclosed
      }
      assertTrue(ctx.memoryStats().bytesInUse() > 0);
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (ctx.memoryStats().bytesInUse() > 0 && System.nanoTime() < deadline) {
        System.gc();
        Thread.sleep(20);
      }
      assertEquals(0, ctx.memoryStats().bytesInUse());
    }
  }

  @Test
  void aKeptBufferKeepsItsOutputAlive() throws InterruptedException {
    try (Context ctx = new Context();
        Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
        Function fn = Function.create(ctx, g)) {
      float[] x = new float[256];
      java.util.Arrays.fill(x, 3);
      Tensor in = Tensor.of(x, 256);
      // Only a typed view of the buffer survives; the ManagedTensor and Outputs are dropped.
      java.nio.FloatBuffer kept = fn.callAlloc(in, in).get(0).buffer().asFloatBuffer();
      for (int i = 0; i < 5; ++i) {
        System.gc();
        Thread.sleep(10);
        fn.callAlloc(Tensor.of(new float[256], 256), in).close(); // reuse freed blocks, if any
      }
      assertTrue(ctx.memoryStats().bytesInUse() >= 1024);
      for (int i = 0; i < 256; ++i) {
        assertEquals(9f, kept.get(i));
      }
      java.lang.ref.Reference.reachabilityFence(kept);
    }
  }

  @Test
  void unreachableHandlesAreFreedInOrder() throws InterruptedException {
    // Contexts, graphs and functions dropped unclosed: the Cleaner frees each, children
    // before their context (a child holds its context's state).
    for (int i = 0; i < 20; ++i) {
      Context ctx = new Context();
      Graph g = Graph.fromFile(ctx, example("seed_mul.pbtxt"));
      Function.create(ctx, g).callAlloc(floats(1), floats(2)).get(0).toFloatArray();
    }
    for (int i = 0; i < 5; ++i) {
      System.gc();
      Thread.sleep(10);
    }
  }

  @Test
  void closeWhileCallsRunWaitsForThem() throws Exception {
    Context ctx = new Context();
    Graph g = Graph.fromFile(ctx, example("mlp.pbtxt"));
    Function fn = Function.create(ctx, g);
    g.close();
    ctx.close();
    Tensor x = Tensor.of(TestSupport.randomFloats(32 * 8, 5), 32, 8);
    AtomicLong ok = new AtomicLong();
    AtomicLong refused = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean started = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; ++t) {
      Thread th =
          new Thread(
              () -> {
                Tensor y = Tensor.allocate(DType.FLOAT32, 32, 4);
                for (; ; ) {
                  try {
                    fn.call(new Tensor[] {x}, new Tensor[] {y});
                    started.set(true);
                    ok.incrementAndGet();
                  } catch (IllegalStateException e) {
                    refused.incrementAndGet();
                    return;
                  } catch (Throwable e) {
                    failure.set(e);
                    return;
                  }
                }
              });
      th.start();
      threads.add(th);
    }
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!started.get() && failure.get() == null && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    Thread.sleep(20);
    fn.close();
    for (Thread th : threads) {
      th.join();
    }
    if (failure.get() != null) {
      throw new AssertionError(failure.get());
    }
    assertEquals(4, refused.get());
    assertTrue(ok.get() > 0);
  }
}
