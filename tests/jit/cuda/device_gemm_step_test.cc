// A GEMM step on a CUDA device (jit/cuda/device_gemm_step.h), from GemmStep
// values built here: GraphedGemmArgs's cuBLASLt arguments (operands passed
// through `where`, the epilogue's bias and C, strides cuBLASLt cannot read
// refused), and RunDeviceGemmStep on the emulated device and cuBLASLt, in a
// process of its own (tests/runtime/cuda/emulated_process_test_util.h):
// cuBLASLt writing the output itself under a device epilogue, or the
// product handed to the epilogue kernel (a KernelModule of the test's own
// that reads it back), operands copied contiguous when needed, and errors
// naming the node.

#include "jit/cuda/device_gemm_step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "core/graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_transfer.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "tests/jit/cuda/device_step_test_util.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::HostValues;
using ::guardjit::testing::Ref;
using ::testing::HasSubstr;

// A host float tensor of `n` values i * scale + shift.
Tensor Floats(int64_t n, float scale = 1, float shift = 0) {
  Tensor t = Tensor::Empty(DType::kFloat32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = i * scale + shift;
  return t;
}

// mm of a [2, 3] slot 0 and the transpose of a [4, 3] slot 1.
GemmStep Mm() {
  GemmStep step;
  step.target = "aten.mm.default";
  step.m = 2;
  step.n = 4;
  step.k = 3;
  step.a = Ref(0, {2, 3}, {3, 1});
  step.b = Ref(1, {3, 4}, {1, 3});
  step.product_param = 1;
  return step;
}

TEST(DeviceGemmStepTest, GraphedArgsReadOperandsThroughWhere) {
  const std::vector<Tensor> slots = {Floats(6), Floats(12)};
  std::vector<int> asked;
  // `where` moves every operand 64 bytes on, as a staged operand would.
  auto where = [&](int slot, const void* address) -> const void* {
    asked.push_back(slot);
    return static_cast<const char*>(address) + 64;
  };
  float product[16];
  GemmStep step = Mm();
  step.alpha = 0.5;
  absl::StatusOr<CublasLtGemmArgs> args =
      GraphedGemmArgs(step, slots, product, where);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(asked, (std::vector<int>{0, 1}));
  EXPECT_EQ(args->dtype, DType::kFloat32);
  EXPECT_EQ(args->m, 2);
  EXPECT_EQ(args->n, 4);
  EXPECT_EQ(args->k, 3);
  EXPECT_EQ(args->batch, 1);
  EXPECT_EQ(args->alpha, 0.5);
  EXPECT_EQ(args->a.data, static_cast<const char*>(slots[0].data()) + 64);
  EXPECT_EQ(args->a.row_stride, 3);
  EXPECT_EQ(args->a.col_stride, 1);
  EXPECT_EQ(args->b.data, static_cast<const char*>(slots[1].data()) + 64);
  EXPECT_EQ(args->b.row_stride, 1) << "a transposed view, read in place";
  EXPECT_EQ(args->b.col_stride, 3);
  // The product: contiguous [m, n] at `product`, not passed through where.
  EXPECT_EQ(args->d.data, product);
  EXPECT_EQ(args->d.row_stride, 4);
  EXPECT_EQ(args->d.col_stride, 1);
  EXPECT_EQ(args->beta, 0);
  EXPECT_EQ(args->bias, nullptr);
  EXPECT_EQ(args->activation, GemmActivation::kNone);
}

TEST(DeviceGemmStepTest, GraphedArgsCarryTheDeviceEpilogueAndBatches) {
  // bmm [2, 2, 3] @ [1 -> 2, 3, 4] (b broadcast over the batch), relu,
  // bias at element 2 of slot 2, C at element 1 of slot 3 with beta 0.25.
  const std::vector<Tensor> slots = {Floats(12), Floats(12), Floats(8),
                                     Floats(20)};
  GemmStep step;
  step.target = "aten.bmm.default";
  step.batched = true;
  step.batch = 2;
  step.m = 2;
  step.n = 4;
  step.k = 3;
  step.a = Ref(0, {2, 2, 3}, {6, 3, 1});
  step.b = Ref(1, {1, 3, 4}, {12, 4, 1});
  GemmStep::DeviceEpilogue epilogue;
  epilogue.activation = GemmStep::DeviceEpilogue::Activation::kRelu;
  epilogue.bias = Ref(2, {4}, {1}, 2);
  epilogue.c = Ref(3, {2, 4}, {5, 1}, 1);
  epilogue.beta = 0.25;
  epilogue.out_slot = 4;
  step.device_epilogue = epilogue;
  float product[16];
  absl::StatusOr<CublasLtGemmArgs> args = GraphedGemmArgs(
      step, slots, product, [](int, const void* p) { return p; });
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->batch, 2);
  EXPECT_EQ(args->a.batch_stride, 6);
  EXPECT_EQ(args->b.batch_stride, 0) << "one b for every batch";
  EXPECT_EQ(args->d.batch_stride, 2 * 4);
  EXPECT_EQ(args->activation, GemmActivation::kRelu);
  EXPECT_EQ(args->bias, slots[2].data_as<float>() + 2);
  EXPECT_EQ(args->c.data, slots[3].data_as<float>() + 1);
  EXPECT_EQ(args->c.row_stride, 5);
  EXPECT_EQ(args->c.col_stride, 1);
  EXPECT_EQ(args->beta, 0.25);
}

