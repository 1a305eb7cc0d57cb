// Extern GEMM with a fused epilogue against a direct cblas_sgemm call, in one
// process, 1024x1024x1024 float32:
//   BM_CblasSgemm              cblas_sgemm into a preallocated C (beta = 0)
//   BM_JitAddmmRelu            relu(addmm(bias, x, w)) through JitCompiler:
//                              one GEMM step, bias + relu fused per panel
//   BM_JitLinearRelu           relu(addmm(bias, x, permute(w))), w [N, K]:
//                              BLAS reads w transposed, no copy
//   BM_EagerAddmmRelu          the same graph on the eager interpreter
//                              (bias copy, sgemm with beta = 1, relu pass)
//   BM_JitServedLinear         linear layers at serving batches (an MLP's
//                              8 x 784 -> 512, a GPT-style block's 64-row
//                              products, a classifier head at batch 1) with
//                              constant weights (packed products, weights
//                              packed once) against cblas_sgemm of the shape
// Each iteration of the graph benchmarks also times one cblas_sgemm call of
// the same shape and transposes, so `vs_cblas` (cblas time / graph time) is
// measured under the same load; `GFLOPs` counts 2*M*N*K per call. The graphs
// allocate their output on every call, the baseline does not.
//
// Threads: the ThreadPool's (GJ_NUM_THREADS, default one per hardware
// thread); main() gives OpenBLAS the same count for the baseline and the
// eager path. Run with GJ_NUM_THREADS=1 for single-threaded numbers.

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/graph_builder.h"
#include "jit/jit_compiler.h"
#include "perf/jit/bench_util.h"
#include "runtime/eager_interpreter.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

constexpr int64_t kM = 1024, kN = 1024, kK = 1024;
constexpr double kFlops = 2.0 * kM * kN * kK;

JitCompiler& Jit() {
  static JitCompiler* jit = JitCompiler::Create().value().release();
  return *jit;
}

Tensor Filled(IntSpan sizes, int salt) {
  Tensor t = *Tensor::Empty(DType::kFloat32, sizes);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    p[i] = static_cast<float>((i * 7 + salt) % 1000) * 0.002f - 1.0f;
  }
  return t;
}

