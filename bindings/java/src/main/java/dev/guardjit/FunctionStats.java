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
    double guardNsMean) {
  static FunctionStats of(long[] v) {
    return new FunctionStats(
        v[0], v[1], v[2], v[3], v[4], v[5], v[6],
        Double.longBitsToDouble(v[7]), Double.longBitsToDouble(v[8]));
  }
}
