// The host kernel backend (jit/llvm/llvm_backend.h): its name and cache
// stats from its KernelCompiler, modules whose host functions are the
// compiled kernels and whose Launch runs a kernel's whole first outer loop
// at the call's sizes, the code kept alive by the module past the kernel
// cache, where its code came from, and its step runners: a kernel step runs
// its function inside a program, and a step without one is an error naming
// the backend.

#include "jit/llvm/llvm_backend.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/gemm_step.h"
#include "runtime/program/program_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

// out[i] = in[i] * scale over i in [0, extent) (float64).
Kernel Scale(double scale, IndexExpr extent) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  k.num_size_params = 1;
  k.outer = {{0, std::move(extent)}};
  Stage store;
  store.buffer = 1;
  store.index = IndexExpr::Var(0);
  store.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat64, IndexExpr::Var(0)),
      ValueExpr::Const(DType::kFloat64, scale));
  k.stages = {store};
  return k;
}

// out[0] = in[0] + 1, without outer loops.
Kernel AddOneToFirst() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  Stage store;
  store.buffer = 1;
  store.index = IndexExpr::Const(0);
  store.value = ValueExpr::Binary(
      BinaryOp::kAdd, ValueExpr::Load(0, DType::kFloat64, IndexExpr::Const(0)),
      ValueExpr::Const(DType::kFloat64, 1.0));
  k.stages = {store};
  return k;
}

std::shared_ptr<KernelCompiler> NewCompiler(int max_cached = 1024) {
  auto compiler = KernelCompiler::Create(max_cached);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  return std::shared_ptr<KernelCompiler>(*std::move(compiler));
}

TEST(LlvmKernelBackendTest, NamesItsTargetAndRunsHostCode) {
  auto compiler = NewCompiler();
  LlvmKernelBackend backend(compiler);
  EXPECT_EQ(backend.name(), "llvm:" + compiler->target());
  EXPECT_THAT(backend.name(), HasSubstr("x86_64"));
  EXPECT_TRUE(backend.host_code());
  EXPECT_EQ(&backend.compiler(), compiler.get());
}

TEST(LlvmKernelBackendTest, LaunchRunsTheWholeOuterLoopAtTheCallsSizes) {
  auto compiler = NewCompiler();
  LlvmKernelBackend backend(compiler);
  const Kernel scale = Scale(3.0, IndexExpr::Size(0));
  const Kernel first = AddOneToFirst();
  auto module = backend.Compile({&scale, &first}, {"scale", "first"});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::vector<HostKernelFn>* fns = (*module)->host_functions();
  ASSERT_NE(fns, nullptr);
  ASSERT_EQ(fns->size(), 2u);
  // The functions are the compiler's (a compile of the same kernels hits).
  auto same = compiler->Compile({&scale, &first});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ((*fns)[0], (*same)[0]);
  EXPECT_EQ((*fns)[1], (*same)[1]);

  std::vector<double> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> out(8, -1);
  void* buffers[] = {in.data(), out.data()};
  const int64_t sizes[] = {6};
  auto mask = (*module)->Launch(0, buffers, sizes, nullptr, RunContext());
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, 0);  // no index checks failed
  EXPECT_EQ(out, (std::vector<double>{3, 6, 9, 12, 15, 18, -1, -1}));  // 6 only
  // Without outer loops: one run.
  std::vector<double> one(8, -1);
  void* first_buffers[] = {in.data(), one.data()};
  ASSERT_TRUE(
      (*module)->Launch(1, first_buffers, sizes, nullptr, RunContext()).ok());
  EXPECT_EQ(one[0], 2);
  EXPECT_EQ(one[1], -1);
}

TEST(LlvmKernelBackendTest, LaunchOfAnUnknownKernelIsAnError) {
  LlvmKernelBackend backend(NewCompiler());
  const Kernel scale = Scale(2.0, IndexExpr::Const(4));
  auto module = backend.Compile({&scale}, {});
  ASSERT_TRUE(module.ok()) << module.status();
  void* buffers[] = {nullptr, nullptr};
  for (int index : {1, -1}) {
    auto launched =
        (*module)->Launch(index, buffers, {}, nullptr, RunContext());
    ASSERT_FALSE(launched.ok());
    EXPECT_EQ(launched.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(launched.status().message(),
                HasSubstr(absl::StrCat("no kernel ", index)));
  }
  // A host module makes no device fault words.
  auto words = (*module)->NewFaultWords();
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, nullptr);
}

