// The CUDA backend's step runners (jit/cuda/device_steps.h): which runner
// MakeDeviceStep makes of a plan step (the module kernel it launches and
// the error of each of its index checks, named by the step's checks), and
// the runners at work in programs the JIT compiles for the emulated device
// (in a process of their own: tests/runtime/cuda/emulated_process_test_util.h):
// kernel steps launched through the module, a matrix product and a
// convolution on cuBLASLt with their epilogue kernels, results against the
// eager interpreter on the host.

#include "jit/cuda/device_steps.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_backend.h"
#include "jit/jit_compiler.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"
#include "runtime/eager_interpreter.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/jit/jit_test_util.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::Finish;
using ::testing::HasSubstr;

std::shared_ptr<const Graph> MmGraph() {
  GraphBuilder b("mm");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("w").ok());
  AddNode(b, "fc", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w")});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("fc")}).ok());
  return Finish(b);
}

PlanStep KernelStepWithChecks() {
  PlanStep step;
  step.kernel.checks = {IndexCheck{"gather 'e'", 0, IndexExpr::Const(10)},
                        IndexCheck{"gather 'f'", 1, IndexExpr::Size(0)}};
  step.kernel.kernel.num_checks = 2;
  return step;
}

TEST(DeviceStepsTest, RunnerLaunchesTheModuleKernelAndNamesItsChecks) {
  const std::shared_ptr<const Graph> graph = MmGraph();
  const int fc = graph->FindNode("fc");
  ASSERT_GE(fc, 0);
  for (const int kind : {0, 1, 2}) {
    SCOPED_TRACE(kind);
    PlanStep step = KernelStepWithChecks();
    if (kind == 1) {
      step.gemm = std::make_shared<GemmStep>();
      step.node = fc;
    } else if (kind == 2) {
      step.conv = std::make_shared<ConvStep>();
      step.node = fc;
    }
    absl::StatusOr<std::unique_ptr<const StepRunner>> runner =
        MakeDeviceStep(step, *graph, nullptr, /*index=*/3);
    ASSERT_TRUE(runner.ok()) << runner.status();
    EXPECT_EQ((*runner)->module_kernel(), 3);
    EXPECT_EQ((*runner)->packed_bytes(), 0);
    const absl::Status first = (*runner)->CheckError(0, {});
    EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(first.message(), HasSubstr("gather 'e'"));
    EXPECT_THAT(first.message(), HasSubstr("dimension 0 with size 10"));
    const int64_t symbols[] = {42};
    const absl::Status second = (*runner)->CheckError(1, symbols);
    EXPECT_THAT(second.message(), HasSubstr("gather 'f'"));
    EXPECT_THAT(second.message(), HasSubstr("= 42"));
    EXPECT_EQ((*runner)->CheckError(5, {}).code(), absl::StatusCode::kInternal);
  }
}

// Runs `graph` compiled for the emulated device on `inputs` (copied there)
// and compares with the eager interpreter on the host.
void ExpectDeviceMatchesEager(std::shared_ptr<const Graph> graph,
                              const std::vector<Tensor>& inputs, double rtol) {
  CudaKernelBackend::Options cuda;
  cuda.block_threads = 64;
  cuda.max_blocks = 4;
  std::shared_ptr<CudaKernelBackend> backend =
      CudaKernelBackend::Create(cuda).value();
  auto jit = JitCompiler::Create(
      {.fail_instead_of_eager = true, .kernel_backend = backend});
  ASSERT_TRUE(jit.ok()) << jit.status();
  std::vector<Tensor> device_inputs;
  Specialization spec;
  for (const Tensor& t : inputs) {
    device_inputs.push_back(backend->ToDevice(t, RunContext()).value());
    spec.inputs.push_back(TensorMeta::Of(device_inputs.back()));
  }
  auto exe = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto outputs = RunToVector(**exe, device_inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(outputs->size(), expected->size());
  for (size_t i = 0; i < outputs->size(); ++i) {
    EXPECT_FALSE((*outputs)[i].device().is_cpu()) << "a device output";
    const Tensor host = backend->ToHost((*outputs)[i], RunContext()).value();
    const Tensor& e = (*expected)[i];
    testing::ExpectTensor(host, e.dtype(), e.sizes(), testing::ToDoubles(e),
                          rtol, rtol);
  }
}

void GemmStepRunsOnCublasLtWithItsEpilogue() {
  // relu(x @ w) + y: cuBLASLt's product, then the epilogue kernel adds y.
  GraphBuilder b("mm_epilogue");
  for (const char* p : {"x", "w", "y"}) ASSERT_TRUE(b.AddPlaceholder(p).ok());
  AddNode(b, "fc", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w")});
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("fc")});
  AddNode(b, "o", "aten.add.Tensor", {Arg::Ref("r"), Arg::Ref("y")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
  const int64_t launches = EmulatedCudaDriver::counters().launches;
  ExpectDeviceMatchesEager(Finish(b),
                           {testing::RandomTensor(DType::kFloat32, {6, 5}, 1),
                            testing::RandomTensor(DType::kFloat32, {5, 7}, 2),
                            testing::RandomTensor(DType::kFloat32, {6, 7}, 3)},
                           1e-5);
  EXPECT_EQ(EmulatedCublasLt::counters().matmuls, matmuls + 1);
  EXPECT_GE(EmulatedCudaDriver::counters().launches, launches + 1)
      << "the epilogue kernel";
}

TEST(DeviceStepsTest, GemmStepRunsOnCublasLtWithItsEpilogue) {
  GJ_EXPECT_ON_EMULATED_DEVICE(GemmStepRunsOnCublasLtWithItsEpilogue);
}

void ConvStepRunsOnCublasLtAfterIm2Col() {
  // conv2d 3x3 with bias, then sigmoid: im2col kernel, cuBLASLt, epilogue.
  GraphBuilder b("conv");
  for (const char* p : {"x", "w", "bias"}) {
    ASSERT_TRUE(b.AddPlaceholder(p).ok());
  }
  AddNode(b, "c", "aten.convolution.default",
          {Arg::Ref("x"), Arg::Ref("w"), Arg::Ref("bias"),
           testing::Ints({1, 1}), testing::Ints({1, 1}), testing::Ints({1, 1}),
           Arg::Bool(false), testing::Ints({0, 0}), Arg::Int(1)});
  AddNode(b, "s", "aten.sigmoid.default", {Arg::Ref("c")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
  ExpectDeviceMatchesEager(
      Finish(b),
      {testing::RandomTensor(DType::kFloat32, {2, 3, 5, 5}, 4),
       testing::RandomTensor(DType::kFloat32, {4, 3, 3, 3}, 5),
       testing::RandomTensor(DType::kFloat32, {4}, 6)},
      1e-5);
  EXPECT_GT(EmulatedCublasLt::counters().matmuls, matmuls);
}

TEST(DeviceStepsTest, ConvStepRunsOnCublasLtAfterIm2Col) {
  GJ_EXPECT_ON_EMULATED_DEVICE(ConvStepRunsOnCublasLtAfterIm2Col);
}

}  // namespace
}  // namespace guardjit