// relu(addmm(bias, x, w)); with `linear`, w is [N, K] and permuted first.
std::shared_ptr<const Graph> AddmmRelu(bool linear) {
  GraphBuilder b(linear ? "linear_relu" : "addmm_relu");
  (void)b.AddPlaceholder("x");
  (void)b.AddPlaceholder("w");
  (void)b.AddPlaceholder("bias");
  std::string w = "w";
  if (linear) {
    (void)b.AddNode("wt", "aten.permute.default",
                    {Arg::Ref("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})});
    w = "wt";
  }
  (void)b.AddNode("mm", "aten.addmm.default",
                  {Arg::Ref("bias"), Arg::Ref("x"), Arg::Ref(w)});
  (void)b.AddNode("out", "aten.relu.default", {Arg::Ref("mm")});
  (void)b.SetOutputs({Arg::Ref("out")});
  return std::shared_ptr<const Graph>(*b.Finish());
}

std::vector<Tensor> Inputs(bool linear) {
  return {Filled({kM, kK}, 1),
          linear ? Filled({kN, kK}, 2) : Filled({kK, kN}, 2), Filled({kN}, 3)};
}

// One direct cblas_sgemm of an m x n x k shape (the benchmark's by
// default); returns its seconds.
class Baseline {
 public:
  explicit Baseline(bool transposed_b, int64_t m = kM, int64_t n = kN,
                    int64_t k = kK)
      : m_(m),
        n_(n),
        k_(k),
        a_(Filled({m, k}, 1)),
        b_(Filled({k, n}, 2)),
        c_(Filled({m, n}, 0)),
        trans_b_(transposed_b ? CblasTrans : CblasNoTrans) {}

  double Run() {
    const auto start = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b_, m_, n_, k_, 1.0f,
                a_.data_as<float>(), k_, b_.data_as<float>(),
                trans_b_ == CblasTrans ? k_ : n_, 0.0f, c_.data_as<float>(),
                n_);
    benchmark::DoNotOptimize(c_.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

 private:
  int64_t m_, n_, k_;
  Tensor a_, b_, c_;
  CBLAS_TRANSPOSE trans_b_;
};

void BM_CblasSgemm(benchmark::State& state) {
  Baseline baseline(/*transposed_b=*/false);
  double seconds = 0;
  for (auto _ : state) {
    const double t = baseline.Run();
    state.SetIterationTime(t);
    seconds += t;
  }
  state.counters["GFLOPs"] = kFlops * state.iterations() / seconds / 1e9;
  state.counters["threads"] = ThreadPool::Global().num_threads();
}
BENCHMARK(BM_CblasSgemm)->Unit(benchmark::kMillisecond)->UseManualTime();

// Times `run` per iteration, with one baseline call after each.
template <typename Fn>
void RunAgainstBaseline(benchmark::State& state, bool transposed_b, Fn run) {
  Baseline baseline(transposed_b);
  double seconds, baseline_seconds;
  if (!bench::TimeAgainstBaseline(
          state, run, [&] { return baseline.Run(); }, &seconds,
          &baseline_seconds)) {
    return;
  }
  state.counters["GFLOPs"] = kFlops * state.iterations() / seconds / 1e9;
  state.counters["cblas_GFLOPs"] =
      kFlops * state.iterations() / baseline_seconds / 1e9;
  state.counters["vs_cblas"] = baseline_seconds / seconds;
}

void BM_JitGraph(benchmark::State& state, bool linear) {
  const std::vector<Tensor> inputs = Inputs(linear);
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = Jit().Compile(AddmmRelu(linear), spec);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return;
  }
  RunAgainstBaseline(state, linear, [&] { return RunToVector(**exe, inputs); });
}
BENCHMARK_CAPTURE(BM_JitGraph, AddmmRelu, false)
    ->Name("BM_JitAddmmRelu")
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_JitGraph, LinearRelu, true)
    ->Name("BM_JitLinearRelu")
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

// A served model's linear layer: relu(x @ w^T + bias) at m rows, k -> n
// features (an MNIST MLP's first layer, 8 x 784 -> 512; a GPT-style block's
// products at seq 64; a classifier head at batch 1), w and bias graph
// constants: a packed product on w packed once (jit/steps/packed_gemm.h),
// against a direct cblas_sgemm of the same shape (which packs w on every
// call). The label says what ran it: packed, oneDNN or BLAS.
void BM_JitServedLinear(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  GraphBuilder b("served_linear");
  (void)b.AddPlaceholder("x");
  (void)b.AddConstant("w", Filled({n, k}, 2));
  (void)b.AddConstant("bias", Filled({n}, 3));
  (void)b.AddNode("wt", "aten.permute.default",
                  {Arg::Ref("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})});
  (void)b.AddNode("mm", "aten.addmm.default",
                  {Arg::Ref("bias"), Arg::Ref("x"), Arg::Ref("wt")});
  (void)b.AddNode("out", "aten.relu.default", {Arg::Ref("mm")});
  (void)b.SetOutputs({Arg::Ref("out")});
  const std::vector<Tensor> inputs = {Filled({m, k}, 1)};
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(inputs[0]));
  auto exe = Jit().Compile(std::shared_ptr<const Graph>(*b.Finish()), spec);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return;
  }
  Baseline baseline(/*transposed_b=*/true, m, n, k);
  double seconds, baseline_seconds;
  if (!bench::TimeAgainstBaseline(
          state, [&] { return RunToVector(**exe, inputs); },
          [&] { return baseline.Run(); }, &seconds, &baseline_seconds)) {
    return;
  }
  const double flops = 2.0 * m * n * k;
  state.counters["GFLOPs"] = flops * state.iterations() / seconds / 1e9;
  state.counters["vs_cblas"] = baseline_seconds / seconds;
  const std::string how = (*exe)->Describe();
  state.SetLabel(how.find("packed product") != std::string::npos ? "packed"
                 : how.find("oneDNN") != std::string::npos       ? "oneDNN"
                                                                 : "BLAS");
}
BENCHMARK(BM_JitServedLinear)
    ->Args({8, 784, 512})
    ->Args({64, 256, 768})
    ->Args({64, 256, 256})
    ->Args({64, 256, 1024})
    ->Args({64, 1024, 256})
    ->Args({64, 256, 1000})
    ->Args({1, 512, 1000})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

void BM_EagerAddmmRelu(benchmark::State& state) {
  const std::vector<Tensor> inputs = Inputs(false);
  auto eager = *EagerInterpreter::Create(AddmmRelu(false));
  RunAgainstBaseline(state, false, [&] { return eager->Run(inputs); });
}
BENCHMARK(BM_EagerAddmmRelu)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  guardjit::bench::KeepLargeBlocksOnHeap();
  openblas_set_num_threads(guardjit::ThreadPool::Global().num_threads());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
