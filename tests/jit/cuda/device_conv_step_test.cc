// A convolution step on a CUDA device (jit/cuda/device_conv_step.h), from
// ConvStep values built here: GraphedConvArgs's strided-batched cuBLASLt
// products (over the groups of an image, or over the images of a group;
// over im2col columns or a pointwise convolution's input read in place) and
// its refusals, and RunDeviceConvStep on the emulated device and cuBLASLt in
// a process of its own (tests/runtime/cuda/emulated_process_test_util.h)
// against convolutions computed here: cuBLASLt writing the output itself,
// or the whole result handed to the epilogue kernel (a KernelModule of the
// test's own that reads it back).

#include "jit/cuda/device_conv_step.h"

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

Tensor Floats(int64_t n, float scale = 1, float shift = 0) {
  Tensor t = Tensor::Empty(DType::kFloat32, {n}).value();
  for (int64_t i = 0; i < n; ++i) {
    t.data_as<float>()[i] = static_cast<float>((i * 5) % 7) * scale + shift;
  }
  return t;
}

// A 2x2 convolution of a [batch, 4, 3, 3] input in 2 groups of 2 input and
// 3 output channels: [6, 2, 2, 2] weight, [batch, 6, 2, 2] result, over
// im2col columns in slot 2.
ConvStep GroupedConv(int64_t batch) {
  ConvStep step;
  step.target = "aten.convolution.default";
  step.spatial = 2;
  step.batch = batch;
  step.groups = 2;
  step.in_channels = 2;
  step.out_channels = 3;
  step.in = {1, 3, 3};
  step.kernel = {1, 2, 2};
  step.out = {1, 2, 2};
  step.input = Ref(0, {batch, 4, 3, 3}, {36, 9, 3, 1});
  step.weight = Ref(1, {6, 2, 2, 2}, {8, 4, 2, 1});
  step.product_param = 1;
  step.device = ConvStep::Device{2, -1};
  return step;
}

// A 1x1 convolution of a [3, 2, 2, 2] input to 5 channels, read in place.
ConvStep Pointwise() {
  ConvStep step;
  step.target = "aten.convolution.default";
  step.spatial = 2;
  step.batch = 3;
  step.in_channels = 2;
  step.out_channels = 5;
  step.in = {1, 2, 2};
  step.out = {1, 2, 2};
  step.input = Ref(0, {3, 2, 2, 2}, {8, 4, 2, 1});
  step.weight = Ref(1, {5, 2, 1, 1}, {2, 1, 1, 1});
  step.product_param = 0;
  step.device = ConvStep::Device{-1, 2};
  return step;
}

const void* Same(int, const void* p) { return p; }

TEST(DeviceConvStepTest, GraphedArgsOverTheGroupsOfAnImage) {
  const ConvStep step = GroupedConv(1);
  ASSERT_EQ(step.rows(), 8);
  ASSERT_EQ(step.cols(), 4);
  const std::vector<Tensor> slots = {Floats(36), Floats(48), Floats(64)};
  std::vector<int> asked;
  auto where = [&](int slot, const void* p) {
    asked.push_back(slot);
    return p;
  };
  std::vector<float> out(64);
  const void* product = out.data();
  auto args = GraphedConvArgs(step, slots, product, where);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(asked, (std::vector<int>{1, 2})) << "the weight, the columns";
  // Fewer images than groups: one call per image, batched over the groups.
  ASSERT_EQ(args->size(), 1u);
  const CublasLtGemmArgs& a = (*args)[0];
  EXPECT_EQ(a.batch, 2);
  EXPECT_EQ(a.m, 3);
  EXPECT_EQ(a.n, 4);
  EXPECT_EQ(a.k, 8);
  EXPECT_EQ(a.a.data, slots[1].data());
  EXPECT_EQ(a.a.row_stride, 8);
  EXPECT_EQ(a.a.col_stride, 1);
  EXPECT_EQ(a.a.batch_stride, 3 * 8) << "a group's block of weight rows";
  EXPECT_EQ(a.b.data, slots[2].data());
  EXPECT_EQ(a.b.row_stride, 4);
  EXPECT_EQ(a.b.batch_stride, 8 * 4) << "a group's column matrix";
  EXPECT_EQ(a.d.data, product);
  EXPECT_EQ(a.d.row_stride, 4);
  EXPECT_EQ(a.d.batch_stride, 3 * 4) << "a group's output channels";
}

