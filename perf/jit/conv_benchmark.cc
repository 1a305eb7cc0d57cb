// Extern convolution with a fused epilogue against OpenBLAS alone, in one
// process, float32:
//   conv3x3: x [8, 64, 56, 56], w [64, 64, 3, 3], padding 1, bias + relu
//   conv1x1: x [8, 256, 28, 28], w [64, 256, 1, 1], bias + relu
//   conv3x3_b1, conv1x1_b1: the same at batch 1 (a serving call: with more
//   threads than images the step splits each image's work across them)
//   BM_Baseline/<conv>   one cblas_sgemm per image on its column matrix,
//                        built before timing (a 1x1 kernel's columns are the
//                        image), into a preallocated output; no im2col, no
//                        bias, no activation: the floor a conv step can reach
//   BM_Jit/<conv>        relu(convolution(x, w, bias)) through JitCompiler,
//                        x, w and bias inputs: one conv step (oneDNN, the
//                        weight reordered per call; GJ_ONEDNN=0: im2col per
//                        image, sgemm, bias + relu fused per image)
//   BM_JitConstants/<conv> the same with w and bias graph constants (a
//                        served model's): the weight packed once
//   BM_Eager/<conv>      the same graph on the eager interpreter
// Each iteration of the graph benchmarks also times one baseline run, so
// `vs_baseline` (graph time / baseline time: above 1 is the cost of im2col,
// the epilogue and the output allocation) is measured under the same load,
// and one direct oneDNN call, so `vs_onednn` compares with what a host would
// embed instead: a oneDNN convolution primitive in the layouts it picks,
// its weight packed before timing, bias and relu as post-ops, reordering
// the NCHW input in and the result out to NCHW (as the graph's contract
// is), on oneDNN's own OpenMP threads (one per core, as the pool has by
// default: set OMP_NUM_THREADS with GJ_NUM_THREADS).
// `GFLOPs` counts 2 * multiply-adds per call.
//
// Threads: the ThreadPool's (GJ_NUM_THREADS, default one per hardware
// thread); main() gives OpenBLAS the same count for the baseline and the
// eager path. Run with GJ_NUM_THREADS=1 OMP_NUM_THREADS=1 for
// single-threaded numbers.

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <dnnl.hpp>
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

struct ConvShape {
  int64_t batch, in_channels, out_channels, size, kernel, padding;

  int64_t out_size() const { return size + 2 * padding - kernel + 1; }
  int64_t rows() const { return in_channels * kernel * kernel; }
  int64_t cols() const { return out_size() * out_size(); }
  double flops() const { return 2.0 * batch * out_channels * rows() * cols(); }
};

constexpr ConvShape kConv3x3 = {8, 64, 64, 56, 3, 1};
constexpr ConvShape kConv1x1 = {8, 256, 64, 28, 1, 0};
constexpr ConvShape kConv3x3Batch1 = {1, 64, 64, 56, 3, 1};
constexpr ConvShape kConv1x1Batch1 = {1, 256, 64, 28, 1, 0};

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

// relu(convolution(x, w, bias)): x, w and bias inputs, or with `constants`
// w and bias graph constants (a served model's) and x the only input.
std::shared_ptr<const Graph> ConvBiasRelu(const ConvShape& s,
                                          bool constants = false) {
  GraphBuilder b(constants ? "conv_bias_relu_constants" : "conv_bias_relu");
  (void)b.AddPlaceholder("x");
  if (constants) {
    (void)b.AddConstant(
        "w", Filled({s.out_channels, s.in_channels, s.kernel, s.kernel}, 2));
    (void)b.AddConstant("bias", Filled({s.out_channels}, 3));
  } else {
    (void)b.AddPlaceholder("w");
    (void)b.AddPlaceholder("bias");
  }
  const auto pair = [](int64_t v) {
    return Arg::OfList({Arg::Int(v), Arg::Int(v)});
  };
  (void)b.AddNode(
      "conv", "aten.convolution.default",
      {Arg::Ref("x"), Arg::Ref("w"), Arg::Ref("bias"), pair(1), pair(s.padding),
       pair(1), Arg::Bool(false), pair(0), Arg::Int(1)});
  (void)b.AddNode("out", "aten.relu.default", {Arg::Ref("conv")});
  (void)b.SetOutputs({Arg::Ref("out")});
  return std::shared_ptr<const Graph>(*b.Finish());
}

