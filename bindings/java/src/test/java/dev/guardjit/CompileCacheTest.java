package dev.guardjit;

import static dev.guardjit.TestSupport.assertMessageMentions;
import static dev.guardjit.TestSupport.example;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persistent compile cache (C API 0.11): {@link ContextOptions#cacheDir(String)}, {@code
 * cacheKey}, {@code maxCacheBytes}, {@code remoteCache}, {@link Context#compileCacheStats()},
 * {@link FunctionStats#entriesLoaded()} and {@link CacheDir}.
 */
class CompileCacheTest {
  /** examples/attention.pbtxt on a fixed x of float32[2,4,8]. */
  record Run(float[] out, FunctionStats stats, String explain) {}

  static Run attention(Context ctx) {
    float[] x = new float[2 * 4 * 8];
    for (int i = 0; i < x.length; ++i) {
      x[i] = 0.01f * (i % 17) - 0.05f;
    }
    try (Graph g = Graph.fromFile(ctx, example("attention.pbtxt"));
        Function fn = Function.create(ctx, g);
        Outputs out = fn.callAlloc(Tensor.of(x, 2, 4, 8))) {
      assertArrayEquals(new long[] {2, 4, 8}, out.get(0).shape());
      return new Run(out.get(0).toFloatArray(), fn.stats(), fn.explain());
    }
  }

  @Test
  void aSecondContextLoadsWhatTheFirstCompiled(@TempDir Path dir) {
    Run first;
    CompileCacheStats cs;
    try (Context ctx = new Context(new ContextOptions().cacheDir(dir))) {
      first = attention(ctx);
      cs = ctx.compileCacheStats();
    }
    assertTrue(cs.kernelsCompiled() > 0, cs.toString());
    assertEquals(0, cs.kernelsLoaded(), cs.toString());
    assertEquals(cs.kernelsCompiled(), cs.diskStores(), cs.toString());
    assertTrue(cs.diskMisses() > 0, cs.toString());
    assertEquals(0, first.stats().entriesLoaded(), first.stats().toString());

    try (Context ctx = new Context(new ContextOptions().cacheDir(dir.toString()))) {
      Run second = attention(ctx);
      CompileCacheStats cs2 = ctx.compileCacheStats();
      assertEquals(0, cs2.kernelsCompiled(), cs2.toString());
      assertTrue(cs2.kernelsLoaded() > 0, cs2.toString());
      assertEquals(cs2.kernelsLoaded(), cs2.diskHits(), cs2.toString());
      assertEquals(0, cs2.rejected() + cs2.errors(), cs2.toString());
      assertEquals(1, second.stats().entriesLoaded(), second.stats().toString());
      assertEquals(1, second.stats().compiles(), second.stats().toString());
      assertTrue(second.explain().contains("loaded from the disk cache"), second.explain());
      assertArrayEquals(first.out(), second.out()); // bit for bit: the same code ran
    }

    CacheDir.Stats ds = CacheDir.inspect(dir, null, true, false);
    assertTrue(ds.records() > 0 && ds.records() <= cs.diskStores(), ds.toString());
    assertEquals(ds.records(), ds.verified(), ds.toString());
    assertEquals(0, ds.bad(), ds.toString());
    assertTrue(ds.bytes() > 0 && ds.oldestUseMs() > 0 && ds.newestUseMs() >= ds.oldestUseMs());
    assertFalse(ds.report().isEmpty());

    // With a key, the unsigned records are refused and stored again signed.
    try (Context ctx = new Context(new ContextOptions().cacheDir(dir).cacheKey("k"))) {
      attention(ctx);
      CompileCacheStats ks = ctx.compileCacheStats();
      assertTrue(ks.rejected() > 0 && ks.kernelsCompiled() > 0, ks.toString());
      assertEquals(0, ks.kernelsLoaded(), ks.toString());
    }
    CacheDir.Stats signed = CacheDir.inspect(dir, "k", true, false);
    assertTrue(signed.records() > 0 && signed.bad() == 0, signed.toString());

    assertTrue(CacheDir.clear(dir) >= signed.records());
    assertEquals(0, CacheDir.inspect(dir, null, false, false).records());
    Path missing = dir.resolve("missing");
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(GuardjitException.class, () -> CacheDir.clear(missing)).code());
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(GuardjitException.class, () -> CacheDir.inspect(missing, null, false, false))
            .code());
  }

  @Test
  void anEmptyCacheDirDisablesTheCache() {
    try (Context ctx = new Context(new ContextOptions().cacheDir(""))) {
      attention(ctx);
      CompileCacheStats cs = ctx.compileCacheStats();
      assertEquals(0, cs.diskMisses(), cs.toString());
      // Kernels compile (and are counted) but nothing is looked up, loaded or stored.
      assertTrue(cs.kernelsCompiled() > 0, cs.toString());
      assertEquals(
          new CompileCacheStats(cs.kernelsCompiled(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), cs);
    }
  }

  @Test
  void badCacheOptionsAreRefused(@TempDir Path dir) throws IOException {
    Path file = Files.createFile(dir.resolve("file"));
    GuardjitException e =
        assertThrows(
            GuardjitException.class,
            () -> new Context(new ContextOptions().cacheDir(file.resolve("sub"))));
    assertEquals(ErrorCode.UNAVAILABLE, e.code());
    assertMessageMentions(e, "cache_dir");
    e =
        assertThrows(
            GuardjitException.class,
            () -> new Context(new ContextOptions().cacheDir("").maxCacheBytes(-5)));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    assertMessageMentions(e, "max_cache_bytes");
    e =
        assertThrows(
            GuardjitException.class,
            () -> new Context(new ContextOptions().cacheDir("").remoteCache("http://x")));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    assertMessageMentions(e, "remote_cache");
    assertThrows(
        IllegalArgumentException.class, () -> new Context(new ContextOptions().cacheKey("a\0b")));
    assertThrows(NullPointerException.class, () -> new ContextOptions().cacheDir((String) null));
    // toString shows neither the key nor the Redis URL (it may hold a password).
    String shown = new ContextOptions().cacheKey("hunter2").remoteCache("redis://:pw@h").toString();
    assertFalse(shown.contains("hunter2") || shown.contains("pw@"), shown);
  }
}