TEST(DeviceGemmStepTest, GraphedArgsRefuseStridesCublasLtCannotRead) {
  const std::vector<Tensor> slots = {Floats(64), Floats(64)};
  GemmStep step = Mm();
  step.b = Ref(1, {3, 4}, {8, 2});  // no unit stride
  float product[16];
  absl::StatusOr<CublasLtGemmArgs> args = GraphedGemmArgs(
      step, slots, product, [](int, const void* p) { return p; });
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(args.status().message(), HasSubstr("operand B"));
}

// A KernelModule standing in for the step's epilogue kernel: records the
// launch and copies the product it is given (device memory is host memory
// on the emulated device).
class RecordingModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    (void)faults;
    (void)ctx;
    ++launches;
    kernel = index;
    symbols.assign(sizes.begin(), sizes.end());
    other = buffers[0];
    const float* product = static_cast<const float*>(buffers[product_param]);
    seen.assign(product, product + product_elements);
    return 3;  // as if checks 0 and 1 failed
  }
  int product_param = 1;
  int64_t product_elements = 0;
  mutable int launches = 0;
  mutable int kernel = -1;
  mutable std::vector<int64_t> symbols;
  mutable const void* other = nullptr;
  mutable std::vector<float> seen;
};

// [2, 3] @ ([4, 3])^T with a[i, p] = i * 3 + p and bt[j, p] = j * 3 + p - 5.
std::vector<float> MmReference() {
  std::vector<float> d(8);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      float s = 0;
      for (int p = 0; p < 3; ++p) {
        s += static_cast<float>(i * 3 + p) * static_cast<float>(j * 3 + p - 5);
      }
      d[i * 4 + j] = s;
    }
  }
  return d;
}

