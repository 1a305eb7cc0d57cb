// Shape and dtype rules of the factory ops (core/ops/creation.cc): full's
// dtype from its fill value, arange's length and dtype in each overload,
// empty/empty_strided, and the checks (overflowing fill values and bounds,
// negative or oversized shapes, empty or inconsistent ranges) with the
// argument they name.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// The factory ops take no tensor: the graph's one input goes unused.
absl::StatusOr<std::vector<TensorMeta>> Factory(const std::string& target,
                                                std::vector<Arg> args,
                                                Kwargs kwargs = {}) {
  return OpMetas(target, {TensorMeta(DType::kFloat32, Shape{1})},
                 std::move(args), std::move(kwargs));
}

Kwargs WithDType(DType dtype) { return {{"dtype", Arg::OfDType(dtype)}}; }

void ExpectMeta(const absl::StatusOr<std::vector<TensorMeta>>& out, DType dtype,
                const Shape& shape) {
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].dtype, dtype);
  EXPECT_EQ((*out)[0].shape(), shape);
}

TEST(CreationMetaTest, FullTakesItsDTypeFromTheFillValue) {
  const Arg size = Ints({2, 3});
  ExpectMeta(Factory("aten.full.default", {size, Arg::Float(1.5)}),
             DType::kFloat32, {2, 3});
  ExpectMeta(Factory("aten.full.default", {size, Arg::Int(7)}), DType::kInt64,
             {2, 3});
  ExpectMeta(Factory("aten.full.default", {size, Arg::Bool(true)}),
             DType::kBool, {2, 3});
  ExpectMeta(Factory("aten.full.default", {size, Arg::Int(7)},
                     WithDType(DType::kFloat16)),
             DType::kFloat16, {2, 3});
  ExpectError(Factory("aten.full.default", {size, Arg::Int(300)},
                      WithDType(DType::kInt8)),
              absl::StatusCode::kInvalidArgument,
              "argument 'fill_value': value 300 cannot be converted to type "
              "int8 without overflow");
  ExpectError(Factory("aten.full.default", {Ints({2, -1}), Arg::Int(0)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': negative dimension -1 in [2, -1]");
  ExpectError(
      Factory("aten.full.default",
              {Ints({int64_t{1} << 31, int64_t{1} << 31}), Arg::Int(0)}),
      absl::StatusCode::kOutOfRange,
      "argument 'size': a int64 tensor of shape [2147483648, "
      "2147483648] needs more than 2^63 bytes");
}

TEST(CreationMetaTest, ArangeLengthsAndDTypes) {
  ExpectMeta(Factory("aten.arange.default", {Arg::Int(5)}), DType::kInt64, {5});
  // ceil(2.5 / 1): a float bound gives the default float dtype.
  ExpectMeta(Factory("aten.arange.start", {Arg::Int(0), Arg::Float(2.5)}),
             DType::kFloat32, {3});
  // 10, 7, 4, 1.
  ExpectMeta(Factory("aten.arange.start_step",
                     {Arg::Int(10), Arg::Int(0), Arg::Int(-3)}),
             DType::kInt64, {4});
  ExpectMeta(Factory("aten.arange.start_step",
                     {Arg::Float(0.5), Arg::Int(3), Arg::Int(1)},
                     WithDType(DType::kInt32)),
             DType::kInt32, {3});
  ExpectMeta(Factory("aten.arange.start", {Arg::Int(4), Arg::Int(4)}),
             DType::kInt64, {0});
}

TEST(CreationMetaTest, ArangeChecksNameTheArgument) {
  ExpectError(Factory("aten.arange.start_step",
                      {Arg::Int(0), Arg::Int(10), Arg::Int(0)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'step': step must be nonzero");
  ExpectError(Factory("aten.arange.start_step",
                      {Arg::Int(0), Arg::Int(10), Arg::Int(-1)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'step': upper bound and larger bound inconsistent "
              "with step sign (start 0, end 10, step -1)");
  // Without a step the range is reported at `end`.
  ExpectError(Factory("aten.arange.start", {Arg::Int(3), Arg::Int(1)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'end': upper bound and larger bound inconsistent");
  ExpectError(
      Factory("aten.arange.default", {Arg::Int(3)}, WithDType(DType::kBool)),
      absl::StatusCode::kInvalidArgument,
      "argument 'dtype': arange is not defined for bool");
  ExpectError(Factory("aten.arange.default", {Arg::Float(1e30)},
                      WithDType(DType::kInt64)),
              absl::StatusCode::kInvalidArgument,
              "argument 'end': value 1e+30 cannot be converted to type int64 "
              "without overflow");
}

TEST(CreationMetaTest, EmptyAndEmptyStrided) {
  ExpectMeta(Factory("aten.empty.memory_format", {Ints({4, 0})},
                     WithDType(DType::kUInt8)),
             DType::kUInt8, {4, 0});
  ExpectMeta(
      Factory("aten.empty_strided.default", {Ints({2, 3}), Ints({1, 2})}),
      DType::kFloat32, {2, 3});
  ExpectError(Factory("aten.empty.memory_format", {Ints({3, -2})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': Trying to create tensor with negative "
              "dimension -2");
  ExpectError(Factory("aten.empty_strided.default", {Ints({2, 3}), Ints({3})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'stride': dimensionality of sizes (2) must match "
              "dimensionality of strides (1)");
  ExpectError(
      Factory("aten.empty_strided.default", {Ints({2, 3}), Ints({3, -1})}),
      absl::StatusCode::kInvalidArgument,
      "argument 'stride': negative stride -1");
}

}  // namespace
}  // namespace guardjit::testing
