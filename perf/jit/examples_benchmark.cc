// The graphs in examples/ through the CPU JIT next to the eager interpreter,
// all in one run:
//   BM_Eager/<example>[/batch N]   the reference interpreter, per call
//   BM_Jit/<example>[/batch N]     the compiled executable, per call
//   BM_Compile/<example>           one miss: lower + fuse + O3 + link in a
//                                  fresh JitCompiler (so no kernel is cached);
//                                  counters p50_ms and p90_ms over the runs
// Each example runs at its placeholders' sizes, and again with the first dim
// of every input scaled to a batch of 256 where the graph accepts it (the
// example sizes are tiny, so per-call overhead dominates there).
// Speed-up = BM_Eager / BM_Jit for the same example and size.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/graph_loader.h"
#include "core/shape_inference.h"
#include "jit/jit_compiler.h"
#include "runtime/eager_interpreter.h"
#include "runtime/tensor_copy.h"

#ifndef GJ_EXAMPLES_DIR
#error "GJ_EXAMPLES_DIR must name the examples directory"
#endif

namespace guardjit {
namespace {

// Deterministic inputs in [-1, 1) (floating) or [0, 8) (integral).
Tensor Input(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor f64 = *Tensor::Empty(DType::kFloat64, shape);
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < f64.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    f64.data_as<double>()[i] =
        IsFloating(dtype) ? 2 * u - 1 : std::floor(8 * u);
  }
  return *CopyAs(f64, dtype);
}

struct Case {
  std::string name;
  std::shared_ptr<const Graph> graph;
  std::vector<Tensor> inputs;
  Specialization spec;
};

std::vector<Tensor> MakeInputs(const Graph& graph, int64_t batch) {
  std::vector<Tensor> inputs;
  uint64_t seed = 1;
  for (int index : graph.inputs()) {
    const TensorMeta& meta = *graph.node(index).meta;
    Shape shape = meta.shape();
    if (batch > 0 && !shape.empty()) shape[0] = batch;
    inputs.push_back(Input(meta.dtype, shape, seed++));
  }
  return inputs;
}

void BM_Eager(benchmark::State& state, const Case* c) {
  auto interp = *EagerInterpreter::Create(c->graph);
  for (auto _ : state) {
    auto out = interp->Run(c->inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
}

void BM_Jit(benchmark::State& state, const Case* c) {
  auto jit = *JitCompiler::Create();
  auto exe = jit->Compile(c->graph, c->spec);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  state.SetLabel((*exe)->Describe());
  for (auto _ : state) {
    auto out = RunToVector(**exe, c->inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
}

void BM_Compile(benchmark::State& state, const Case* c) {
  std::vector<double> ms;
  for (auto _ : state) {
    state.PauseTiming();
    auto jit = *JitCompiler::Create();
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    auto exe = jit->Compile(c->graph, c->spec);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    if (!exe.ok()) {
      state.SkipWithError(std::string(exe.status().message()).c_str());
      break;
    }
    state.PauseTiming();
    exe->reset();  // the JIT's memory goes with `jit`, outside the timing
    jit.reset();
    state.ResumeTiming();
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto quantile = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  state.counters["p50_ms"] = quantile(0.5);
  state.counters["p90_ms"] = quantile(0.9);
}

std::vector<std::unique_ptr<Case>>& Cases() {
  static auto* cases = new std::vector<std::unique_ptr<Case>>();
  return *cases;
}

void RegisterExamples() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(GJ_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".pbtxt") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    auto loaded = LoadGraphFromFile(path.string());
    if (!loaded.ok()) continue;
    std::shared_ptr<const Graph> graph(std::move(*loaded));
    const std::string stem = path.stem().string();
    for (int64_t batch : {int64_t{0}, int64_t{256}}) {
      auto c = std::make_unique<Case>();
      c->name = batch == 0 ? stem : stem + "/batch" + std::to_string(batch);
      c->graph = graph;
      c->inputs = MakeInputs(*graph, batch);
      for (const Tensor& t : c->inputs) {
        c->spec.inputs.emplace_back(t.dtype(),
                                    Shape(t.sizes().begin(), t.sizes().end()));
      }
      // A batch the graph rejects (fixed view sizes) is left out.
      if (!InferShapes(*graph, c->spec.inputs).ok()) continue;
      const Case* raw = c.get();
      Cases().push_back(std::move(c));
      benchmark::RegisterBenchmark(("BM_Eager/" + raw->name).c_str(), BM_Eager,
                                   raw);
      benchmark::RegisterBenchmark(("BM_Jit/" + raw->name).c_str(), BM_Jit,
                                   raw);
      if (batch == 0) {
        benchmark::RegisterBenchmark(("BM_Compile/" + raw->name).c_str(),
                                     BM_Compile, raw)
            ->Unit(benchmark::kMillisecond)
            ->Iterations(20);
      }
    }
  }
}

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  guardjit::RegisterExamples();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