void RunsOnCublasLtWithOrWithoutTheEpilogueKernel() {
  const Device gpu{DeviceType::kCUDA, 0};
  std::shared_ptr<Allocator> allocator =
      (*CudaCachingAllocator::ForDevice(0))->OnStream(nullptr);
  auto on_device = [&](const Tensor& t) {
    return CudaToDevice(t, gpu, allocator, nullptr).value();
  };
  Node node;
  node.name = "fc";
  node.target = "aten.mm.default";
  RunContext ctx;
  const std::vector<float> expected = MmReference();

  // With the epilogue kernel: the product goes to a buffer of the call's
  // allocator, handed to the kernel in place of its product parameter.
  {
    std::vector<Tensor> slots = {on_device(Floats(6)),
                                 on_device(Floats(12, 1, -5))};
    RecordingModule module;
    module.product_elements = 8;
    int marker = 0;
    void* params[] = {&marker, nullptr};
    const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
    absl::StatusOr<int64_t> failed =
        RunDeviceGemmStep(Mm(), node, module, /*kernel=*/7, nullptr, params,
                          slots, {}, gpu, allocator, ctx);
    ASSERT_TRUE(failed.ok()) << failed.status();
    EXPECT_EQ(*failed, 3) << "the epilogue kernel's failed checks";
    EXPECT_EQ(EmulatedCublasLt::counters().matmuls, matmuls + 1);
    EXPECT_EQ(module.launches, 1);
    EXPECT_EQ(module.kernel, 7);
    EXPECT_EQ(module.other, &marker) << "other parameters passed as given";
    EXPECT_EQ(module.seen, expected);
  }

  // A device epilogue (relu): cuBLASLt writes the output slot; no kernel.
  // The a operand is a view cuBLASLt cannot read in place (both strides
  // large): copied contiguous first.
  {
    Tensor padded = Tensor::Zeros(DType::kFloat32, {2, 3, 2}).value();
    for (int64_t i = 0; i < 6; ++i) padded.data_as<float>()[2 * i] = i;
    std::vector<Tensor> slots = {
        on_device(padded), on_device(Floats(12, 1, -5)),
        Tensor::Empty(DType::kFloat32, {2, 4}, allocator, gpu).value()};
    GemmStep step = Mm();
    step.a = Ref(0, {2, 3}, {6, 2});
    GemmStep::DeviceEpilogue epilogue;
    epilogue.activation = GemmStep::DeviceEpilogue::Activation::kRelu;
    epilogue.out_slot = 2;
    step.device_epilogue = epilogue;
    RecordingModule module;
    void* params[] = {nullptr, nullptr};
    absl::StatusOr<int64_t> failed = RunDeviceGemmStep(
        step, node, module, 0, nullptr, params, slots, {}, gpu, allocator, ctx);
    ASSERT_TRUE(failed.ok()) << failed.status();
    EXPECT_EQ(*failed, 0);
    EXPECT_EQ(module.launches, 0);
    EXPECT_EQ(EmulatedCublasLt::counters().last_epilogue,
              CUBLASLT_EPILOGUE_RELU);
    const std::vector<float> out = HostValues(slots[2]);
    ASSERT_EQ(out.size(), 8u);
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(out[i], std::max(expected[i], 0.0f)) << i;
    }
    EXPECT_TRUE(std::count(out.begin(), out.end(), 0.0f) > 0);
  }

  // cuBLASLt's failure, named by the node.
  {
    std::vector<Tensor> slots = {on_device(Floats(6)),
                                 on_device(Floats(12, 1, -5))};
    RecordingModule module;
    void* params[] = {nullptr, nullptr};
    EmulatedCublasLt::FailNextMatmuls(1, CUBLAS_STATUS_EXECUTION_FAILED);
    absl::StatusOr<int64_t> failed = RunDeviceGemmStep(
        Mm(), node, module, 0, nullptr, params, slots, {}, gpu, allocator, ctx);
    ASSERT_FALSE(failed.ok());
    EXPECT_THAT(failed.status().message(),
                HasSubstr("node 'fc' (aten.mm.default) on cuBLASLt"));
    EXPECT_EQ(module.launches, 0);
  }
}

TEST(DeviceGemmStepTest, RunsOnCublasLtWithOrWithoutTheEpilogueKernel) {
  GJ_EXPECT_ON_EMULATED_DEVICE(RunsOnCublasLtWithOrWithoutTheEpilogueKernel);
}

}  // namespace
}  // namespace guardjit
