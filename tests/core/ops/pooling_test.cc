// The pooling ops' shape and dtype rules (core/ops/pooling.cc): ATen's output
// sizes (floor and ceil mode, padding, dilation, with or without a batch
// dim, 2-D and 3-D), the indices' int64, the adaptive pools' given sizes,
// and ATen's checks with the argument they name. The reference kernels'
// values are tested in tests/runtime/kernels/pooling_test.cc.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

constexpr char kMaxPool2d[] = "aten.max_pool2d_with_indices.default";

// max_pool2d_with_indices(x0, kernel, stride, padding, dilation, ceil_mode).
absl::StatusOr<std::vector<TensorMeta>> MaxPool2d(
    const TensorMeta& input, std::vector<int64_t> kernel,
    std::vector<int64_t> stride, std::vector<int64_t> padding,
    std::vector<int64_t> dilation = {1}, bool ceil_mode = false) {
  return OpMetas(kMaxPool2d, {input},
                 {Arg::Ref("x0"), Ints(kernel), Ints(stride), Ints(padding),
                  Ints(dilation), Arg::Bool(ceil_mode)});
}

Shape ShapeOf(const TensorMeta& meta) { return meta.shape(); }

TEST(PoolingMetaTest, MaxPoolOutputSizesAndIndices) {
  struct Case {
    Shape in;
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil_mode;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           // floor((6 + 2*1 - 3) / 2) + 1 = 3
           {{1, 3, 6, 6}, {3}, {2}, {1}, {1}, false, {1, 3, 3, 3}},
           // ceil(5 / 2) + 1 = 4: the last window starts inside the input
           {{1, 3, 6, 6}, {3}, {2}, {1}, {1}, true, {1, 3, 4, 4}},
           // ceil mode whose last window would start in the padding: 3
           {{1, 1, 5, 5}, {2}, {2}, {1}, {1}, true, {1, 1, 3, 3}},
           // dilation 2 makes a 3-wide kernel span 5: 7 - 5 + 1 = 3
           {{2, 1, 7, 9}, {3}, {1}, {0}, {2}, false, {2, 1, 3, 5}},
           // stride [] is the kernel; no batch dim
           {{4, 8, 6}, {2, 3}, {}, {0}, {1}, false, {4, 4, 2}},
       }) {
    auto out = MaxPool2d(TensorMeta(DType::kFloat16, c.in), c.kernel, c.stride,
                         c.padding, c.dilation, c.ceil_mode);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ(ShapeOf((*out)[0]), c.out);
    EXPECT_EQ((*out)[0].dtype, DType::kFloat16);
    EXPECT_EQ(ShapeOf((*out)[1]), c.out);
    EXPECT_EQ((*out)[1].dtype, DType::kInt64) << "indices";
  }
}

TEST(PoolingMetaTest, AvgPoolOverTwoAndThreeDims) {
  auto out2 = OpMetas("aten.avg_pool2d.default",
                      {TensorMeta(DType::kInt64, Shape{2, 3, 5, 4})},
                      {Arg::Ref("x0"), Ints({2}), Ints({2, 1}), Ints({1, 0}),
                       Arg::Bool(false), Arg::Bool(true), Arg::Int(3)});
  ASSERT_TRUE(out2.ok()) << out2.status();
  ASSERT_EQ(out2->size(), 1u);
  // H: (5 + 2 - 2) / 2 + 1 = 3; W: (4 - 2) / 1 + 1 = 3.
  EXPECT_EQ(ShapeOf((*out2)[0]), (Shape{2, 3, 3, 3}));
  EXPECT_EQ((*out2)[0].dtype, DType::kInt64);

  auto out3 = OpMetas("aten.avg_pool3d.default",
                      {TensorMeta(DType::kFloat32, Shape{2, 1, 4, 6, 6})},
                      {Arg::Ref("x0"), Ints({2}), Ints({}), Ints({0})});
  ASSERT_TRUE(out3.ok()) << out3.status();
  EXPECT_EQ(ShapeOf((*out3)[0]), (Shape{2, 1, 2, 3, 3}));
}

TEST(PoolingMetaTest, AdaptivePoolTakesTheGivenSizes) {
  auto out = OpMetas("aten._adaptive_avg_pool2d.default",
                     {TensorMeta(DType::kFloat64, Shape{3, 5, 7})},
                     {Arg::Ref("x0"), Ints({4, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ShapeOf((*out)[0]), (Shape{3, 4, 1}));
  // The schema's SymInt[2] refuses other lengths before the rule reads them.
  ExpectError(OpMetas("aten._adaptive_avg_pool2d.default",
                      {TensorMeta(DType::kFloat64, Shape{3, 5, 7})},
                      {Arg::Ref("x0"), Ints({4})}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten._adaptive_avg_pool2d.default): argument "
              "'output_size': expected 2 values, got 1");
  ExpectError(OpMetas("aten._adaptive_avg_pool3d.default",
                      {TensorMeta(DType::kInt32, Shape{1, 2, 2, 2})},
                      {Arg::Ref("x0"), Ints({1, 1, 1})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': adaptive_avg_pool3d is not implemented for "
              "int32");
}

TEST(PoolingMetaTest, AtensChecksNameTheArgument) {
  const TensorMeta x(DType::kFloat32, Shape{1, 1, 4, 4});
  ExpectError(MaxPool2d(x, {0, 2}, {}, {0}), absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.max_pool2d_with_indices.default): argument "
              "'kernel_size': kernel size should be greater than zero, but "
              "got kH: 0 kW: 2");
  // int[2] takes one value or two (the schema refuses others first).
  ExpectError(MaxPool2d(x, {2, 2, 2}, {}, {0}),
              absl::StatusCode::kInvalidArgument,
              "argument 'kernel_size': expected 2 values, got 3");
  ExpectError(MaxPool2d(x, {2}, {0}, {0}), absl::StatusCode::kInvalidArgument,
              "argument 'stride': stride should be greater than zero, but got "
              "dH: 0 dW: 0");
  ExpectError(MaxPool2d(x, {3}, {1}, {2}), absl::StatusCode::kInvalidArgument,
              "argument 'padding': pad should be smaller than or equal to "
              "half of kernel size, but got padW = 2, padH = 2, kW = 3, kH = "
              "3");
  ExpectError(
      MaxPool2d(TensorMeta(DType::kFloat32, Shape{1, 1, 2, 2}), {3}, {1}, {0}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': Given input size: (1x2x2). Calculated output "
      "size: (1x0x0). Output size is too small");
  ExpectError(MaxPool2d(TensorMeta(DType::kFloat32, Shape{4, 4}), {2}, {}, {0}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': max_pool2d: Expected 3D or 4D (batch mode) "
              "tensor with optional 0 dim batch size for input, but got: "
              "[4, 4]");
  ExpectError(MaxPool2d(TensorMeta(DType::kBool, Shape{1, 4, 4}), {2}, {}, {0}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': max_pool2d is not implemented for bool "
              "tensors");
  ExpectError(OpMetas("aten.avg_pool2d.default", {x},
                      {Arg::Ref("x0"), Ints({2}), Ints({}), Ints({0}),
                       Arg::Bool(false), Arg::Bool(true), Arg::Int(0)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'divisor_override': divisor must be not zero");
}

}  // namespace
}  // namespace guardjit::testing
