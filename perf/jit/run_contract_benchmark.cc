// What a host loses between the compiled program and gj_function_call, at
// one and two threads (issue #13's run-contract targets), in one process:
//   BM_CallVsKernel/<graph>/threads:T
// Each iteration runs the compiled executable directly, writing into
// preallocated outputs (the kernels alone: RunContext destinations, no
// guards, no DLPack), then the same graph through gj_function_call into
// caller DLTensors of a context with T threads, alternately, so both see the
// same machine state. `vs_kernel` = kernel seconds / call seconds (1.0: the
// C API adds nothing; the target is >= 0.9). The benchmark's time is the
// calls'. Graphs: the 8-op pointwise chain over 16M float32, softmax and
// layer_norm over [4096, 1024] float32.
//   BM_EagerCall/chain8_16M/in_place:0|1
// the eager backend's plan of the chain into a caller buffer, with the last
// node writing it in place (1) or the output copied in (0).
// `GJ_BENCH_DEFAULT_MALLOC=1` keeps glibc's malloc defaults (see
// bench::KeepLargeBlocksOnHeap).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/graph_loader.h"
#include "guardjit/guardjit.h"
#include "jit/jit_compiler.h"
#include "perf/jit/bench_util.h"

namespace guardjit {
namespace {

struct Case {
  const char* name;
  const char* text;  // the graph, protobuf text form
  std::vector<std::vector<int64_t>> inputs, outputs;
};

const Case kCases[] = {
    {"chain8_16M",
     R"pb(
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
     )pb",
     {{16 << 20}},
     {{16 << 20}}},
    {"softmax_4096x1024",
     R"pb(
       name: "softmax"
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
     {{4096, 1024}},
     {{4096, 1024}}},
    {"layer_norm_4096x1024",
     R"pb(
       name: "layer_norm"
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
     {{4096, 1024}, {1024}, {1024}},
     {{4096, 1024}, {4096, 1}, {4096, 1}}},
};

Tensor Filled(const std::vector<int64_t>& sizes) {
  Tensor t = *Tensor::Empty(DType::kFloat32, sizes);
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (i % 1000) * 0.004f - 2.0f;
  return t;
}

DLTensor Dl(const Tensor& t) {
  DLTensor d{};
  d.data = t.data();
  d.device = {kDLCPU, 0};
  d.ndim = t.dim();
  d.dtype = {kDLFloat, 32, 1};
  d.shape = const_cast<int64_t*>(t.sizes().data());
  return d;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// `c`'s graph as a host calls it: a context with `backend` and `threads`,
// a function, and DLTensors over `inputs` and `outputs`. `error` holds the
// first setup failure (owned).
struct HostCall {
  HostCall(const Case& c, gj_backend backend, int threads,
           const std::vector<Tensor>& inputs,
           const std::vector<Tensor>& outputs) {
    gj_context_options options;
    gj_context_options_init(&options);
    options.backend = backend;
    options.num_threads = threads;
    error = gj_context_create(&options, &context);
    if (error == nullptr) {
      error = gj_graph_from_text(context, c.text, std::strlen(c.text), nullptr,
                                 &graph);
    }
    if (error == nullptr)
      error = gj_function_create(context, graph, nullptr, &fn);
    for (const Tensor& t : inputs) dl.push_back(Dl(t));
    for (const Tensor& t : outputs) dl.push_back(Dl(t));
    for (size_t i = 0; i < dl.size(); ++i) {
      (i < inputs.size() ? in : out).push_back(&dl[i]);
    }
  }
  ~HostCall() {
    gj_error_destroy(error);
    gj_function_destroy(fn);
    gj_graph_destroy(graph);
    gj_context_destroy(context);
  }
  gj_error* Call(const gj_call_options* options) const {
    return gj_function_call(fn, in.data(), in.size(), out.data(), out.size(),
                            options);
  }

  gj_context* context = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
  gj_error* error = nullptr;
  std::vector<DLTensor> dl;
  std::vector<const DLTensor*> in, out;
};

void BM_CallVsKernel(benchmark::State& state, const Case* c) {
  const int threads = static_cast<int>(state.range(0));
  std::vector<Tensor> inputs, outputs, kernel_outputs;
  for (const auto& s : c->inputs) inputs.push_back(Filled(s));
  for (const auto& s : c->outputs) {
    outputs.push_back(*Tensor::Empty(DType::kFloat32, s));
    kernel_outputs.push_back(*Tensor::Empty(DType::kFloat32, s));
  }

  // The kernels alone: the JIT's executable for exactly these inputs.
  JitCompiler::Options jit_options;
  jit_options.num_threads = threads;
  jit_options.fail_instead_of_eager = true;
  auto jit = JitCompiler::Create(jit_options);
  auto graph = LoadGraphFromText(c->text, GraphLoadOptions());
  if (!jit.ok() || !graph.ok()) {
    state.SkipWithError("jit or graph failed");
    return;
  }
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe =
      (*jit)->Compile(std::shared_ptr<const Graph>(*std::move(graph)), spec);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  std::vector<const Tensor*> dests;
  for (const Tensor& t : kernel_outputs) dests.push_back(&t);
  RunContext ctx;
  ctx.destinations = dests;
  std::vector<Tensor> results(kernel_outputs.size());

  // The host's call: a context with `threads` threads.
  HostCall host(*c, GJ_BACKEND_DEFAULT, threads, inputs, outputs);
  if (host.error == nullptr) host.error = host.Call(nullptr);  // the compile
  if (host.error != nullptr) {
    state.SkipWithError(gj_error_message(host.error));
  } else {
    double kernel_seconds = 0, call_seconds = 0;
    for (auto _ : state) {
      auto start = std::chrono::steady_clock::now();
      absl::Status run = (*exe)->Run(ctx, inputs, absl::MakeSpan(results));
      kernel_seconds += Seconds(start);
      start = std::chrono::steady_clock::now();
      host.error = host.Call(nullptr);
      const double t = Seconds(start);
      if (!run.ok() || host.error != nullptr) {
        state.SkipWithError(host.error != nullptr ? gj_error_message(host.error)
                                                  : "kernel run failed");
        break;
      }
      state.SetIterationTime(t);
      call_seconds += t;
    }
    if (call_seconds > 0) {
      state.counters["vs_kernel"] = kernel_seconds / call_seconds;
      state.counters["kernel_ms"] =
          1e3 * kernel_seconds / static_cast<double>(state.iterations());
    }
  }
}

// The eager backend's plan through gj_function_call into a caller buffer:
// range(0) = 1 lets the last node write the output in place; 0 sets a
// one-hour timeout, which makes the call stoppable, so the plan returns its
// own tensor and the C API copies it in (the pre-0.9 behaviour). The ratio of
// the two is what writing in place saves.
void BM_EagerCall(benchmark::State& state, const Case* c) {
  const bool in_place = state.range(0) == 1;
  std::vector<Tensor> inputs, outputs;
  for (const auto& s : c->inputs) inputs.push_back(Filled(s));
  for (const auto& s : c->outputs) {
    outputs.push_back(*Tensor::Empty(DType::kFloat32, s));
  }
  HostCall host(*c, GJ_BACKEND_EAGER, 1, inputs, outputs);
  gj_call_options call_options;
  gj_call_options_init(&call_options);
  if (!in_place) call_options.timeout_us = 3600LL * 1000 * 1000;
  for (auto _ : state) {
    if (host.error != nullptr) break;
    host.error = host.Call(&call_options);
  }
  if (host.error != nullptr) state.SkipWithError(gj_error_message(host.error));
}

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  guardjit::bench::KeepLargeBlocksOnHeap();
  for (const guardjit::Case& c : guardjit::kCases) {
    benchmark::RegisterBenchmark(
        (std::string("BM_CallVsKernel/") + c.name).c_str(),
        guardjit::BM_CallVsKernel, &c)
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  }
  // The eager interpreter's softmax is slow (float64): the chain only.
  benchmark::RegisterBenchmark("BM_EagerCall/chain8_16M",
                               guardjit::BM_EagerCall, &guardjit::kCases[0])
      ->ArgName("in_place")
      ->Arg(0)
      ->Arg(1)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
