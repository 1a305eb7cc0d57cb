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
  // The compile cache (C API 0.11). null: never set, passed as NULL, so the library reads
  // GJ_CACHE_DIR / GJ_CACHE_KEY / GJ_REMOTE_CACHE; "": none.
  private String cacheDir;
  private Long maxCacheBytes;
  private String cacheKey;
  private String remoteCache;

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

  /**
   * The persistent compile cache (C API 0.11): a directory where the context stores the code it
   * compiles and looks it up before compiling, so that the next process, or any process sharing
   * the directory, loads what was compiled once ({@link Context#compileCacheStats()}). Never set:
   * GJ_CACHE_DIR if that is set, else none; {@code ""}: none, whatever the environment says.
   * Created if missing; creating the context fails with {@link ErrorCode#UNAVAILABLE}, naming it,
   * when it cannot be created or written.
   */
  public ContextOptions cacheDir(String cacheDir) {
    this.cacheDir = java.util.Objects.requireNonNull(cacheDir, "cacheDir");
    return this;
  }

  /** {@link #cacheDir(String)} from a path. */
  public ContextOptions cacheDir(java.nio.file.Path cacheDir) {
    return cacheDir(java.util.Objects.requireNonNull(cacheDir, "cacheDir").toString());
  }

  /**
   * The compile cache directory's size limit in bytes (C API 0.11); beyond it the least recently
   * used records are removed. Default 1 GiB; 0 = unbounded.
   */
  public ContextOptions maxCacheBytes(long maxCacheBytes) {
    this.maxCacheBytes = maxCacheBytes;
    return this;
  }

  /**
   * A secret key that signs every record the context stores (HMAC-SHA256, C API 0.11); with a
   * key, a record without a valid signature under it is refused ({@link
   * CompileCacheStats#rejected()}) and compiled anew. Never set: GJ_CACHE_KEY if that is set, else
   * none; {@code ""}: none.
   */
  public ContextOptions cacheKey(String cacheKey) {
    this.cacheKey = java.util.Objects.requireNonNull(cacheKey, "cacheKey");
    return this;
  }

  /**
   * A Redis server the compile cache's records are shared through, for a fleet (C API 0.11):
   * {@code redis://[:password@]host[:port][/db]}, with optional {@code
   * ?timeout_ms=100&ttl_s=0&max_value_bytes=67108864&lock_ms=10000&wait_ms=10000}. An unreachable
   * server is not an error (the context compiles locally, with one warning); a malformed URL fails
   * with {@link ErrorCode#INVALID_ARGUMENT}. Never set: GJ_REMOTE_CACHE if that is set, else none;
   * {@code ""}: none.
   */
  public ContextOptions remoteCache(String remoteCache) {
    this.remoteCache = java.util.Objects.requireNonNull(remoteCache, "remoteCache");
    return this;
  }

  long create() {
    int mask = 0;
    if (numThreads != null) mask |= 1;
    if (backend != null) mask |= 2;
    if (maxCachedKernels != null) mask |= 4;
    if (maxCachedBytes != null) mask |= 8;
    if (maxCacheBytes != null) mask |= 16;
    return Native.contextCreate(
        numThreads == null ? 0 : numThreads,
        backend == null ? 0 : backend.value,
        maxCachedKernels == null ? 0 : maxCachedKernels,
        maxCachedBytes == null ? 0 : maxCachedBytes,
        mask,
        cacheDir,
        maxCacheBytes == null ? 0 : maxCacheBytes,
        cacheKey,
        remoteCache);
  }

  /** The options set; the key and the Redis URL (which may hold a password) only as set. */
  @Override
  public String toString() {
    return "ContextOptions[numThreads=" + numThreads + ", backend=" + backend
        + ", maxCachedKernels=" + maxCachedKernels + ", maxCachedBytes=" + maxCachedBytes
        + ", cacheDir=" + cacheDir + ", maxCacheBytes=" + maxCacheBytes
        + ", cacheKey=" + (cacheKey == null ? "null" : "<set>")
        + ", remoteCache=" + (remoteCache == null ? "null" : "<set>") + "]";
  }
}
