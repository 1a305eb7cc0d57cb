// Shape and dtype rules of the binary ops (core/ops/binary.cc): type
// promotion with wrapped numbers, broadcasting, the device rule, true and
// rounding division, and each of ATen's checks (alpha, bool subtraction,
// integer powers, bitwise dtypes, where's condition, clamp's bounds) with
// the argument it names.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TensorMeta Meta(DType dtype, Shape sizes, Device device = Device::Cpu()) {
  return TensorMeta(dtype, sizes, device);
}

// `target`(x0, x1, extra...) with kwargs.
absl::StatusOr<std::vector<TensorMeta>> Binary(const std::string& target,
                                               const TensorMeta& a,
                                               const TensorMeta& b,
                                               Kwargs kwargs = {}) {
  return OpMetas(target, {a, b}, {Arg::Ref("x0"), Arg::Ref("x1")},
                 std::move(kwargs));
}

// `target`(x0, scalar args...) with kwargs.
absl::StatusOr<std::vector<TensorMeta>> WithScalars(const std::string& target,
                                                    const TensorMeta& a,
                                                    std::vector<Arg> scalars,
                                                    Kwargs kwargs = {}) {
  scalars.insert(scalars.begin(), Arg::Ref("x0"));
  return OpMetas(target, {a}, std::move(scalars), std::move(kwargs));
}

void ExpectMeta(const absl::StatusOr<std::vector<TensorMeta>>& out, DType dtype,
                const Shape& shape) {
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, dtype);
  EXPECT_EQ((*out)[0].shape(), shape);
}

TEST(BinaryMetaTest, PromotionAndBroadcasting) {
  ExpectMeta(Binary("aten.add.Tensor", Meta(DType::kInt32, {2, 1}),
                    Meta(DType::kFloat16, {3})),
             DType::kFloat16, {2, 3});
  // A Python int keeps an integer tensor's dtype; a float makes it float32.
  ExpectMeta(
      WithScalars("aten.mul.Scalar", Meta(DType::kInt8, {4}), {Arg::Int(1000)}),
      DType::kInt8, {4});
  ExpectMeta(WithScalars("aten.mul.Scalar", Meta(DType::kInt8, {4}),
                         {Arg::Float(0.5)}),
             DType::kFloat32, {4});
  ExpectMeta(Binary("aten.lt.Tensor", Meta(DType::kFloat64, {2, 3}),
                    Meta(DType::kInt64, {})),
             DType::kBool, {2, 3});
  ExpectError(Binary("aten.mul.Tensor", Meta(DType::kFloat32, {2}),
                     Meta(DType::kFloat32, {3})),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.mul.Tensor): argument 'other': ");
}

TEST(BinaryMetaTest, DevicesMustAgreeExceptForCpuScalars) {
  const Device cuda{DeviceType::kCUDA, 0};
  auto out = Binary("aten.add.Tensor", Meta(DType::kFloat32, {2}, cuda),
                    Meta(DType::kFloat32, {}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].device, cuda);
  ExpectError(Binary("aten.add.Tensor", Meta(DType::kFloat32, {2}),
                     Meta(DType::kFloat32, {2}, cuda)),
              absl::StatusCode::kInvalidArgument,
              "argument 'other': expected all tensors on the same device, "
              "found cpu and cuda:0");
}

TEST(BinaryMetaTest, DivisionAndPowers) {
  const TensorMeta ints = Meta(DType::kInt64, {3});
  ExpectMeta(Binary("aten.div.Tensor", ints, ints), DType::kFloat32, {3});
  ExpectMeta(Binary("aten.div.Tensor_mode", ints, ints,
                    {{"rounding_mode", Arg::String("floor")}}),
             DType::kInt64, {3});
  ExpectError(Binary("aten.div.Tensor_mode", ints, ints,
                     {{"rounding_mode", Arg::String("round")}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'rounding_mode': expected one of None, 'trunc' or "
              "'floor', got 'round'");
  const TensorMeta bools = Meta(DType::kBool, {3});
  ExpectError(Binary("aten.div.Tensor_mode", bools, bools,
                     {{"rounding_mode", Arg::String("trunc")}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'rounding_mode': 'trunc' division is not supported "
              "for bool inputs");
  ExpectError(WithScalars("aten.pow.Tensor_Scalar", ints, {Arg::Int(-1)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'exponent': integers to negative integer powers are "
              "not allowed");
  ExpectError(WithScalars("aten.pow.Tensor_Scalar", Meta(DType::kInt8, {2}),
                          {Arg::Int(200)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'exponent': value 200 cannot be converted to type "
              "int8 without overflow");
  ExpectError(Binary("aten.pow.Tensor_Tensor", bools, bools),
              absl::StatusCode::kInvalidArgument,
              "argument 'exponent': pow is not supported for bool inputs");
  ExpectError(Binary("aten.remainder.Tensor", bools, bools),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': remainder is not supported for bool inputs");
}

TEST(BinaryMetaTest, AlphaAndBoolChecks) {
  const TensorMeta i8 = Meta(DType::kInt8, {2});
  ExpectError(Binary("aten.add.Tensor", i8, i8, {{"alpha", Arg::Float(0.5)}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'alpha': must not be a floating point number for "
              "int8 inputs");
  ExpectError(Binary("aten.add.Tensor", i8, i8, {{"alpha", Arg::Int(300)}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'alpha': value 300 cannot be converted to type int8 "
              "without overflow");
  ExpectError(Binary("aten.add.Tensor", i8, i8, {{"alpha", Arg::Bool(true)}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'alpha': boolean alpha is only supported for bool "
              "results");
  ExpectError(Binary("aten.sub.Tensor", i8, Meta(DType::kBool, {2})),
              absl::StatusCode::kInvalidArgument,
              "argument 'other': subtraction with a bool tensor is not "
              "supported");
  ExpectError(Binary("aten.bitwise_and.Tensor", i8, Meta(DType::kFloat32, {2})),
              absl::StatusCode::kInvalidArgument,
              "argument 'other': bitwise ops need integral or bool tensors, "
              "got float32");
  ExpectError(OpMetas("aten.where.self", {Meta(DType::kUInt8, {2}), i8, i8},
                      {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2")}),
              absl::StatusCode::kInvalidArgument,
              "argument 'condition': expected a bool tensor, got uint8");
}

TEST(BinaryMetaTest, ClampBounds) {
  const TensorMeta i8 = Meta(DType::kInt8, {2, 2});
  ExpectMeta(WithScalars("aten.clamp.default", i8, {Arg::Int(-3), Arg::None()}),
             DType::kInt8, {2, 2});
  // A float bound promotes an integer input, as PyTorch's clamp does.
  ExpectMeta(
      WithScalars("aten.clamp.default", i8, {Arg::None(), Arg::Float(2.5)}),
      DType::kFloat32, {2, 2});
  ExpectError(WithScalars("aten.clamp.default", i8, {Arg::None(), Arg::None()}),
              absl::StatusCode::kInvalidArgument,
              "argument 'min': at least one of 'min' or 'max' must not be "
              "None");
  ExpectError(
      WithScalars("aten.clamp.default", i8, {Arg::None(), Arg::Int(1000)}),
      absl::StatusCode::kInvalidArgument,
      "argument 'max': value 1000 cannot be converted to type int8 "
      "without overflow");
  ExpectError(WithScalars("aten.clamp.default", Meta(DType::kBool, {2}),
                          {Arg::Bool(false), Arg::None()}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': clamp is not supported for bool tensors");
}

}  // namespace
}  // namespace guardjit::testing