TEST(DeviceConvStepTest, GraphedArgsOverTheImagesOfAGroup) {
  // Batch 3 >= groups 2: one call per group, batched over the images.
  const ConvStep step = GroupedConv(3);
  const std::vector<Tensor> slots = {Floats(108), Floats(48), Floats(192)};
  std::vector<float> out(128);
  float* product = out.data();
  auto args = GraphedConvArgs(step, slots, product, Same);
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const CublasLtGemmArgs& a = (*args)[g];
    EXPECT_EQ(a.batch, 3);
    EXPECT_EQ(a.a.data, slots[1].data_as<float>() + g * 3 * 8);
    EXPECT_EQ(a.a.batch_stride, 0) << "one weight for every image";
    EXPECT_EQ(a.b.data, slots[2].data_as<float>() + g * 8 * 4);
    EXPECT_EQ(a.b.batch_stride, 2 * 8 * 4);
    EXPECT_EQ(a.d.data, product + g * 3 * 4);
    EXPECT_EQ(a.d.batch_stride, 2 * 3 * 4);
  }

  // The pointwise convolution reads its input: rows are channels.
  const ConvStep pointwise = Pointwise();
  const std::vector<Tensor> pw_slots = {Floats(24), Floats(10), Floats(60)};
  auto pw = GraphedConvArgs(pointwise, pw_slots, product, Same);
  ASSERT_TRUE(pw.ok()) << pw.status();
  ASSERT_EQ(pw->size(), 1u);
  EXPECT_EQ((*pw)[0].batch, 3);
  EXPECT_EQ((*pw)[0].k, 2);
  EXPECT_EQ((*pw)[0].n, 4);
  EXPECT_EQ((*pw)[0].b.data, pw_slots[0].data());
  EXPECT_EQ((*pw)[0].b.row_stride, 4);
  EXPECT_EQ((*pw)[0].b.col_stride, 1);
  EXPECT_EQ((*pw)[0].b.batch_stride, 8);
}

TEST(DeviceConvStepTest, GraphedArgsRefuseWhatAGraphCannotRecord) {
  std::vector<float> out(64);
  const void* product = out.data();
  const std::vector<Tensor> slots = {Floats(200), Floats(200), Floats(200)};
  ConvStep host = GroupedConv(1);
  host.device.reset();
  EXPECT_EQ(GraphedConvArgs(host, slots, product, Same).status().code(),
            absl::StatusCode::kInternal);
  // A weight with no unit stride needs a contiguous copy.
  ConvStep weight = GroupedConv(1);
  weight.weight = Ref(1, {6, 2, 2, 2}, {16, 8, 4, 2});
  auto refused = GraphedConvArgs(weight, slots, product, Same);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("the weight"));
  // A pointwise input whose channels and positions both stride.
  ConvStep input = Pointwise();
  input.input = Ref(0, {3, 2, 2, 2}, {32, 8, 4, 2});
  auto unread = GraphedConvArgs(input, slots, product, Same);
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(unread.status().message(), HasSubstr("operand B"));
}

// The convolution of `step` (groups, 2-d, no padding, stride 1) over host
// values x and w: [batch, groups * out_channels, out positions].
std::vector<float> ConvReference(const ConvStep& s, const float* x,
                                 const float* w) {
  const int64_t oh = s.out[1], ow = s.out[2], kh = s.kernel[1],
                kw = s.kernel[2], ih = s.in[1], iw = s.in[2];
  const int64_t cin = s.groups * s.in_channels,
                cout = s.groups * s.out_channels;
  std::vector<float> out(s.batch * cout * oh * ow, 0);
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t o = 0; o < cout; ++o) {
      const int64_t g = o / s.out_channels;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          float sum = 0;
          for (int64_t c = 0; c < s.in_channels; ++c) {
            for (int64_t a = 0; a < kh; ++a) {
              for (int64_t b = 0; b < kw; ++b) {
                sum += w[((o * s.in_channels + c) * kh + a) * kw + b] *
                       x[((n * cin + g * s.in_channels + c) * ih + y + a) * iw +
                         xx + b];
              }
            }
          }
          out[((n * cout + o) * oh + y) * ow + xx] = sum;
        }
      }
    }
  }
  return out;
}