TEST(LlvmKernelBackendTest, ModulesSayWhereTheirCodeCameFrom) {
  auto compiler = NewCompiler();
  LlvmKernelBackend backend(compiler);
  const Kernel a = Scale(5.0, IndexExpr::Const(4));
  const Kernel b = Scale(7.0, IndexExpr::Const(4));
  auto first = backend.Compile({&a, &b}, {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->origin().compiled, 2);
  EXPECT_EQ((*first)->origin().reused, 0);
  auto second = backend.Compile({&b, &a}, {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->origin().compiled, 0);
  EXPECT_EQ((*second)->origin().reused, 2);
  // Same kernels, same code, in the module's order.
  EXPECT_EQ((*(*second)->host_functions())[0],
            (*(*first)->host_functions())[1]);
  // The backend's cache stats are its compiler's.
  const KernelCacheStats stats = backend.cache_stats();
  const KernelCacheStats direct = compiler->cache_stats();
  EXPECT_EQ(stats.compiles, direct.compiles);
  EXPECT_EQ(stats.hits, direct.hits);
  EXPECT_EQ(stats.entries, direct.entries);
  EXPECT_EQ(stats.entries, 2);
  EXPECT_GE(stats.hits, 2);
}

TEST(LlvmKernelBackendTest, AModuleKeepsItsCodePastTheKernelCache) {
  auto compiler = NewCompiler(/*max_cached=*/1);
  LlvmKernelBackend backend(compiler);
  const Kernel a = Scale(2.0, IndexExpr::Const(4));
  auto module = backend.Compile({&a}, {});
  ASSERT_TRUE(module.ok()) << module.status();
  // Evict a from the one-kernel cache.
  const Kernel b = Scale(9.0, IndexExpr::Const(4));
  ASSERT_TRUE(backend.Compile({&b}, {}).ok());
  EXPECT_EQ(compiler->cached_kernels(), 1);
  EXPECT_GE(compiler->live_modules(), 1);
  const int live = compiler->live_modules();
  std::vector<double> in = {1, 2, 3, 4}, out(4);
  void* buffers[] = {in.data(), out.data()};
  ASSERT_TRUE((*module)->Launch(0, buffers, {}, nullptr, RunContext()).ok());
  EXPECT_EQ(out, (std::vector<double>{2, 4, 6, 8}));
  // The module was its last owner.
  module->reset();
  EXPECT_EQ(compiler->live_modules(), live - 1);
}

PlanStep KernelPlanStep(const Kernel& kernel) {
  PlanStep step;
  step.is_kernel = true;
  step.kernel.kernel = kernel;
  step.kernel.buffer_slots = {0, 1};
  step.kernel.allocate = {1};
  step.kernel.computes = {"y"};
  return step;
}

// A one-step program y = 4x over x [s0], its step the backend's runner.
TEST(LlvmKernelBackendTest, KernelStepsRunTheirFunctionInAProgram) {
  LlvmKernelBackend backend(NewCompiler());
  const Kernel scale = Scale(4.0, IndexExpr::Size(0));
  auto module = backend.Compile({&scale}, {});
  ASSERT_TRUE(module.ok()) << module.status();
  const PlanStep plan_step = KernelPlanStep(scale);
  EXPECT_TRUE(backend.RunsKernelOf(plan_step));

  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("y", "aten.relu.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  auto pool = std::make_shared<ThreadPool>(2);
  auto runner = backend.MakeStepRunner(plan_step, *graph, *module, 0, pool);
  ASSERT_TRUE(runner.ok()) << runner.status();

  auto program = std::make_unique<Program>();
  program->graph = graph;
  program->num_symbols = 1;
  const std::vector<IndexExpr> sizes = {IndexExpr::Size(0)};
  Slot x;
  x.source = Slot::Source::kInput;
  x.input = 0;
  x.dtype = DType::kFloat64;
  x.sizes = sizes;
  Slot y;
  y.dtype = DType::kFloat64;
  y.sizes = sizes;
  program->slots = {x, y};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {{1, sizes, {IndexExpr::Const(1)}, IndexExpr::Const(0)}};
  program->module = *module;
  ProgramStep step;
  step.runner = *std::move(runner);
  step.allocate = {1};
  step.label = "kernel computing y";
  program->steps.push_back(std::move(step));
  auto program_runner = ProgramRunner::Create(std::move(program));
  ASSERT_TRUE(program_runner.ok()) << program_runner.status();
  for (int64_t n : {3, 5000}) {
    std::vector<double> in(n);
    for (int64_t i = 0; i < n; ++i) in[i] = static_cast<double>(i) - 7;
    const Tensor t = Tensor::Borrow(in.data(), DType::kFloat64, {n}, {1});
    std::vector<Tensor> out(1);
    ASSERT_TRUE((*program_runner)->Run({}, {t}, {n}, absl::MakeSpan(out)).ok());
    ASSERT_EQ(out[0].numel(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[0].data_as<double>()[i], in[i] * 4) << i;
    }
  }
}

// A module that has no host functions (a device backend's).
class DeviceModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int, void* const*, absl::Span<const int64_t>,
                                 const DeviceFaultWords*,
                                 const RunContext&) const override {
    return 0;
  }
};

TEST(LlvmKernelBackendTest, StepsWithoutAHostFunctionAreErrors) {
  LlvmKernelBackend backend(NewCompiler());
  const Kernel scale = Scale(4.0, IndexExpr::Const(4));
  auto module = backend.Compile({&scale}, {});
  ASSERT_TRUE(module.ok()) << module.status();
  const PlanStep step = KernelPlanStep(scale);
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  auto pool = std::make_shared<ThreadPool>(1);
  for (int index : {1, -1}) {
    auto runner = backend.MakeStepRunner(step, *graph, *module, index, pool);
    ASSERT_FALSE(runner.ok());
    EXPECT_EQ(runner.status().code(), absl::StatusCode::kInternal);
    EXPECT_THAT(runner.status().message(),
                HasSubstr(absl::StrCat(
                    backend.name(), ": no host function for kernel ", index)));
  }
  auto device = backend.MakeStepRunner(
      step, *graph, std::make_shared<DeviceModule>(), 0, pool);
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr("no host function"));
}

// A GEMM step whose product is written straight to its output never runs
// its epilogue kernel; one with an epilogue does.
TEST(LlvmKernelBackendTest, RunsTheKernelOfAllButBareProducts) {
  LlvmKernelBackend backend(NewCompiler());
  PlanStep step = KernelPlanStep(Scale(1.0, IndexExpr::Const(4)));
  EXPECT_TRUE(backend.RunsKernelOf(step));
  auto bare = std::make_shared<GemmStep>();
  bare->result_param = 0;
  step.gemm = bare;
  EXPECT_FALSE(backend.RunsKernelOf(step));
  auto with_epilogue = std::make_shared<GemmStep>();
  with_epilogue->result_param = -1;
  step.gemm = with_epilogue;
  EXPECT_TRUE(backend.RunsKernelOf(step));
}

}  // namespace
}  // namespace guardjit