// A direct oneDNN convolution, as a host embedding oneDNN would run it (see
// the top of the file); Run returns its seconds.
class OneDnnBaseline {
 public:
  explicit OneDnnBaseline(const ConvShape& s)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const int64_t out = s.out_size();
    const memory::dims src = {s.batch, s.in_channels, s.size, s.size};
    const memory::dims dst = {s.batch, s.out_channels, out, out};
    const memory::dims weights = {s.out_channels, s.in_channels, s.kernel,
                                  s.kernel};
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct,
            memory::desc(src, f32, tag::any),
            memory::desc(weights, f32, tag::any),
            memory::desc({s.out_channels}, f32, tag::x),
            memory::desc(dst, f32, tag::any), {1, 1}, {s.padding, s.padding},
            {s.padding, s.padding}),
        attr, engine_);
    conv_ = dnnl::convolution_forward(pd);
    x_ = Filled({s.batch, s.in_channels, s.size, s.size}, 1);
    w_ = Filled({s.out_channels, s.in_channels, s.kernel, s.kernel}, 2);
    b_ = Filled({s.out_channels}, 3);
    y_ = Filled({s.batch, s.out_channels, out, out}, 0);
    user_src_ = memory({src, f32, tag::nchw}, engine_, x_.data());
    user_dst_ = memory({dst, f32, tag::nchw}, engine_, y_.data());
    src_ = memory(pd.src_desc(), engine_);
    dst_ = memory(pd.dst_desc(), engine_);
    weights_ = memory(pd.weights_desc(), engine_);
    bias_ = memory(pd.bias_desc(), engine_, b_.data());
    memory user_weights({weights, f32, tag::oihw}, engine_, w_.data());
    dnnl::reorder(user_weights, weights_)
        .execute(stream_, user_weights, weights_);
    stream_.wait();
    if (pd.src_desc() != user_src_.get_desc()) {
      src_reorder_ = dnnl::reorder(user_src_, src_);
    }
    if (pd.dst_desc() != user_dst_.get_desc()) {
      dst_reorder_ = dnnl::reorder(dst_, user_dst_);
    }
  }

  double Run() {
    const auto start = std::chrono::steady_clock::now();
    const bool reorder_src = src_reorder_.get(true) != nullptr;
    const bool reorder_dst = dst_reorder_.get(true) != nullptr;
    if (reorder_src) src_reorder_.execute(stream_, user_src_, src_);
    conv_.execute(stream_, {{DNNL_ARG_SRC, reorder_src ? src_ : user_src_},
                            {DNNL_ARG_WEIGHTS, weights_},
                            {DNNL_ARG_BIAS, bias_},
                            {DNNL_ARG_DST, reorder_dst ? dst_ : user_dst_}});
    if (reorder_dst) dst_reorder_.execute(stream_, dst_, user_dst_);
    stream_.wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward conv_;
  dnnl::reorder src_reorder_, dst_reorder_;
  Tensor x_, w_, b_, y_;
  dnnl::memory user_src_, user_dst_, src_, dst_, weights_, bias_;
};

std::vector<Tensor> Inputs(const ConvShape& s) {
  return {Filled({s.batch, s.in_channels, s.size, s.size}, 1),
          Filled({s.out_channels, s.in_channels, s.kernel, s.kernel}, 2),
          Filled({s.out_channels}, 3)};
}

// One cblas_sgemm per image on column matrices built once, into a
// preallocated output; Run returns its seconds.
class Baseline {
 public:
  explicit Baseline(const ConvShape& s)
      : s_(s),
        w_(Filled({s.out_channels, s.rows()}, 2)),
        cols_(Columns(s)),
        out_(Filled({s.batch, s.out_channels, s.cols()}, 0)) {}