// The im2col columns [batch, groups, rows, cols] of `step` over x.
Tensor Im2Col(const ConvStep& s, const float* x) {
  const int64_t oh = s.out[1], ow = s.out[2], kh = s.kernel[1],
                kw = s.kernel[2], ih = s.in[1], iw = s.in[2];
  const int64_t cin = s.groups * s.in_channels;
  Tensor cols =
      Tensor::Empty(DType::kFloat32, {s.batch * s.groups * s.rows() * s.cols()})
          .value();
  float* p = cols.data_as<float>();
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t c = 0; c < s.in_channels; ++c) {
        for (int64_t a = 0; a < kh; ++a) {
          for (int64_t b = 0; b < kw; ++b) {
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t xx = 0; xx < ow; ++xx) {
                *p++ = x[((n * cin + g * s.in_channels + c) * ih + y + a) * iw +
                         xx + b];
              }
            }
          }
        }
      }
    }
  }
  return cols;
}

class RecordingModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    (void)index;
    (void)sizes;
    (void)faults;
    (void)ctx;
    ++launches;
    const float* product = static_cast<const float*>(buffers[product_param]);
    seen.assign(product, product + product_elements);
    return 0;
  }
  int product_param = 1;
  int64_t product_elements = 0;
  mutable int launches = 0;
  mutable std::vector<float> seen;
};

void ExpectNear(const std::vector<float>& actual,
                const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4) << i;
  }
}

void ConvolvesOnCublasLt() {
  const Device gpu{DeviceType::kCUDA, 0};
  std::shared_ptr<Allocator> allocator =
      (*CudaCachingAllocator::ForDevice(0))->OnStream(nullptr);
  auto on_device = [&](const Tensor& t) {
    return CudaToDevice(t, gpu, allocator, nullptr).value();
  };
  Node node;
  node.name = "conv1";
  node.target = "aten.convolution.default";
  RunContext ctx;

  // Grouped, over im2col columns: the whole result to the epilogue kernel.
  {
    const ConvStep step = GroupedConv(2);
    const Tensor x = Floats(2 * 36, 0.5f, -1);
    const Tensor w = Floats(48, -0.25f, 0.5f);
    const std::vector<Tensor> slots = {
        on_device(x), on_device(w),
        on_device(Im2Col(step, x.data_as<float>()))};
    RecordingModule module;
    module.product_elements = 2 * 6 * 4;
    void* params[] = {nullptr, nullptr};
    const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
    absl::StatusOr<int64_t> failed = RunDeviceConvStep(
        step, node, module, 0, nullptr, params, slots, {}, gpu, allocator, ctx);
    ASSERT_TRUE(failed.ok()) << failed.status();
    EXPECT_EQ(module.launches, 1);
    EXPECT_EQ(EmulatedCublasLt::counters().matmuls, matmuls + 2)
        << "one strided-batched product per group";
    ExpectNear(module.seen,
               ConvReference(step, x.data_as<float>(), w.data_as<float>()));
  }

  // Pointwise, its input read in place, cuBLASLt writing the output slot.
  {
    const ConvStep step = Pointwise();
    const Tensor x = Floats(24, 1, -3);
    const Tensor w = Floats(10, 0.5f, -1);
    const std::vector<Tensor> slots = {
        on_device(x), on_device(w),
        Tensor::Empty(DType::kFloat32, {3, 5, 2, 2}, allocator, gpu).value()};
    RecordingModule module;
    void* params[] = {nullptr};
    absl::StatusOr<int64_t> failed = RunDeviceConvStep(
        step, node, module, 0, nullptr, params, slots, {}, gpu, allocator, ctx);
    ASSERT_TRUE(failed.ok()) << failed.status();
    EXPECT_EQ(module.launches, 0) << "cuBLASLt wrote the output";
    ExpectNear(HostValues(slots[2]),
               ConvReference(step, x.data_as<float>(), w.data_as<float>()));
  }

  // A host plan's step is refused, naming the node.
  {
    ConvStep host = Pointwise();
    host.device.reset();
    RecordingModule module;
    void* params[] = {nullptr};
    const std::vector<Tensor> slots = {
        on_device(Floats(24)), on_device(Floats(10)), on_device(Floats(60))};
    absl::StatusOr<int64_t> failed = RunDeviceConvStep(
        host, node, module, 0, nullptr, params, slots, {}, gpu, allocator, ctx);
    ASSERT_FALSE(failed.ok());
    EXPECT_THAT(failed.status().message(),
                HasSubstr("node 'conv1' (aten.convolution.default)"));
  }
}

TEST(DeviceConvStepTest, ConvolvesOnCublasLt) {
  GJ_EXPECT_ON_EMULATED_DEVICE(ConvolvesOnCublasLt);
}

}  // namespace
}  // namespace guardjit
