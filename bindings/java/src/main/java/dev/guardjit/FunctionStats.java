package dev.guardjit;

/**
 * What a function's guard cache has done ({@code gj_function_stats}).
 *
 * @param calls calls so far
 * @param hits calls that found a cache entry
 * @param misses calls that did not
 * @param compiles entries compiled
 * @param recompiles compiles after the first
 * @param fallbackCalls eager runs past the recompile limit
 * @param cacheEntries entries held now
 * @param compileMsTotal time spent compiling
 * @param guardNsMean guard lookup on hits, sampled
 * @param graphCount graphs (segments) reached so far: 1 without graph breaks; with breaks, compiles,
 *     misses, cache entries and compile time sum over the graphs, and a hit is a call no graph
 *     missed
 * @param graphBreakCount graph breaks between them
 * @param cudaGraphsRecorded {@link FunctionMode#REDUCE_OVERHEAD}: CUDA graphs captured, re-captures
 *     included
 * @param cudaGraphReplays CUDA graph launches
 * @param cudaGraphPointerUpdates kernel nodes patched with a call's new input or output addresses
 * @param cudaGraphRecaptures keys recorded again after an eviction or a change patching could not
 *     express
 * @param cudaGraphEvictions graphs freed past {@link FunctionOptions#maxGraphsPerEntry(int)}
 * @param cudaGraphPoolBytes device bytes the entries' private pools hold now
 * @param eagerWhileCompiling {@link CompileMode#ASYNC}: calls run eagerly while their entry was
 *     compiling
 * @param entriesLoaded entries (of {@code compiles}) whose code all came from the context's compile
 *     cache ({@link ContextOptions#cacheDir(String)}, C API 0.11): nothing was compiled for them,
 *     and {@link Function#explain()} says "loaded from the disk cache"
 */
public record FunctionStats(
    long calls,
    long hits,
    long misses,
    long compiles,
    long recompiles,
    long fallbackCalls,
    long cacheEntries,
    double compileMsTotal,
    double guardNsMean,
    long graphCount,
    long graphBreakCount,
    long cudaGraphsRecorded,
    long cudaGraphReplays,
    long cudaGraphPointerUpdates,
    long cudaGraphRecaptures,
    long cudaGraphEvictions,
    long cudaGraphPoolBytes,
    long eagerWhileCompiling,
    long entriesLoaded) {
  static FunctionStats of(long[] v) {
    return new FunctionStats(
        v[0], v[1], v[2], v[3], v[4], v[5], v[6],
        Double.longBitsToDouble(v[7]), Double.longBitsToDouble(v[8]),
        v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17], v[18]);
  }
}
