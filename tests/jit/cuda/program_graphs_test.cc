// reduce-overhead mode on a CUDA device (jit/cuda/program_graphs.h): what
// CudaProgramGraphs records of a program the JIT compiled for the emulated
// device (in a process of its own: tests/runtime/cuda/
// emulated_process_test_util.h). A key's first call runs plain launches,
// the second records and replays, later ones replay reading the inputs'
// current values; a matrix product is an extern call of the graph
// (cuBLASLt captured); a CPU scalar input refuses the program. The driver
// call sequences are tested through the C API by tests/cuda/cuda_graph*.

#include "jit/cuda/program_graphs.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_backend.h"
#include "jit/jit_compiler.h"
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

struct Compiled {
  std::shared_ptr<CudaKernelBackend> backend;
  std::unique_ptr<JitCompiler> jit;
  std::unique_ptr<Executable> exe;
};

// `graph` compiled for the emulated device at the metas of `inputs` (device
// tensors, or CPU scalars).
Compiled Compile(std::shared_ptr<const Graph> graph,
                 const std::vector<Tensor>& inputs) {
  Compiled c;
  CudaKernelBackend::Options cuda;
  cuda.block_threads = 64;
  cuda.max_blocks = 4;
  c.backend = CudaKernelBackend::Create(cuda).value();
  c.jit = JitCompiler::Create(
              {.fail_instead_of_eager = true, .kernel_backend = c.backend})
              .value();
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = c.jit->Compile(graph, spec);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (exe.ok()) c.exe = *std::move(exe);
  return c;
}

// Expects the device outputs `actual` to equal `graph` run eagerly on
// `host_inputs`.
void ExpectEager(const CudaKernelBackend& backend,
                 std::shared_ptr<const Graph> graph,
                 const std::vector<Tensor>& host_inputs,
                 const std::vector<Tensor>& actual) {
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run(host_inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(actual.size(), expected->size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const Tensor host = backend.ToHost(actual[i], RunContext()).value();
    const Tensor& e = (*expected)[i];
    testing::ExpectTensor(host, e.dtype(), e.sizes(), testing::ToDoubles(e),
                          1e-5, 1e-5);
  }
}

void WarmsUpRecordsThenReplaysWithTheProduct() {
  // relu(x @ w) * y: a cuBLASLt product and an epilogue kernel.
  GraphBuilder b("mlp");
  for (const char* p : {"x", "w", "y"}) ASSERT_TRUE(b.AddPlaceholder(p).ok());
  AddNode(b, "fc", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w")});
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("fc")});
  AddNode(b, "o", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Ref("y")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  const std::shared_ptr<const Graph> graph = Finish(b);
  std::vector<Tensor> host = {
      testing::RandomTensor(DType::kFloat32, {4, 8}, 1),
      testing::RandomTensor(DType::kFloat32, {8, 6}, 2),
      testing::RandomTensor(DType::kFloat32, {4, 6}, 3)};
  std::shared_ptr<CudaKernelBackend> backend;
  std::vector<Tensor> device;
  {
    CudaKernelBackend::Options cuda;
    backend = CudaKernelBackend::Create(cuda).value();
    for (const Tensor& t : host) {
      device.push_back(backend->ToDevice(t, RunContext()).value());
    }
  }
  // The program's graphs keep the policy of the call that recorded them
  // (and count their releases into it) until the executable is destroyed:
  // declared first, destroyed last.
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.counters = &counters;
  Compiled c = Compile(graph, device);
  ASSERT_NE(c.exe, nullptr);

  RunContext ctx;
  ctx.cuda_graphs = &policy;
  const int64_t graph_launches = EmulatedCudaDriver::counters().graph_launches;

  // 1: warm-up, plain launches.
  auto first = RunToVector(*c.exe, ctx, device);
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectEager(*backend, graph, host, *first);
  EXPECT_EQ(counters.recorded.load(), 0);
  EXPECT_EQ(EmulatedCudaDriver::counters().graph_launches, graph_launches);

  // 2: recorded (cuBLASLt captured with our kernels) and launched.
  const int64_t captured = EmulatedCublasLt::counters().captured_matmuls;
  auto second = RunToVector(*c.exe, ctx, device);
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectEager(*backend, graph, host, *second);
  EXPECT_EQ(counters.recorded.load(), 1);
  EXPECT_EQ(counters.replays.load(), 1);
  EXPECT_EQ(EmulatedCudaDriver::counters().graph_launches, graph_launches + 1);
  EXPECT_EQ(EmulatedCublasLt::counters().captured_matmuls, captured + 1);

  // 3: new input values, the same buffers: a replay reads them.
  host[0] = testing::RandomTensor(DType::kFloat32, {4, 8}, 11);
  const Tensor fresh = backend->ToDevice(host[0], RunContext()).value();
  ASSERT_EQ(CudaDriver::Get().value()->cuMemcpyDtoD(
                reinterpret_cast<CUdeviceptr>(device[0].data()),
                reinterpret_cast<CUdeviceptr>(fresh.data()), 4 * 8 * 4),
            CUDA_SUCCESS);
  auto third = RunToVector(*c.exe, ctx, device);
  ASSERT_TRUE(third.ok()) << third.status();
  ExpectEager(*backend, graph, host, *third);
  EXPECT_EQ(counters.recorded.load(), 1) << "no re-capture";
  EXPECT_EQ(counters.replays.load(), 2);

  const std::string describe = c.exe->Describe();
  EXPECT_THAT(describe, HasSubstr("cuda graphs: 1 recorded"));
  EXPECT_THAT(describe, HasSubstr("1 cuBLASLt step captured"));

  // Without the policy: plain launches, nothing more recorded.
  auto plain = RunToVector(*c.exe, RunContext(), device);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(counters.replays.load(), 2);
}

TEST(CudaProgramGraphsTest, WarmsUpRecordsThenReplaysWithTheProduct) {
  GJ_EXPECT_ON_EMULATED_DEVICE(WarmsUpRecordsThenReplaysWithTheProduct);
}

void CpuScalarInputRefusesTheProgram() {
  GraphBuilder b("scaled");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("s").ok());
  AddNode(b, "o", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("s")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  const std::shared_ptr<const Graph> graph = Finish(b);
  const std::vector<Tensor> host = {
      testing::RandomTensor(DType::kFloat32, {3, 5}, 7),
      Tensor::FromScalar(Scalar(2.5), DType::kFloat32)};
  CudaKernelBackend::Options cuda;
  std::shared_ptr<CudaKernelBackend> backend =
      CudaKernelBackend::Create(cuda).value();
  const std::vector<Tensor> inputs = {
      backend->ToDevice(host[0], RunContext()).value(), host[1]};
  CudaGraphCounters counters;  // outlives the executable, as above
  CudaGraphPolicy policy;
  policy.counters = &counters;
  Compiled c = Compile(graph, inputs);
  ASSERT_NE(c.exe, nullptr);
  RunContext ctx;
  ctx.cuda_graphs = &policy;
  for (int call = 0; call < 3; ++call) {
    auto out = RunToVector(*c.exe, ctx, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectEager(*backend, graph, host, *out);
  }
  EXPECT_EQ(counters.recorded.load(), 0);
  EXPECT_THAT(c.exe->Describe(),
              HasSubstr("cuda graphs refused: input 1 ('s') is a CPU tensor"));
}

TEST(CudaProgramGraphsTest, CpuScalarInputRefusesTheProgram) {
  GJ_EXPECT_ON_EMULATED_DEVICE(CpuScalarInputRefusesTheProgram);
}

}  // namespace
}  // namespace guardjit
