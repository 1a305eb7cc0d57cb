// Compiled-kernel bandwidth against memcpy of the same bytes, in one process:
//   BM_Memcpy16M         memcpy of 16M float32 (reads 64 MiB, writes 64 MiB)
//   BM_FusedChain8_16M   an 8-op pointwise chain over 16M float32 through the
//                        JIT's executable (one fused kernel: same bytes)
//   BM_EagerChain8_16M   the same graph run by the eager interpreter
//   BM_CApiChain8_16M/0  the same graph through gj_function_call into a
//                        caller buffer reused across calls (what a host
//                        sees: guards, dispatch, output handling)
//   BM_CApiChain8_16M/1  through gj_function_call_alloc, each output released
//   BM_CApiSoftmax4096x1024, BM_CApiLayerNorm4096x1024   the same for those
//   BM_Softmax4096x1024, BM_LayerNorm4096x1024   one fused kernel each
//   BM_Softmax32x1024InCache   softmax's arithmetic alone (cache resident)
//   BM_CApiSoftmax8x64x64, BM_CApiCausalSoftmax8x64x64   attention scores of
//                        8 heads at sequence 64 through gj_function_call:
//                        softmax(x / c), and the causal form torch.export
//                        writes for a masked matmul attention (mask from
//                        arange, -inf where the key is after the query): the
//                        second's time over the first's is what the mask
//                        costs (half the scores are -inf; their exp must not
//                        take the CPU's denormal assists)
//   BM_GeluErf16M        gelu(x) = x/2 (1 + erf(x/sqrt 2)) over 16M float32
//   BM_Embedding16Kx256  embedding rows gathered at 16K random indices from
//                        a [32K, 256] float32 table (16 MiB out); bytes are
//                        one read and one write of the output; the eager
//                        kernel of the same graph beside it
// Each JIT benchmark reports `vs_memcpy`: its bytes per second (one read and
// one write of the tensor) over memcpy's for those bytes, the two run
// alternately in the same loop (bench::TimeAgainstBaseline). Single-threaded
// with GJ_NUM_THREADS=1.
//
// The executable allocates its 64 MiB output on every call. glibc serves
// that with a fresh mmap (page faults, kernel zeroing) unless told to keep
// freed memory, which main() does as a long-running process would
// (bench::KeepLargeBlocksOnHeap); GJ_BENCH_DEFAULT_MALLOC=1 keeps glibc's
// defaults.

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/graph_builder.h"
#include "guardjit/guardjit.h"
#include "jit/jit_compiler.h"
#include "perf/jit/bench_util.h"
#include "runtime/eager_interpreter.h"

