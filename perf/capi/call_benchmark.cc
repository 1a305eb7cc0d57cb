// Whole gj_function_call on a cached trivial graph (x + y on 1-element
// float32 tensors) next to an empty call and to the reference kernel alone
// (the eager interpreter running the same graph), all in one run, for both
// backends (argument: 0 = CPU JIT, 1 = eager plans):
//   overhead of the C API + guard cache = BM_FunctionCall - kernel work
// (for the JIT's one fused 1-element kernel, a few ns; for the eager plan,
// about BM_EagerOnly). Also the miss path: a new static shape each iteration
// (an LLVM compile at O3, or an eager plan).

#include <vector>

#include "benchmark/benchmark.h"
#include "core/graph_builder.h"
#include "guardjit/guardjit.h"
#include "runtime/eager_interpreter.h"

namespace {

__attribute__((noinline)) void EmptyFunction(void* p) {
  benchmark::DoNotOptimize(p);
}

void BM_EmptyCall(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) EmptyFunction(&x);
}
BENCHMARK(BM_EmptyCall);

struct Setup {
  explicit Setup(int64_t backend_arg, int32_t recompile_limit = 8,
                 gj_dynamic_mode dynamic = GJ_DYNAMIC_STATIC) {
    gj_context_options context_options;
    gj_context_options_init(&context_options);
    context_options.backend =
        backend_arg == 0 ? GJ_BACKEND_CPU_JIT : GJ_BACKEND_EAGER;
    gj_context_create(&context_options, &ctx);
    gj_graph_builder* b;
    gj_graph_builder_create(ctx, "add", &b);
    gj_graph_builder_add_input(b, "x");
    gj_graph_builder_add_input(b, "y");
    gj_arg args[] = {gj_arg_ref("x"), gj_arg_ref("y")};
    gj_graph_builder_add_node(b, "add", "aten.add.Tensor", args, 2);
    const char* outs[] = {"add"};
    gj_graph_builder_set_outputs(b, outs, 1);
    gj_graph_builder_finish(b, &graph);
    gj_graph_builder_destroy(b);
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    options.recompile_limit = recompile_limit;
    gj_function_create(ctx, graph, &options, &fn);
  }
  ~Setup() {
    gj_function_destroy(fn);
    gj_graph_destroy(graph);
    gj_context_destroy(ctx);
  }
  gj_context* ctx = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
};

DLTensor Dl(float* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

void BM_FunctionCall(benchmark::State& state) {
  Setup s(state.range(0));
  float x = 1, y = 2, out = 0;
  int64_t shape[1] = {1};
  DLTensor dx = Dl(&x, shape), dy = Dl(&y, shape), dout = Dl(&out, shape);
  const DLTensor* in[] = {&dx, &dy};
  const DLTensor* outs[] = {&dout};
  gj_function_call(s.fn, in, 2, outs, 1, nullptr);  // compile
  for (auto _ : state) {
    gj_error* e = gj_function_call(s.fn, in, 2, outs, 1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
  }
  if (out != 3) state.SkipWithError("wrong result");
}
BENCHMARK(BM_FunctionCall)->Arg(0)->Arg(1);

// A hit on a dynamic entry (x + y over [s0], 8 elements): the guards bind s0
// and the kernels run at that size.
void BM_DynamicFunctionCall(benchmark::State& state) {
  Setup s(state.range(0), 8, GJ_DYNAMIC_DYNAMIC);
  float x[8] = {1, 1, 1, 1, 1, 1, 1, 1}, y[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  float out[8] = {};
  int64_t shape[1] = {8};
  DLTensor dx = Dl(x, shape), dy = Dl(y, shape), dout = Dl(out, shape);
  const DLTensor* in[] = {&dx, &dy};
  const DLTensor* outs[] = {&dout};
  gj_function_call(s.fn, in, 2, outs, 1, nullptr);  // compile
  for (auto _ : state) {
    gj_error* e = gj_function_call(s.fn, in, 2, outs, 1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
  }
  if (out[7] != 3) state.SkipWithError("wrong result");
}
BENCHMARK(BM_DynamicFunctionCall)->Arg(0)->Arg(1);

void BM_EagerOnly(benchmark::State& state) {
  using namespace guardjit;
  GraphBuilder b("add");
  (void)b.AddPlaceholder("x");
  (void)b.AddPlaceholder("y");
  (void)b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  (void)b.SetOutputs({Arg::Ref("add")});
  auto interp =
      *EagerInterpreter::Create(std::shared_ptr<const Graph>(*b.Finish()));
  std::vector<Tensor> inputs = {*Tensor::Zeros(DType::kFloat32, {1}),
                                *Tensor::Zeros(DType::kFloat32, {1})};
  for (auto _ : state) {
    auto out = interp->Run(inputs);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_EagerOnly);

void BM_MissNewStaticShape(benchmark::State& state) {
  Setup s(state.range(0), 1 << 30);
  std::vector<float> x(1), y(1), out(1);
  int64_t n = 1;
  for (auto _ : state) {
    ++n;
    state.PauseTiming();
    x.resize(n);
    y.resize(n);
    out.resize(n);
    int64_t shape[1] = {n};
    DLTensor dx = Dl(x.data(), shape), dy = Dl(y.data(), shape),
             dout = Dl(out.data(), shape);
    const DLTensor* in[] = {&dx, &dy};
    const DLTensor* outs[] = {&dout};
    state.ResumeTiming();
    gj_error* e = gj_function_call(s.fn, in, 2, outs, 1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
  }
}
BENCHMARK(BM_MissNewStaticShape)->Arg(0)->Arg(1)->Iterations(200);

}  // namespace

BENCHMARK_MAIN();
