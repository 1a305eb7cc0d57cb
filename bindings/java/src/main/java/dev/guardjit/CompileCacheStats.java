package dev.guardjit;

/**
 * What a context's compile cache did ({@code gj_compile_cache_stats}, C API 0.11). A record is one
 * compiled kernel; a lookup that finds no usable record is a miss, and the kernel compiles.
 *
 * @param kernelsCompiled kernels the context compiled
 * @param kernelsLoaded kernels loaded from the cache instead
 * @param diskHits lookups the directory answered
 * @param diskMisses lookups it had no usable record for
 * @param diskStores records written to the directory
 * @param remoteHits lookups Redis answered ({@link ContextOptions#remoteCache(String)})
 * @param remoteMisses lookups Redis had no usable record for
 * @param remoteStores records written to Redis
 * @param lockWaits kernels left to another replica holding their compile lock
 * @param lockTimeouts of those, the waits that ended without its record (compiled here then)
 * @param rejected records refused: truncated, corrupt (digest), of another record format, stored
 *     under another key, unsigned or wrongly signed with a {@link ContextOptions#cacheKey(String)};
 *     each is removed, its kernel compiled and stored again
 * @param errors I/O and Redis failures: each a miss or a lost store
 * @param evictions records this context removed past {@link ContextOptions#maxCacheBytes(long)}
 */
public record CompileCacheStats(
    long kernelsCompiled,
    long kernelsLoaded,
    long diskHits,
    long diskMisses,
    long diskStores,
    long remoteHits,
    long remoteMisses,
    long remoteStores,
    long lockWaits,
    long lockTimeouts,
    long rejected,
    long errors,
    long evictions) {
  static CompileCacheStats of(long[] v) {
    return new CompileCacheStats(
        v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]);
  }
}
