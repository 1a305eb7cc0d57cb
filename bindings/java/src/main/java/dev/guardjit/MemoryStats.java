package dev.guardjit;

/**
 * A context's memory ({@code gj_memory_stats}). Host bytes are counted by size class (what the
 * allocator reserved, at most 25% over what was asked).
 *
 * @param bytesInUse outputs and intermediates alive now, library-allocated outputs ({@link
 *     ManagedTensor}) included until closed
 * @param bytesCached freed, kept for reuse
 * @param peakBytesInUse since the context was created
 * @param systemAllocations blocks taken from the system
 * @param cacheHits blocks served from the cache
 * @param compiledModules JIT code modules loaded
 * @param cachedKernels compiled kernels kept for reuse
 * @param packedWeightBytes graph weights the context's live cache entries hold again, packed into
 *     their kernels' layouts (C API 0.13; 0 for a CUDA device)
 */
public record MemoryStats(
    long bytesInUse,
    long bytesCached,
    long peakBytesInUse,
    long systemAllocations,
    long cacheHits,
    long compiledModules,
    long cachedKernels,
    long packedWeightBytes) {
  static MemoryStats of(long[] v) {
    return new MemoryStats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  }
}
