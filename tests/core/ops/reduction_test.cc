// Shape and dtype rules of the reductions (core/ops/reduction.cc and the
// `dim` reading of core/ops/reduction_args.h): each family's result dtype,
// reduced sizes with and without keepdim, what an empty `dim` list means,
// and the checks with the argument they name.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// `target`(x0, args...) with kwargs.
absl::StatusOr<std::vector<TensorMeta>> Reduce(const std::string& target,
                                               const TensorMeta& self,
                                               std::vector<Arg> args = {},
                                               Kwargs kwargs = {}) {
  args.insert(args.begin(), Arg::Ref("x0"));
  return OpMetas(target, {self}, std::move(args), std::move(kwargs));
}

// The one output's dtype, or kBool with a test failure.
DType DTypeOf(const absl::StatusOr<std::vector<TensorMeta>>& out) {
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].dtype : DType::kBool;
}

TEST(ReductionMetaTest, ResultDTypes) {
  const TensorMeta ints(DType::kInt32, Shape{2, 3});
  const TensorMeta bytes(DType::kUInt8, Shape{2, 3});
  const TensorMeta halves(DType::kFloat16, Shape{2, 3});
  // Integral and bool sums and products accumulate in int64.
  EXPECT_EQ(DTypeOf(Reduce("aten.sum.default", ints)), DType::kInt64);
  EXPECT_EQ(
      DTypeOf(Reduce("aten.prod.default", TensorMeta(DType::kBool, Shape{2}))),
      DType::kInt64);
  EXPECT_EQ(DTypeOf(Reduce("aten.sum.default", halves)), DType::kFloat16);
  EXPECT_EQ(DTypeOf(Reduce("aten.sum.default", ints, {},
                           {{"dtype", Arg::OfDType(DType::kFloat64)}})),
            DType::kFloat64);
  EXPECT_EQ(DTypeOf(Reduce("aten.mean.default", ints, {},
                           {{"dtype", Arg::OfDType(DType::kFloat32)}})),
            DType::kFloat32);
  EXPECT_EQ(DTypeOf(Reduce("aten.amax.default", bytes)), DType::kUInt8);
  EXPECT_EQ(DTypeOf(Reduce("aten.argmin.default", halves)), DType::kInt64);
  // any/all keep uint8, the pre-bool mask type, and give bool otherwise.
  EXPECT_EQ(DTypeOf(Reduce("aten.any.default", bytes)), DType::kUInt8);
  EXPECT_EQ(DTypeOf(Reduce("aten.all.default", halves)), DType::kBool);
}

TEST(ReductionMetaTest, ReducedSizes) {
  const TensorMeta x(DType::kFloat32, Shape{2, 3, 4});
  auto out =
      Reduce("aten.sum.dim_IntList", x, {Ints({0, -1}), Arg::Bool(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 3, 1}));
  out = Reduce("aten.sum.dim_IntList", x, {Ints({0, -1}), Arg::Bool(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{3}));
  // dim=[] reduces every dim, except for any.dims/all.dims: none.
  out = Reduce("aten.mean.dim", x, {Ints({}), Arg::Bool(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{}));
  out = Reduce("aten.any.dims", x, {Ints({}), Arg::Bool(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 4}));
  // max.dim: values of self's dtype and int64 indices.
  out = Reduce("aten.max.dim", TensorMeta(DType::kBool, Shape{2, 3, 4}),
               {Arg::Int(1), Arg::Bool(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 4}));
  EXPECT_EQ((*out)[0].dtype, DType::kBool);
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 4}));
  EXPECT_EQ((*out)[1].dtype, DType::kInt64);
  // An empty dim reduces where the reduction has an identity.
  out = Reduce("aten.amax.default", TensorMeta(DType::kFloat32, Shape{0, 3}),
               {Ints({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{0}));
}

TEST(ReductionMetaTest, ChecksNameTheArgument) {
  const TensorMeta ints(DType::kInt64, Shape{2, 3});
  ExpectError(Reduce("aten.mean.default", ints),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': mean(): could not infer output dtype. Input "
              "dtype must be either a floating point or complex dtype. Got: "
              "int64");
  ExpectError(Reduce("aten.mean.default", TensorMeta(DType::kFloat32, Shape{2}),
                     {}, {{"dtype", Arg::OfDType(DType::kInt32)}}),
              absl::StatusCode::kInvalidArgument,
              "argument 'dtype': mean(): could not infer output dtype. "
              "Optional dtype must be either a floating point or complex "
              "dtype. Got: int32");
  ExpectError(Reduce("aten.var.correction", ints),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': std and var only support floating point and "
              "complex dtypes, got int64");
  ExpectError(Reduce("aten.argmax.default", TensorMeta(DType::kBool, Shape{2})),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': argmax(): not implemented for 'bool'");
  // No identity: an empty input needs a dim, and the dim must not be empty.
  const TensorMeta empty(DType::kFloat32, Shape{0, 3});
  ExpectError(Reduce("aten.amin.default", empty),
              absl::StatusCode::kInvalidArgument,
              "argument 'dim': amin(): Expected reduction dim to be specified "
              "for input.numel() == 0.");
  ExpectError(
      Reduce("aten.argmax.default", empty, {Arg::Int(0), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument,
      "argument 'dim': argmax(): Expected reduction dim 0 to have "
      "non-zero size.");
  ExpectError(
      Reduce("aten.sum.dim_IntList", ints, {Ints({2}), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument, "argument 'dim': ");
  ExpectError(
      Reduce("aten.sum.dim_IntList", TensorMeta(DType::kFloat32, Shape{}),
             {Ints({0, -1}), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument,
      "argument 'dim': dim 0 appears multiple times in the list of "
      "dims");
}

}  // namespace
}  // namespace guardjit::testing
