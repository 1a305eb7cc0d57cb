#ifndef GUARDJIT_BINDINGS_CLI_BENCH_MEASURE_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_MEASURE_H_

// The timing loop of `guardjit bench`: Google Benchmark's iteration-count
// search, on one or several threads, with a latency per call.

#include <cstdint>
#include <functional>
#include <vector>

namespace guardjit_cli {

// One timed run of `iterations` calls on each of `threads` threads.
struct Trial {
  int threads = 1;
  int64_t iterations = 0;  // per thread
  double wall_s = 0;       // from the common start to the last thread's end
  // Process CPU time over the trial: every thread, guardjit's pool included.
  double cpu_s = 0;
  // Per call, every thread: the time between consecutive clock reads around
  // each call (one clock read and the loop are included). Past
  // kMaxLatencySamples calls, every k-th call is kept.
  std::vector<float> latency_ns;

  int64_t calls() const { return iterations * threads; }
};

constexpr int64_t kMaxLatencySamples = int64_t{1} << 20;
// Google Benchmark's cap on a run's iterations.
constexpr int64_t kMaxIterations = 1000000000;

// CPU time of the whole process so far, in seconds.
double ProcessCpuSeconds();

// Makes one call on thread `thread`; false stops the trial (the callee keeps
// its error).
using CallOp = std::function<bool(int thread)>;

// Runs `iterations` calls of `op` on each of `threads` threads, started
// together. False if a call failed.
bool RunTrial(int threads, int64_t iterations, const CallOp& op, Trial* trial);

// As Google Benchmark sizes a run: 1 iteration, then more (x10 while under a
// tenth of min_time, else a prediction for 1.4 x min_time) until a trial
// lasts min_time_s; returns that trial. fixed_iterations > 0 runs exactly
// that many instead ("--min-time 100x").
bool Calibrate(int threads, double min_time_s, int64_t fixed_iterations,
               const CallOp& op, Trial* trial);

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
};

// Nearest-rank percentiles of `samples` (zeros if empty).
Percentiles LatencyPercentiles(std::vector<float> samples);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_MEASURE_H_