namespace guardjit {
namespace {

constexpr int64_t kBig = 16 << 20;

JitCompiler& Jit() {
  static JitCompiler* jit = JitCompiler::Create().value().release();
  return *jit;
}

void BM_Memcpy16M(benchmark::State& state) {
  const size_t bytes = kBig * sizeof(float);
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
}
BENCHMARK(BM_Memcpy16M)->Unit(benchmark::kMillisecond);

// Runs `exe` on `inputs` in the benchmark loop, each run followed by a
// memcpy of `bytes` (one read plus one write of the main tensor) between
// buffers of its own: vs_memcpy is the ratio of the summed times, both
// measured under the same conditions (the benchmark's time is the runs').
void RunCompiled(benchmark::State& state, const Executable& exe,
                 const std::vector<Tensor>& inputs, size_t bytes) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const auto copy = [&] {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  double seconds = 0, memcpy_seconds = 0;
  if (!bench::TimeAgainstBaseline(
          state, [&] { return RunToVector(exe, inputs); }, copy, &seconds,
          &memcpy_seconds)) {
    return;
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
  state.counters["vs_memcpy"] = memcpy_seconds / seconds;
}

std::unique_ptr<Executable> Compile(std::shared_ptr<const Graph> graph,
                                    const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = Jit().Compile(std::move(graph), spec);
  if (!exe.ok()) {
    fprintf(stderr, "compile failed: %s\n", exe.status().ToString().c_str());
    std::abort();
  }
  return *std::move(exe);
}

Tensor Filled(DType dtype, IntSpan sizes) {
  Tensor t = *Tensor::Empty(dtype, sizes);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (i % 1000) * 0.004f - 2.0f;
  return t;
}

// x -> 8 pointwise ops (one input, one output).
std::shared_ptr<const Graph> Chain8() {
  GraphBuilder b("chain8");
  (void)b.AddPlaceholder("x");
  (void)b.AddNode("v0", "aten.mul.Scalar", {Arg::Ref("x"), Arg::Float(0.5)});
  (void)b.AddNode("v1", "aten.add.Scalar", {Arg::Ref("v0"), Arg::Float(1.0)});
  (void)b.AddNode("v2", "aten.relu.default", {Arg::Ref("v1")});
  (void)b.AddNode("v3", "aten.mul.Tensor", {Arg::Ref("v2"), Arg::Ref("x")});
  (void)b.AddNode("v4", "aten.neg.default", {Arg::Ref("v3")});
  (void)b.AddNode("v5", "aten.sub.Tensor", {Arg::Ref("v4"), Arg::Ref("x")});
  (void)b.AddNode("v6", "aten.abs.default", {Arg::Ref("v5")});
  (void)b.AddNode("v7", "aten.maximum.default",
                  {Arg::Ref("v6"), Arg::Ref("v0")});
  (void)b.SetOutputs({Arg::Ref("v7")});
  return std::shared_ptr<const Graph>(*b.Finish());
}

void BM_FusedChain8_16M(benchmark::State& state) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {kBig})};
  auto exe = Compile(Chain8(), inputs);
  RunCompiled(state, *exe, inputs, kBig * sizeof(float));
}
BENCHMARK(BM_FusedChain8_16M)->Unit(benchmark::kMillisecond)->UseManualTime();

// A function of a context with the CPU JIT, from a graph in text form.
struct CApiFunction {
  explicit CApiFunction(const std::string& text) {
    gj_context_create(nullptr, &ctx);
    if (gj_error* e = gj_graph_from_text(ctx, text.data(), text.size(), nullptr,
                                         &graph)) {
      fprintf(stderr, "graph: %s\n", gj_error_message(e));
      std::abort();
    }
    gj_function_create(ctx, graph, nullptr, &fn);
  }
  ~CApiFunction() {
    gj_function_destroy(fn);
    gj_graph_destroy(graph);
    gj_context_destroy(ctx);
  }
  gj_context* ctx = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
};

// A DLTensor over a contiguous float32 tensor (shape storage in `shape`).
DLTensor Dl(const Tensor& t, std::vector<int64_t>& shape) {
  shape.assign(t.sizes().begin(), t.sizes().end());
  DLTensor d{};
  d.data = t.data();
  d.device = {kDLCPU, 0};
  d.ndim = t.dim();
  d.dtype = {kDLFloat, 32, 1};
  d.shape = shape.data();
  return d;
}

// `text`'s graph through gj_function_call into caller tensors of `outputs`'
// shapes reused across calls (range(0) == 0), or gj_function_call_alloc with
// each output released (1); vs_memcpy as RunCompiled's, so its ratio to the
// kernel-only benchmark of the same graph is the share of the kernel's speed
// a host sees.
void RunThroughCApi(benchmark::State& state, const std::string& text,
                    const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs, size_t bytes) {
  const bool alloc = state.range(0) == 1;
  CApiFunction c(text);
  std::vector<std::vector<int64_t>> shapes(inputs.size() + outputs.size());
  std::vector<DLTensor> dl;
  dl.reserve(shapes.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    dl.push_back(Dl(inputs[i], shapes[i]));
  for (size_t i = 0; i < outputs.size(); ++i) {
    dl.push_back(Dl(outputs[i], shapes[inputs.size() + i]));
  }
  std::vector<const DLTensor*> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(&dl[i]);
  for (size_t i = 0; i < outputs.size(); ++i) {
    out.push_back(&dl[inputs.size() + i]);
  }
  std::vector<DLManagedTensor*> results(outputs.size());
  auto call = [&]() -> gj_error* {
    if (!alloc) {
      return gj_function_call(c.fn, in.data(), in.size(), out.data(),
                              out.size(), nullptr);
    }
    gj_error* e = gj_function_call_alloc(c.fn, in.data(), in.size(), nullptr,
                                         results.data(), results.size());
    for (DLManagedTensor* r : results) gj_tensor_release(r);
    return e;
  };
  if (gj_error* e = call()) {  // the compile
    state.SkipWithError(gj_error_message(e));
    gj_error_destroy(e);
    return;
  }
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double seconds = 0, memcpy_seconds = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    gj_error* e = call();
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      return;
    }
    state.SetIterationTime(t);
    seconds += t;
    start = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    memcpy_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  state.SetBytesProcessed(state.iterations() * 2 * bytes);
  state.counters["vs_memcpy"] = memcpy_seconds / seconds;
}

