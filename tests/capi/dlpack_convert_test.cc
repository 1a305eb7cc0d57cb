// DLPack at the C boundary (capi/dlpack_convert.h): element types both ways,
// every check BorrowDLTensor makes of a host's DLTensor with the code and
// the `what` prefix of its error, the overlap test of output layouts, and
// exported tensors. The same checks through gj_function_call:
// bad_input_catalogue_test.cc.

#include "capi/dlpack_convert.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::capi {
namespace {

using testing::ExpectError;

// A float32 host tensor over `data` with the given shape and strides.
DLTensor Host(float* data, std::vector<int64_t>& shape,
              std::vector<int64_t>* strides = nullptr) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  t.strides = strides != nullptr ? strides->data() : nullptr;
  return t;
}

TEST(DlpackConvertTest, ElementTypesRoundTrip) {
  for (DType dtype : testing::kAllDTypes) {
    const DLDataType dl = ToDLDataType(dtype);
    EXPECT_EQ(dl.lanes, 1);
    EXPECT_EQ(dl.bits, ItemSize(dtype) * 8);
    auto back = FromDLDataType(dl, "x");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, dtype);
  }
  EXPECT_EQ(ToDLDataType(DType::kBool).code, GJ_DL_BOOL);
  ExpectError(FromDLDataType({kDLFloat, 32, 4}, "input 0"),
              absl::StatusCode::kInvalidArgument,
              "input 0: unsupported dtype (code 2, bits 32, lanes 4)");
  ExpectError(FromDLDataType({kDLUInt, 16, 1}, "input 0"),
              absl::StatusCode::kInvalidArgument, "bits 16");
}

TEST(DlpackConvertTest, BorrowsCheckedViews) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  std::vector<int64_t> shape = {3, 2}, strides = {1, 3};
  DLTensor t = Host(data, shape, &strides);
  t.byte_offset = 0;
  auto view = BorrowDLTensor(&t, "x");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->data(), data);
  EXPECT_EQ(view->strides(), (Shape{1, 3}));
  EXPECT_EQ(testing::ToDoubles(*view), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Pinned host memory is host memory; CUDA keeps its ordinal.
  t.device = {kDLCUDAHost, 1};
  EXPECT_TRUE(BorrowDLTensor(&t, "x")->device().is_cpu());
  t.device = {kDLCUDA, 2};
  EXPECT_EQ(BorrowDLTensor(&t, "x")->device().index, 2);
  // An empty tensor may have NULL data.
  std::vector<int64_t> empty = {0, 4};
  DLTensor none = Host(nullptr, empty);
  auto e = BorrowDLTensor(&none, "x");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->numel(), 0);
  EXPECT_NE(e->data(), nullptr);
}

TEST(DlpackConvertTest, EveryFieldIsChecked) {
  float data[8] = {};
  std::vector<int64_t> shape = {2, 2};
  const char* what = "gj_function_call: input 1 ('b')";
  ExpectError(BorrowDLTensor(nullptr, what), absl::StatusCode::kInvalidArgument,
              "gj_function_call: input 1 ('b') is NULL");
  DLTensor t = Host(data, shape);
  t.ndim = 65;
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "input 1 ('b'): ndim is 65; expected 0 to 64");
  t = Host(data, shape);
  t.shape = nullptr;
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "shape is NULL with ndim 2");
  std::vector<int64_t> negative = {2, -1};
  t = Host(data, negative);
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "negative size -1 at dim 1 of shape [2, -1]");
  t = Host(data, shape);
  t.device = {kDLCPU, 1};
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "CPU tensor with device_id 1; CPU tensors have device_id 0");
  t.device = {kDLVulkan, 0};
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "tensor is on device Vulkan (type 7, id 0); supported: CPU, "
              "CUDAHost (pinned host memory) and CUDA");
  t.device = {kDLCUDA, -1};
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "CUDA tensor with device_id -1");
  t = Host(nullptr, shape);
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "data is NULL for a tensor of 4 elements");
  t = Host(data, shape);
  t.byte_offset = 2;
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kInvalidArgument,
              "data + byte_offset is not aligned to the 4-byte item size of "
              "float32");
  std::vector<int64_t> huge = {int64_t{1} << 62, 4}, strides = {4, 1};
  t = Host(data, huge, &strides);
  ExpectError(BorrowDLTensor(&t, what), absl::StatusCode::kOutOfRange,
              "input 1 ('b'): ");
}

TEST(DlpackConvertTest, OverlapOfLayouts) {
  const Tensor x = testing::Iota({4, 3});
  EXPECT_TRUE(IsNonOverlapping(x));
  EXPECT_TRUE(IsNonOverlapping(x.AsStrided({3, 4}, {1, 3})));
  // Broadcast (stride 0) and overlapping windows share elements.
  EXPECT_FALSE(IsNonOverlapping(x.AsStrided({4, 3}, {0, 1})));
  EXPECT_FALSE(IsNonOverlapping(x.AsStrided({3, 3}, {1, 1})));
  // Interleaved strides the dense rule cannot decide: decided exactly.
  const Tensor big = testing::Iota({100});
  EXPECT_TRUE(IsNonOverlapping(big.AsStrided({2, 3}, {3, 2})))
      << "offsets 0 2 4 3 5 7";
  EXPECT_FALSE(IsNonOverlapping(big.AsStrided({5, 3}, {2, 3})))
      << "offset 6 at (3, 0) and (0, 2)";
  // A size-1 dim never overlaps, whatever its stride.
  EXPECT_TRUE(IsNonOverlapping(x.AsStrided({1, 3}, {0, 1})));
}

TEST(DlpackConvertTest, ExportedTensorsKeepTheirStorage) {
  Tensor t = testing::Iota({2, 3}, DType::kInt64);
  const void* data = t.data();
  DLManagedTensor* managed = ExportDLManagedTensor(std::move(t));
  ASSERT_NE(managed, nullptr);
  const DLTensor& dl = managed->dl_tensor;
  EXPECT_EQ(dl.data, data);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 2);
  EXPECT_EQ(dl.shape[1], 3);
  EXPECT_EQ(dl.strides[0], 3);
  EXPECT_EQ(dl.dtype.code, kDLInt);
  EXPECT_EQ(dl.dtype.bits, 64);
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(static_cast<const int64_t*>(dl.data)[5], 5);
  managed->deleter(managed);
}

}  // namespace
}  // namespace guardjit::capi
