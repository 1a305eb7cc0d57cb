#include "bindings/cli/bench_measure.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

namespace guardjit_cli {
namespace {

using Clock = std::chrono::steady_clock;

struct ThreadResult {
  Clock::time_point end;
  std::vector<float> latency_ns;
  bool ok = true;
};

// One clock read per call: each call's latency is the time since the
// previous read, so back-to-back calls are timed without gaps.
void CallLoop(int thread, int64_t iterations, int64_t stride, const CallOp& op,
              ThreadResult* out) {
  out->latency_ns.reserve(static_cast<size_t>(iterations / stride + 1));
  Clock::time_point last = Clock::now();
  int64_t until_sample = 0;
  for (int64_t i = 0; i < iterations; ++i) {
    if (!op(thread)) {
      out->ok = false;
      break;
    }
    const Clock::time_point now = Clock::now();
    if (until_sample-- == 0) {
      out->latency_ns.push_back(
          std::chrono::duration<float, std::nano>(now - last).count());
      until_sample = stride - 1;
    }
    last = now;
  }
  out->end = last;
}

}  // namespace

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool RunTrial(int threads, int64_t iterations, const CallOp& op, Trial* trial) {
  const int64_t total = iterations * threads;
  const int64_t stride = std::max<int64_t>(
      1, (total + kMaxLatencySamples - 1) / kMaxLatencySamples);
  std::vector<ThreadResult> results(threads);
  double cpu_start = 0;
  Clock::time_point start;
  if (threads == 1) {
    cpu_start = ProcessCpuSeconds();
    start = Clock::now();
    CallLoop(0, iterations, stride, op, &results[0]);
  } else {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        CallLoop(t, iterations, stride, op, &results[t]);
      });
    }
    while (ready.load() < threads) std::this_thread::yield();
    cpu_start = ProcessCpuSeconds();
    start = Clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& t : pool) t.join();
  }
  trial->cpu_s = ProcessCpuSeconds() - cpu_start;
  trial->threads = threads;
  trial->iterations = iterations;
  trial->latency_ns.clear();
  Clock::time_point end = start;
  bool ok = true;
  for (ThreadResult& r : results) {
    end = std::max(end, r.end);
    ok = ok && r.ok;
    trial->latency_ns.insert(trial->latency_ns.end(), r.latency_ns.begin(),
                             r.latency_ns.end());
  }
  trial->wall_s = std::chrono::duration<double>(end - start).count();
  return ok;
}

bool Calibrate(int threads, double min_time_s, int64_t fixed_iterations,
               const CallOp& op, Trial* trial) {
  int64_t iterations = fixed_iterations > 0 ? fixed_iterations : 1;
  for (;;) {
    if (!RunTrial(threads, iterations, op, trial)) return false;
    if (fixed_iterations > 0 || trial->wall_s >= min_time_s ||
        iterations >= kMaxIterations) {
      return true;
    }
    // Google Benchmark's rule (benchmark_runner.cc, PredictNumItersNeeded).
    double multiplier = min_time_s * 1.4 / std::max(trial->wall_s, 1e-9);
    if (trial->wall_s / min_time_s <= 0.1) multiplier = 10.0;
    const double next = std::max(multiplier * static_cast<double>(iterations),
                                 static_cast<double>(iterations) + 1.0);
    iterations =
        std::min(kMaxIterations, static_cast<int64_t>(std::llround(next)));
  }
}

Percentiles LatencyPercentiles(std::vector<float> samples) {
  Percentiles p;
  if (samples.empty()) return p;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  auto rank = [&](double percent) {
    const size_t k = static_cast<size_t>(std::ceil(percent / 100.0 * n));
    return static_cast<double>(samples[std::max<size_t>(k, 1) - 1]);
  };
  p.p50 = rank(50);
  p.p90 = rank(90);
  p.p99 = rank(99);
  return p;
}

}  // namespace guardjit_cli