constexpr char kChain8Text[] = R"pb(
  name: "chain8"
  placeholders { name: "x" }
  nodes {
    name: "v0"
    target: "aten.mul.Scalar"
    args { ref: "x" }
    args { f: 0.5 }
  }
  nodes {
    name: "v1"
    target: "aten.add.Scalar"
    args { ref: "v0" }
    args { f: 1.0 }
  }
  nodes {
    name: "v2"
    target: "aten.relu.default"
    args { ref: "v1" }
  }
  nodes {
    name: "v3"
    target: "aten.mul.Tensor"
    args { ref: "v2" }
    args { ref: "x" }
  }
  nodes {
    name: "v4"
    target: "aten.neg.default"
    args { ref: "v3" }
  }
  nodes {
    name: "v5"
    target: "aten.sub.Tensor"
    args { ref: "v4" }
    args { ref: "x" }
  }
  nodes {
    name: "v6"
    target: "aten.abs.default"
    args { ref: "v5" }
  }
  nodes {
    name: "v7"
    target: "aten.maximum.default"
    args { ref: "v6" }
    args { ref: "v0" }
  }
  outputs { ref: "v7" }
)pb";

void BM_CApiChain8_16M(benchmark::State& state) {
  RunThroughCApi(state, kChain8Text, {Filled(DType::kFloat32, {kBig})},
                 {*Tensor::Empty(DType::kFloat32, {kBig})},
                 kBig * sizeof(float));
}
BENCHMARK(BM_CApiChain8_16M)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

void BM_EagerChain8_16M(benchmark::State& state) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {kBig})};
  auto eager = *EagerInterpreter::Create(Chain8());
  for (auto _ : state) {
    auto out = eager->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBig * sizeof(float));
}
BENCHMARK(BM_EagerChain8_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

std::shared_ptr<const Graph> OneOp(const char* target, std::vector<Arg> args,
                                   int inputs, int outputs) {
  GraphBuilder b(target);
  for (int i = 0; i < inputs; ++i) (void)b.AddPlaceholder(absl::StrCat("x", i));
  (void)b.AddNode("op", target, std::move(args));
  std::vector<Arg> outs;
  for (int k = 0; k < outputs; ++k) {
    const std::string name = absl::StrCat("o", k);
    (void)b.AddNode(name, "getitem", {Arg::Ref("op"), Arg::Int(k)});
    outs.push_back(Arg::Ref(name));
  }
  if (outputs == 1) outs = {Arg::Ref("op")};
  (void)b.SetOutputs(outs);
  return std::shared_ptr<const Graph>(*b.Finish());
}

// softmax over the last dim of [rows, 1024] float32: one fused kernel.
void RunSoftmax(benchmark::State& state, int64_t rows) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {rows, 1024})};
  auto exe =
      Compile(OneOp("aten._softmax.default",
                    {Arg::Ref("x0"), Arg::Int(-1), Arg::Bool(false)}, 1, 1),
              inputs);
  RunCompiled(state, *exe, inputs, inputs[0].numel() * sizeof(float));
}

