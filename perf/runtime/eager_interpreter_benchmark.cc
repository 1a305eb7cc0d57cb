// Eager interpreter costs, each next to its baseline in the same run:
//   BM_EmptyCall            an opaque empty function call (dispatch floor)
//   BM_EagerTinyGraph       a 3-op graph on 1-element tensors (per-call
//   overhead) BM_Memcpy               memcpy of 16M float32 (bandwidth floor)
//   BM_EagerAdd16M          aten.add.Tensor over 16M float32 (reads 2, writes
//   1)
// Compare bytes_per_second of BM_EagerAdd16M with BM_Memcpy, and the time of
// BM_EagerTinyGraph with BM_EmptyCall.

#include <cstring>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/graph_builder.h"
#include "runtime/eager_interpreter.h"

namespace guardjit {
namespace {

__attribute__((noinline)) void EmptyFunction(void* p) {
  benchmark::DoNotOptimize(p);
}

void BM_EmptyCall(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) EmptyFunction(&x);
}
BENCHMARK(BM_EmptyCall);

std::unique_ptr<EagerInterpreter> TinyGraph() {
  GraphBuilder b("tiny");
  (void)b.AddPlaceholder("x");
  (void)b.AddPlaceholder("y");
  (void)b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  (void)b.AddNode("relu", "aten.relu.default", {Arg::Ref("add")});
  (void)b.AddNode("mul", "aten.mul.Tensor",
                  {Arg::Ref("relu"), Arg::Float(2.0)});
  (void)b.SetOutputs({Arg::Ref("mul")});
  return *EagerInterpreter::Create(std::shared_ptr<const Graph>(*b.Finish()));
}

void BM_EagerTinyGraph(benchmark::State& state) {
  auto interp = TinyGraph();
  Tensor x = *Tensor::Zeros(DType::kFloat32, {1});
  Tensor y = *Tensor::Zeros(DType::kFloat32, {1});
  std::vector<Tensor> inputs = {x, y};
  for (auto _ : state) {
    auto out = interp->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_EagerTinyGraph);

constexpr int64_t kBig = 16 << 20;

void BM_Memcpy(benchmark::State& state) {
  std::vector<float> src(kBig, 1.0f), dst(kBig);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kBig * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBig * sizeof(float) * 2);
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

void BM_EagerAdd16M(benchmark::State& state) {
  GraphBuilder b("add");
  (void)b.AddPlaceholder("x");
  (void)b.AddPlaceholder("y");
  (void)b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  (void)b.SetOutputs({Arg::Ref("add")});
  auto interp =
      *EagerInterpreter::Create(std::shared_ptr<const Graph>(*b.Finish()));
  std::vector<Tensor> inputs = {*Tensor::Zeros(DType::kFloat32, {kBig}),
                                *Tensor::Zeros(DType::kFloat32, {kBig})};
  for (auto _ : state) {
    auto out = interp->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * kBig * sizeof(float) * 3);
}
BENCHMARK(BM_EagerAdd16M)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace guardjit

BENCHMARK_MAIN();
