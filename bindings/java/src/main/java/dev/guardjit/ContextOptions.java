package dev.guardjit;

/**
 * Options of a {@link Context} ({@code gj_context_options}); fields left unset keep the
 * library's defaults. A mutable builder: {@code new ContextOptions().numThreads(2)}.
 */
public final class ContextOptions {
  private Integer numThreads;
  private Backend backend;
  private Integer maxCachedKernels;
  private Long maxCachedBytes;

  /**
   * Threads that compiled CPU programs run on, the calling thread included; 0 = the
   * process-wide pool (GJ_NUM_THREADS, else one per core).
   */
  public ContextOptions numThreads(int numThreads) {
    if (numThreads < 0) {
      throw new IllegalArgumentException("numThreads must be >= 0, got " + numThreads);
    }
    this.numThreads = numThreads;
    return this;
  }

  /** What compiles cache entries. */
  public ContextOptions backend(Backend backend) {
    this.backend = java.util.Objects.requireNonNull(backend, "backend");
    return this;
  }

  /** Compiled kernels kept for reuse once no function uses them (default 1024; 0 = none). */
  public ContextOptions maxCachedKernels(int maxCachedKernels) {
    this.maxCachedKernels = maxCachedKernels;
    return this;
  }

  /** Host memory the caching allocator keeps after it is freed (default 1 GiB; 0 = none). */
  public ContextOptions maxCachedBytes(long maxCachedBytes) {
    this.maxCachedBytes = maxCachedBytes;
    return this;
  }

  long create() {
    int mask = 0;
    if (numThreads != null) mask |= 1;
    if (backend != null) mask |= 2;
    if (maxCachedKernels != null) mask |= 4;
    if (maxCachedBytes != null) mask |= 8;
    return Native.contextCreate(
        numThreads == null ? 0 : numThreads,
        backend == null ? 0 : backend.value,
        maxCachedKernels == null ? 0 : maxCachedKernels,
        maxCachedBytes == null ? 0 : maxCachedBytes,
        mask);
  }
}