void BM_Softmax4096x1024(benchmark::State& state) { RunSoftmax(state, 4096); }
BENCHMARK(BM_Softmax4096x1024)->Unit(benchmark::kMillisecond)->UseManualTime();

void BM_CApiSoftmax4096x1024(benchmark::State& state) {
  RunThroughCApi(state, R"pb(
                   placeholders { name: "x" }
                   nodes {
                     name: "y"
                     target: "aten._softmax.default"
                     args { ref: "x" }
                     args { i: -1 }
                     args { b: false }
                   }
                   outputs { ref: "y" }
                 )pb",
                 {Filled(DType::kFloat32, {4096, 1024})},
                 {*Tensor::Empty(DType::kFloat32, {4096, 1024})},
                 4096 * 1024 * sizeof(float));
}
BENCHMARK(BM_CApiSoftmax4096x1024)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

// The same kernel on 32 rows (128 KiB in and out, cache resident): its time
// is the arithmetic (mostly exp), which the 4096-row case overlaps with DRAM
// traffic; vs_memcpy here is against an in-cache copy.
void BM_Softmax32x1024InCache(benchmark::State& state) {
  RunSoftmax(state, 32);
}
BENCHMARK(BM_Softmax32x1024InCache)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// Attention scores [1, 8, 64, 64]: softmax(x / c) and the causal form
// (torch.export's text for `att.masked_fill(~tril, -inf)`), through the C API.
constexpr char kScoresPlaceholder[] = R"pb(
  placeholders {
    name: "x"
    meta { dtype: FLOAT32 sizes: 1 sizes: 8 sizes: 64 sizes: 64 }
  }
  nodes {
    name: "div"
    target: "aten.div.Tensor"
    args { ref: "x" }
    args { f: 5.65 }
  }
)pb";

void RunScores(benchmark::State& state, const std::string& body) {
  RunThroughCApi(state, absl::StrCat(kScoresPlaceholder, body),
                 {Filled(DType::kFloat32, {1, 8, 64, 64})},
                 {*Tensor::Empty(DType::kFloat32, {1, 8, 64, 64})},
                 8 * 64 * 64 * sizeof(float));
}

void BM_CApiSoftmax8x64x64(benchmark::State& state) {
  RunScores(state, R"pb(
    nodes {
      name: "y"
      target: "aten._softmax.default"
      args { ref: "div" }
      args { i: -1 }
      args { b: false }
    }
    outputs { ref: "y" }
  )pb");
}
BENCHMARK(BM_CApiSoftmax8x64x64)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

void BM_CApiCausalSoftmax8x64x64(benchmark::State& state) {
  RunScores(state, R"pb(
    nodes {
      name: "keys"
      target: "aten.arange.start_step"
      args { i: 0 }
      args { i: 64 }
    }
    nodes {
      name: "row"
      target: "aten.unsqueeze.default"
      args { ref: "keys" }
      args { i: -2 }
    }
    nodes {
      name: "col"
      target: "aten.unsqueeze.default"
      args { ref: "keys" }
      args { i: -1 }
    }
    nodes {
      name: "sub"
      target: "aten.sub.Tensor"
      args { ref: "row" }
      args { ref: "col" }
    }
    nodes {
      name: "keep"
      target: "aten.le.Scalar"
      args { ref: "sub" }
      args { i: 0 }
    }
    nodes {
      name: "drop"
      target: "aten.bitwise_not.default"
      args { ref: "keep" }
    }
    nodes {
      name: "ninf"
      target: "aten.scalar_tensor.default"
      args { f: -inf }
      kwargs {
        key: "dtype"
        value { dtype: FLOAT32 }
      }
    }
    nodes {
      name: "masked"
      target: "aten.where.self"
      args { ref: "drop" }
      args { ref: "ninf" }
      args { ref: "div" }
    }
    nodes {
      name: "y"
      target: "aten._softmax.default"
      args { ref: "masked" }
      args { i: -1 }
      args { b: false }
    }
    outputs { ref: "y" }
  )pb");
}
BENCHMARK(BM_CApiCausalSoftmax8x64x64)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// gelu (erf form) over 16M float32: one kernel whose loop calls erff; with
// libmvec (jit/llvm/libmvec.h) the loop is vectorized around its SIMD variant.
void BM_GeluErf16M(benchmark::State& state) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {kBig})};
  auto exe =
      Compile(OneOp("aten.gelu.default", {Arg::Ref("x0")}, 1, 1), inputs);
  RunCompiled(state, *exe, inputs, kBig * sizeof(float));
}
BENCHMARK(BM_GeluErf16M)->Unit(benchmark::kMillisecond)->UseManualTime();