  double Run() {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t n = 0; n < s_.batch; ++n) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s_.out_channels,
                  s_.cols(), s_.rows(), 1.0f, w_.data_as<float>(), s_.rows(),
                  cols_.data_as<float>() + n * s_.rows() * s_.cols(), s_.cols(),
                  0.0f, out_.data_as<float>() + n * s_.out_channels * s_.cols(),
                  s_.cols());
    }
    benchmark::DoNotOptimize(out_.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

 private:
  // Every image's column matrix [rows, cols] of the benchmark's input, stride
  // 1: [N, rows, cols].
  static Tensor Columns(const ConvShape& s) {
    const Tensor x = Filled({s.batch, s.in_channels, s.size, s.size}, 1);
    Tensor cols =
        *Tensor::Empty(DType::kFloat32, {s.batch, s.rows(), s.cols()});
    const int64_t size = s.size, out = s.out_size(), pad = s.padding;
    float* row = cols.data_as<float>();
    for (int64_t n = 0; n < s.batch; ++n) {
      const float* image = x.data_as<float>() + n * s.in_channels * size * size;
      for (int64_t c = 0; c < s.in_channels; ++c) {
        const float* plane = image + c * size * size;
        for (int64_t ky = 0; ky < s.kernel; ++ky) {
          for (int64_t kx = 0; kx < s.kernel; ++kx) {
            for (int64_t oy = 0; oy < out; ++oy, row += out) {
              const int64_t iy = oy - pad + ky;
              for (int64_t ox = 0; ox < out; ++ox) {
                const int64_t ix = ox - pad + kx;
                row[ox] = iy < 0 || iy >= size || ix < 0 || ix >= size
                              ? 0.0f
                              : plane[iy * size + ix];
              }
            }
          }
        }
      }
    }
    return cols;
  }

  ConvShape s_;
  Tensor w_, cols_, out_;
};

void BM_Baseline(benchmark::State& state, ConvShape s) {
  Baseline baseline(s);
  double seconds = 0;
  for (auto _ : state) {
    const double t = baseline.Run();
    state.SetIterationTime(t);
    seconds += t;
  }
  state.counters["GFLOPs"] = s.flops() * state.iterations() / seconds / 1e9;
  state.counters["threads"] = ThreadPool::Global().num_threads();
}

// Times `run` per iteration, with one baseline run and one direct oneDNN
// run after each.
template <typename Fn>
void RunAgainstBaseline(benchmark::State& state, const ConvShape& s, Fn run) {
  Baseline baseline(s);
  OneDnnBaseline onednn(s);
  double seconds, baseline_seconds, onednn_seconds = 0;
  if (!bench::TimeAgainstBaseline(
          state, run,
          [&] {
            onednn_seconds += onednn.Run();
            return baseline.Run();
          },
          &seconds, &baseline_seconds)) {
    return;
  }
  state.counters["GFLOPs"] = s.flops() * state.iterations() / seconds / 1e9;
  state.counters["vs_baseline"] = seconds / baseline_seconds;
  state.counters["vs_onednn"] = seconds / onednn_seconds;
}

// The graph compiled by JitCompiler for the benchmark's inputs (x alone
// with `constants`).
void RunJit(benchmark::State& state, const ConvShape& s, bool constants) {
  std::vector<Tensor> inputs = Inputs(s);
  if (constants) inputs.resize(1);
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = Jit().Compile(ConvBiasRelu(s, constants), spec);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return;
  }
  RunAgainstBaseline(state, s, [&] { return RunToVector(**exe, inputs); });
}

void BM_Jit(benchmark::State& state, ConvShape s) { RunJit(state, s, false); }

void BM_JitConstants(benchmark::State& state, ConvShape s) {
  RunJit(state, s, true);
}

void BM_Eager(benchmark::State& state, ConvShape s) {
  const std::vector<Tensor> inputs = Inputs(s);
  auto eager = *EagerInterpreter::Create(ConvBiasRelu(s));
  RunAgainstBaseline(state, s, [&] { return eager->Run(inputs); });
}

#define GJ_CONV_BENCHMARKS(fn)                      \
  BENCHMARK_CAPTURE(fn, conv3x3, kConv3x3)          \
      ->Unit(benchmark::kMillisecond)               \
      ->UseManualTime();                            \
  BENCHMARK_CAPTURE(fn, conv1x1, kConv1x1)          \
      ->Unit(benchmark::kMillisecond)               \
      ->UseManualTime();                            \
  BENCHMARK_CAPTURE(fn, conv3x3_b1, kConv3x3Batch1) \
      ->Unit(benchmark::kMillisecond)               \
      ->UseManualTime();                            \
  BENCHMARK_CAPTURE(fn, conv1x1_b1, kConv1x1Batch1) \
      ->Unit(benchmark::kMillisecond)               \
      ->UseManualTime()

GJ_CONV_BENCHMARKS(BM_Baseline);
GJ_CONV_BENCHMARKS(BM_Jit);
GJ_CONV_BENCHMARKS(BM_JitConstants);
GJ_CONV_BENCHMARKS(BM_Eager);

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
