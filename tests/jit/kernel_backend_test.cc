// Checks jit/kernel_backend.h's defaults, what a backend that implements
// only name, Compile and cache_stats gets: no transfer, no host code, every
// step runs its kernel, ForEntry's backend is itself, no CUDA graphs, and
// MakeStepRunner's runner launches the step's kernel through the module
// (refusing GEMM and conv steps with INTERNAL).

#include "jit/kernel_backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"

namespace guardjit {
namespace {

// A module that records its launches and returns `failed` for them.
class RecordingModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    (void)faults;
    (void)ctx;
    launched_index = index;
    launched_buffers.assign(buffers, buffers + 2);
    launched_sizes.assign(sizes.begin(), sizes.end());
    return 0;
  }
  mutable int launched_index = -1;
  mutable std::vector<void*> launched_buffers;
  mutable std::vector<int64_t> launched_sizes;
};

class MinimalBackend : public KernelBackend {
 public:
  std::string name() const override { return "test:minimal"; }
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override {
    (void)kernels;
    (void)labels;
    return std::make_shared<RecordingModule>();
  }
  KernelCacheStats cache_stats() const override { return {}; }
};

std::unique_ptr<Graph> OneInputGraph() {
  GraphBuilder b("identity");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

TEST(KernelBackendTest, DefaultsAreADeviceLessBackendWithoutHostCode) {
  MinimalBackend backend;
  EXPECT_EQ(backend.transfer(), nullptr);
  EXPECT_FALSE(backend.host_code());
  PlanStep step;
  EXPECT_TRUE(backend.RunsKernelOf(step));
  step.gemm = std::make_shared<GemmStep>();
  EXPECT_TRUE(backend.RunsKernelOf(step));
}

TEST(KernelBackendTest, ForEntryIsTheBackendItselfWithNoBounds) {
  auto backend = std::make_shared<MinimalBackend>();
  std::unique_ptr<Graph> graph = OneInputGraph();
  ASSERT_NE(graph, nullptr);
  auto entry = backend->ForEntry(backend, *graph, Specialization(), Plan());
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->backend, backend);
  EXPECT_TRUE(entry->chosen_bounds.empty());
  EXPECT_TRUE(entry->chosen_sources.empty());
  EXPECT_TRUE(entry->chosen_purpose.empty());
  EXPECT_TRUE(entry->description.empty());
}

TEST(KernelBackendTest, MakeGraphsRecordsNoCudaGraphs) {
  MinimalBackend backend;
  auto graphs = backend.MakeGraphs(Program(), Plan());
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  EXPECT_EQ(*graphs, nullptr);
}

TEST(KernelBackendTest, GemmAndConvStepsAreInternalErrors) {
  MinimalBackend backend;
  std::unique_ptr<Graph> graph = OneInputGraph();
  ASSERT_NE(graph, nullptr);
  auto module = std::make_shared<RecordingModule>();
  PlanStep gemm;
  gemm.gemm = std::make_shared<GemmStep>();
  auto runner = backend.MakeStepRunner(gemm, *graph, module, 0, nullptr);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(runner.status().message(),
            "a GEMM or conv step in a plan for the test:minimal backend");
  PlanStep conv;
  conv.conv = std::make_shared<ConvStep>();
  runner = backend.MakeStepRunner(conv, *graph, module, 0, nullptr);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInternal);
}

TEST(KernelBackendTest, KernelStepRunnerLaunchesItsKernelOnItsSlots) {
  MinimalBackend backend;
  std::unique_ptr<Graph> graph = OneInputGraph();
  ASSERT_NE(graph, nullptr);
  auto module = std::make_shared<RecordingModule>();
  PlanStep step;
  // The kernel's two buffer parameters are slots 2 and 0.
  step.kernel.buffer_slots = {2, 0};
  auto runner = backend.MakeStepRunner(step, *graph, module, 3, nullptr);
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ((*runner)->module_kernel(), 3);

  float a[2] = {};
  float b[2] = {};
  float c[2] = {};
  std::vector<Tensor> slots = {Tensor::Borrow(a, DType::kFloat32, {2}, {1}),
                               Tensor::Borrow(b, DType::kFloat32, {2}, {1}),
                               Tensor::Borrow(c, DType::kFloat32, {2}, {1})};
  Program program;
  program.steps.resize(1);
  RunContext ctx;
  const std::shared_ptr<Allocator> allocator;
  const int64_t symbols[] = {5, 6};
  StepCall call{.ctx = ctx,
                .program = program,
                .step = 0,
                .symbols = symbols,
                .slots = absl::MakeSpan(slots),
                .allocator = allocator,
                .destination = [](int) -> const Tensor* { return nullptr; }};
  ASSERT_TRUE((*runner)->Run(call).ok());
  EXPECT_EQ(module->launched_index, 3);
  EXPECT_EQ(module->launched_buffers, (std::vector<void*>{c, a}));
  EXPECT_EQ(module->launched_sizes, (std::vector<int64_t>{5, 6}));
}

}  // namespace
}  // namespace guardjit