// 16K random rows of a [32K, 256] table, and the graph around the lookup.
std::vector<Tensor> EmbeddingInputs() {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {32768, 256}),
                                *Tensor::Empty(DType::kInt64, {16384})};
  uint64_t state = 12345;
  int64_t* p = inputs[1].data_as<int64_t>();
  for (int64_t i = 0; i < 16384; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<int64_t>(state >> 33) % 32768;
  }
  return inputs;
}
std::shared_ptr<const Graph> Embedding() {
  return OneOp("aten.embedding.default", {Arg::Ref("x0"), Arg::Ref("x1")}, 2,
               1);
}

void BM_Embedding16Kx256(benchmark::State& state) {
  const std::vector<Tensor> inputs = EmbeddingInputs();
  auto exe = Compile(Embedding(), inputs);
  RunCompiled(state, *exe, inputs, 16384 * 256 * sizeof(float));
}
BENCHMARK(BM_Embedding16Kx256)->Unit(benchmark::kMillisecond)->UseManualTime();

void BM_EagerEmbedding16Kx256(benchmark::State& state) {
  const std::vector<Tensor> inputs = EmbeddingInputs();
  auto eager = *EagerInterpreter::Create(Embedding());
  for (auto _ : state) {
    auto out = eager->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * 2 * 16384 * 256 * sizeof(float));
}
BENCHMARK(BM_EagerEmbedding16Kx256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_LayerNorm4096x1024(benchmark::State& state) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, {4096, 1024}),
                                Filled(DType::kFloat32, {1024}),
                                Filled(DType::kFloat32, {1024})};
  auto exe = Compile(OneOp("aten.native_layer_norm.default",
                           {Arg::Ref("x0"), Arg::OfList({Arg::Int(1024)}),
                            Arg::Ref("x1"), Arg::Ref("x2"), Arg::Float(1e-5)},
                           3, 3),
                     inputs);
  RunCompiled(state, *exe, inputs, inputs[0].numel() * sizeof(float));
}
BENCHMARK(BM_LayerNorm4096x1024)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

void BM_CApiLayerNorm4096x1024(benchmark::State& state) {
  RunThroughCApi(
      state, R"pb(
        placeholders { name: "x" }
        placeholders { name: "w" }
        placeholders { name: "b" }
        nodes {
          name: "ln"
          target: "aten.native_layer_norm.default"
          args { ref: "x" }
          args { list { items { i: 1024 } } }
          args { ref: "w" }
          args { ref: "b" }
          args { f: 1e-5 }
        }
        nodes {
          name: "y"
          target: "getitem"
          args { ref: "ln" }
          args { i: 0 }
        }
        nodes {
          name: "mean"
          target: "getitem"
          args { ref: "ln" }
          args { i: 1 }
        }
        nodes {
          name: "rstd"
          target: "getitem"
          args { ref: "ln" }
          args { i: 2 }
        }
        outputs { ref: "y" }
        outputs { ref: "mean" }
        outputs { ref: "rstd" }
      )pb",
      {Filled(DType::kFloat32, {4096, 1024}), Filled(DType::kFloat32, {1024}),
       Filled(DType::kFloat32, {1024})},
      {*Tensor::Empty(DType::kFloat32, {4096, 1024}),
       *Tensor::Empty(DType::kFloat32, {4096, 1}),
       *Tensor::Empty(DType::kFloat32, {4096, 1})},
      4096 * 1024 * sizeof(float));
}
BENCHMARK(BM_CApiLayerNorm4096x1024)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  guardjit::bench::KeepLargeBlocksOnHeap();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
