// Dtype rules of the unary pointwise ops (core/ops/unary.cc), one case per
// rule: kept, kept but not bool (with PyTorch's hint where it gives one),
// integers computed in float32, floating only, bool results, bitwise; and
// gelu's approximate argument. The shape is always the input's.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

absl::StatusOr<std::vector<TensorMeta>> Unary(const std::string& target,
                                              DType dtype, Kwargs kwargs = {}) {
  return OpMetas(target, {TensorMeta(dtype, Shape{2, 3})}, {Arg::Ref("x0")},
                 std::move(kwargs));
}

// The result dtype, failing the test (and giving kBool) on an error.
DType ResultOf(const std::string& target, DType dtype) {
  auto out = Unary(target, dtype);
  EXPECT_TRUE(out.ok()) << target << ": " << out.status();
  if (!out.ok()) return DType::kBool;
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3})) << target;
  return (*out)[0].dtype;
}

TEST(UnaryMetaTest, EachDTypeRule) {
  EXPECT_EQ(ResultOf("aten.sign.default", DType::kBool), DType::kBool);
  EXPECT_EQ(ResultOf("aten.abs.default", DType::kInt16), DType::kInt16);
  EXPECT_EQ(ResultOf("aten.floor.default", DType::kInt32), DType::kInt32)
      << "integers are returned unchanged";
  EXPECT_EQ(ResultOf("aten.exp.default", DType::kInt64), DType::kFloat32);
  EXPECT_EQ(ResultOf("aten.sqrt.default", DType::kBool), DType::kFloat32);
  EXPECT_EQ(ResultOf("aten.sigmoid.default", DType::kBFloat16),
            DType::kBFloat16);
  EXPECT_EQ(ResultOf("aten.silu.default", DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(ResultOf("aten.isnan.default", DType::kFloat16), DType::kBool);
  EXPECT_EQ(ResultOf("aten.logical_not.default", DType::kInt8), DType::kBool);
  EXPECT_EQ(ResultOf("aten.bitwise_not.default", DType::kUInt8), DType::kUInt8);
}

TEST(UnaryMetaTest, RefusedDTypesNameSelf) {
  ExpectError(Unary("aten.neg.default", DType::kBool),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': neg does not support bool tensors; to invert "
              "a mask use logical_not() or bitwise_not()");
  ExpectError(Unary("aten.relu.default", DType::kBool),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': relu does not support bool tensors");
  ExpectError(Unary("aten.gelu.default", DType::kInt64),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': gelu needs a floating tensor, got int64");
  ExpectError(Unary("aten.bitwise_not.default", DType::kFloat32),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': bitwise_not needs an integral or bool tensor, "
              "got float32");
}

TEST(UnaryMetaTest, GeluApproximate) {
  EXPECT_TRUE(Unary("aten.gelu.default", DType::kFloat32,
                    {{"approximate", Arg::String("tanh")}})
                  .ok());
  ExpectError(Unary("aten.gelu.default", DType::kFloat32,
                    {{"approximate", Arg::String("erf")}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'approximate': expected 'none' or 'tanh', got 'erf'");
}

}  // namespace
}  // namespace guardjit::testing
