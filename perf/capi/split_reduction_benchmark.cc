// A full sum of 64M float32 (256 MiB read, one scalar written) through
// gj_function_call, against memcpy of the same 256 MiB, the two run
// alternately in the same loop:
//   BM_CApiSum64M   reports vs_memcpy = memcpy's seconds / the call's
//                   seconds (above 1: the sum reads its bytes faster than
//                   memcpy copies them); its label says whether explain
//                   reports the sum split.
// The sum has no outer loop: without a split reduction it is one chunk on
// one thread (issue #19). GJ_SPLIT_REDUCTIONS=0 in the environment plans it
// unsplit, as before the split, for comparison in the same build;
// GJ_NUM_THREADS sets the pool's size.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"
#include "guardjit/guardjit.h"

namespace {

constexpr int64_t kElements = int64_t{64} << 20;

void Check(gj_error* error, const char* what) {
  if (error == nullptr) return;
  std::fprintf(stderr, "%s: %s\n", what, gj_error_message(error));
  std::abort();
}

DLTensor Dl(float* data, int ndim, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

void BM_CApiSum64M(benchmark::State& state) {
  gj_context* ctx = nullptr;
  Check(gj_context_create(nullptr, &ctx), "context");
  gj_graph_builder* b = nullptr;
  Check(gj_graph_builder_create(ctx, "total", &b), "builder");
  Check(gj_graph_builder_add_input(b, "x"), "input");
  gj_arg args[] = {gj_arg_ref("x")};
  Check(gj_graph_builder_add_node(b, "sum", "aten.sum.default", args, 1),
        "node");
  const char* outs[] = {"sum"};
  Check(gj_graph_builder_set_outputs(b, outs, 1), "outputs");
  gj_graph* graph = nullptr;
  Check(gj_graph_builder_finish(b, &graph), "finish");
  gj_graph_builder_destroy(b);
  gj_function* fn = nullptr;
  Check(gj_function_create(ctx, graph, nullptr, &fn), "function");

  const size_t bytes = kElements * sizeof(float);
  std::vector<float> x(kElements);
  for (int64_t i = 0; i < kElements; ++i) x[i] = (i % 1000) * 0.001f;
  std::vector<char> copy(bytes);
  float total = 0;
  int64_t shape[1] = {kElements};
  DLTensor dx = Dl(x.data(), 1, shape), dout = Dl(&total, 0, nullptr);
  const DLTensor* in[] = {&dx};
  const DLTensor* out[] = {&dout};
  Check(gj_function_call(fn, in, 1, out, 1, nullptr), "compile");

  using Clock = std::chrono::steady_clock;
  double seconds = 0, memcpy_seconds = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    Check(gj_function_call(fn, in, 1, out, 1, nullptr), "call");
    benchmark::DoNotOptimize(total);
    const double t =
        std::chrono::duration<double>(Clock::now() - start).count();
    state.SetIterationTime(t);
    seconds += t;
    start = Clock::now();
    std::memcpy(copy.data(), x.data(), bytes);
    benchmark::DoNotOptimize(copy.data());
    memcpy_seconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["vs_memcpy"] = memcpy_seconds / seconds;
  char* text = nullptr;
  Check(gj_function_explain(fn, &text), "explain");
  state.SetLabel(std::strstr(text, "split into") != nullptr ? "split"
                                                            : "unsplit");
  gj_string_destroy(text);
  gj_function_destroy(fn);
  gj_graph_destroy(graph);
  gj_context_destroy(ctx);
}
BENCHMARK(BM_CApiSum64M)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
