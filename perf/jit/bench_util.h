#ifndef GUARDJIT_PERF_JIT_BENCH_UTIL_H_
#define GUARDJIT_PERF_JIT_BENCH_UTIL_H_

// What the JIT benchmarks share: glibc malloc set up so large outputs do not
// page-fault on every call, and timing a run against a baseline in the same
// loop.

#include <malloc.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"

namespace guardjit::bench {

// The executables allocate their outputs on every call. glibc serves large
// blocks with a fresh mmap (page faults, kernel zeroing) unless told to keep
// them on the heap after free; GJ_BENCH_DEFAULT_MALLOC=1 keeps the default.
inline void KeepLargeBlocksOnHeap() {
  if (std::getenv("GJ_BENCH_DEFAULT_MALLOC") != nullptr) return;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// Wall time of `run()` (a StatusOr) and of `baseline()` (returning its own
// seconds) run once after each, summed over the benchmark's iterations;
// each iteration's time is the run's (UseManualTime). False after
// SkipWithError when a run fails.
template <typename Run, typename Baseline>
bool TimeAgainstBaseline(benchmark::State& state, Run run, Baseline baseline,
                         double* seconds, double* baseline_seconds) {
  *seconds = *baseline_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto out = run();
    benchmark::DoNotOptimize(out);
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return false;
    }
    state.SetIterationTime(t);
    *seconds += t;
    *baseline_seconds += baseline();
  }
  return true;
}

}  // namespace guardjit::bench

#endif  // GUARDJIT_PERF_JIT_BENCH_UTIL_H_
