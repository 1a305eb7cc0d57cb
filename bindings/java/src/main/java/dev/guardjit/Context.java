package dev.guardjit;

import java.lang.ref.Cleaner;

/**
 * Owns the thread pool, the compiler and the caching allocator; share one per process.
 *
 * <p>Thread safety: every method may be called from any thread. Graphs, builders and
 * functions made from a context keep it alive: {@link #close()} makes the context refuse new
 * work, and its native memory is freed once the last of them is closed too (the C API
 * requires a context to outlive them). A context that becomes unreachable without being
 * closed is freed by a {@link Cleaner}; prefer try-with-resources.
 */
public final class Context implements AutoCloseable {
  final HandleState state;
  private final Cleaner.Cleanable cleanable;

  /** A context with the library's defaults. */
  public Context() {
    this(new ContextOptions());
  }

  public Context(ContextOptions options) {
    Native.load();
    long pointer = options.create();
    this.state = new HandleState("Context", pointer, Native::contextDestroy, null);
    this.cleanable = Handles.CLEANER.register(this, state);
  }

  /** The context's memory counters. Thread-safe. */
  public MemoryStats memoryStats() {
    long p = state.acquire();
    try {
      return MemoryStats.of(Native.contextMemoryStats(p));
    } finally {
      state.release();
    }
  }

  /**
   * What the context's compile cache ({@link ContextOptions#cacheDir(String)}) did (C API 0.11).
   * Without a compile cache only {@code kernelsCompiled} counts (what a JIT context compiles; all
   * are 0 with {@link Backend#EAGER}). Thread-safe.
   */
  public CompileCacheStats compileCacheStats() {
    long p = state.acquire();
    try {
      return CompileCacheStats.of(Native.contextCompileCacheStats(p));
    } finally {
      state.release();
    }
  }

  /** Returns every cached host block to the system. Thread-safe. */
  public void releaseCachedMemory() {
    long p = state.acquire();
    try {
      Native.contextReleaseCachedMemory(p);
    } finally {
      state.release();
    }
  }

  /**
   * One device's memory counters (C API 0.10). {@link Device#cpu()} is this context's host memory,
   * as {@link #memoryStats()}; {@link Device#cuda(int)} is that CUDA device's stream-ordered caching
   * allocator, shared by every context of the process ({@code systemAllocations} counts {@code
   * cuMemAlloc} calls). {@link ErrorCode#UNAVAILABLE} naming the device without a usable CUDA driver
   * or device. Thread-safe.
   */
  public MemoryStats deviceMemoryStats(Device device) {
    long p = state.acquire();
    try {
      return MemoryStats.of(Native.contextDeviceMemoryStats(p, device.type(), device.id()));
    } finally {
      state.release();
    }
  }

  /**
   * Returns one device's idle cached blocks to the system (C API 0.10); blocks in use stay. Errors as
   * {@link #deviceMemoryStats}. Thread-safe.
   */
  public void releaseCachedDeviceMemory(Device device) {
    long p = state.acquire();
    try {
      Native.contextReleaseCachedDeviceMemory(p, device.type(), device.id());
    } finally {
      state.release();
    }
  }

  public boolean isClosed() {
    return state.isClosed();
  }

  /** Closes the context; idempotent. See the class comment for children still open. */
  @Override
  public void close() {
    cleanable.clean();
  }
}
