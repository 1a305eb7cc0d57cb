// How long the JitCompiler takes to compile a 10-op graph (lowering, fusion,
// LLVM O3 and machine code), next to a compile that hits the kernel cache:
//   BM_Compile10OpsCold  every iteration's graph has a different constant,
//                        so its kernel is new (a cache miss)
//   BM_Compile10OpsWarm  the same graph every time (one cache hit per
//                        kernel; lowering and fusion still run)

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/graph_builder.h"
#include "jit/jit_compiler.h"

namespace guardjit {
namespace {

// x, y -> 10 pointwise ops, with `scale` in the first.
std::shared_ptr<const Graph> TenOps(double scale) {
  GraphBuilder b("ten_ops");
  (void)b.AddPlaceholder("x");
  (void)b.AddPlaceholder("y");
  (void)b.AddNode("v0", "aten.mul.Scalar", {Arg::Ref("x"), Arg::Float(scale)});
  (void)b.AddNode("v1", "aten.add.Tensor", {Arg::Ref("v0"), Arg::Ref("y")});
  (void)b.AddNode("v2", "aten.tanh.default", {Arg::Ref("v1")});
  (void)b.AddNode("v3", "aten.mul.Tensor", {Arg::Ref("v2"), Arg::Ref("x")});
  (void)b.AddNode("v4", "aten.sigmoid.default", {Arg::Ref("v3")});
  (void)b.AddNode("v5", "aten.sub.Tensor", {Arg::Ref("v4"), Arg::Ref("y")});
  (void)b.AddNode("v6", "aten.relu.default", {Arg::Ref("v5")});
  (void)b.AddNode("v7", "aten.exp.default", {Arg::Ref("v6")});
  (void)b.AddNode("v8", "aten.maximum.default",
                  {Arg::Ref("v7"), Arg::Ref("x")});
  (void)b.AddNode("v9", "aten.div.Tensor", {Arg::Ref("v8"), Arg::Ref("y")});
  (void)b.SetOutputs({Arg::Ref("v9")});
  return std::shared_ptr<const Graph>(*b.Finish());
}

const Specialization& Spec() {
  static const Specialization spec{
      {{DType::kFloat32, {64, 128}}, {DType::kFloat32, {128}}}};
  return spec;
}

void BM_Compile10OpsCold(benchmark::State& state) {
  auto jit = *JitCompiler::Create();
  int64_t i = 0;
  for (auto _ : state) {
    auto exe =
        jit->Compile(TenOps(1.0 + 1e-6 * static_cast<double>(++i)), Spec());
    if (!exe.ok()) state.SkipWithError("compile failed");
    benchmark::DoNotOptimize(exe);
  }
}
BENCHMARK(BM_Compile10OpsCold)->Unit(benchmark::kMillisecond);

void BM_Compile10OpsWarm(benchmark::State& state) {
  auto jit = *JitCompiler::Create();
  auto graph = TenOps(2.0);
  (void)jit->Compile(graph, Spec());
  for (auto _ : state) {
    auto exe = jit->Compile(graph, Spec());
    if (!exe.ok()) state.SkipWithError("compile failed");
    benchmark::DoNotOptimize(exe);
  }
}
BENCHMARK(BM_Compile10OpsWarm)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace guardjit

BENCHMARK_MAIN();
