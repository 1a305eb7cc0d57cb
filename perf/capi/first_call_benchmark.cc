// A new replica's first call through the C API (issue #31): context
// creation + graph load + function creation + the first call, with the
// compile cache cold (an empty directory: everything compiles and is
// stored), warm on disk (the directory a cold start filled) and warm in
// Redis (an empty directory, the records in a redis-server this benchmark
// starts on a free port; the first lookup of each kernel goes to Redis).
// Each iteration makes a fresh context, so nothing compiled stays in memory
// between iterations; what a process keeps anyway (libmvec loaded, LLVM
// initialized) makes these a little better than a fresh process's starts,
// which perf/models/first_call.py measures for real models against ONNX
// Runtime.
//
// Counter `cold_over_this`: the cold start's time over this one's, both
// measured in this run (the target: warm >= 20x faster than cold).
//
//   first_call_benchmark [--benchmark_filter=attention]
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "guardjit/guardjit.h"
#include "testing/redis_server.h"

namespace {

namespace fs = std::filesystem;

enum class Start { kCold, kDisk, kRedis };

struct Graph {
  const char* name;
  std::vector<int64_t> shape;
};
const Graph kGraphs[] = {{"mlp", {4, 8}}, {"attention", {2, 4, 8}}};

std::string Dir(const char* graph, const char* what) {
  return (fs::temp_directory_path() /
          ("gj_first_call_" + std::to_string(::getpid()) + "_" + graph + "_" +
           what))
      .string();
}

// Started on first use, stopped (by its pid) when the process exits.
guardjit::RedisServer& Redis() {
  static guardjit::RedisServer server;
  return server;
}

std::map<std::string, double>& ColdSeconds() {
  static std::map<std::string, double> cold;
  return cold;
}

// One start; false (with the error in `state`) on a failure.
bool StartOnce(const Graph& g, const std::string& dir, const std::string& url,
               benchmark::State& state) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.cache_dir = dir.c_str();
  options.remote_cache = url.c_str();
  gj_context* ctx = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
  const std::string path =
      std::string(GJ_EXAMPLES_DIR) + "/" + g.name + ".pbtxt";
  std::vector<float> x(64, 0.5f), y(64);
  std::vector<int64_t> shape = g.shape;
  DLTensor in{x.data(),
              {kDLCPU, 0},
              static_cast<int>(shape.size()),
              {kDLFloat, 32, 1},
              shape.data(),
              nullptr,
              0};
  DLManagedTensor* out = nullptr;
  const DLTensor* ins[] = {&in};
  gj_error* error = gj_context_create(&options, &ctx);
  if (error == nullptr)
    error = gj_graph_from_file(ctx, path.c_str(), nullptr, &graph);
  if (error == nullptr) error = gj_function_create(ctx, graph, nullptr, &fn);
  if (error == nullptr)
    error = gj_function_call_alloc(fn, ins, 1, nullptr, &out, 1);
  if (out != nullptr) gj_tensor_release(out);
  gj_function_destroy(fn);
  gj_graph_destroy(graph);
  gj_context_destroy(ctx);
  if (error != nullptr) {
    state.SkipWithError(gj_error_message(error));
    gj_error_destroy(error);
    return false;
  }
  return true;
}

void BM_FirstCall(benchmark::State& state, const Graph& g, Start start) {
  std::string url;
  if (start == Start::kRedis) {
    if (!Redis().ok()) {
      state.SkipWithError(Redis().error().c_str());
      return;
    }
    url = Redis().url();
  }
  const std::string dir = Dir(g.name, start == Start::kDisk ? "disk" : "tmp");
  // Warm tiers are filled by one start before timing.
  fs::remove_all(dir);
  if (start != Start::kCold && !StartOnce(g, dir, url, state)) return;
  double seconds = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // Cold: an empty directory. Redis: an empty directory, records in Redis.
    if (start != Start::kDisk) fs::remove_all(dir);
    state.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    if (!StartOnce(g, dir, start == Start::kCold ? "" : url, state)) break;
    seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    ++runs;
  }
  fs::remove_all(dir);
  if (runs == 0) return;
  const double mean = seconds / runs;
  if (start == Start::kCold) ColdSeconds()[g.name] = mean;
  const auto cold = ColdSeconds().find(g.name);
  if (cold != ColdSeconds().end()) {
    state.counters["cold_over_this"] = cold->second / mean;
  }
}

void Register() {
  for (const Graph& g : kGraphs) {
    for (auto [start, label] :
         {std::pair{Start::kCold, "cold"}, std::pair{Start::kDisk, "warm_disk"},
          std::pair{Start::kRedis, "warm_redis"}}) {
      benchmark::RegisterBenchmark(
          (std::string("BM_FirstCall/") + g.name + "/" + label).c_str(),
          [&g, start = start](benchmark::State& s) {
            BM_FirstCall(s, g, start);
          })
          ->Unit(benchmark::kMillisecond)
          ->MinTime(1.0);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
