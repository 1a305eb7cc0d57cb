// Shape and dtype rules of cumsum, sort and topk (core/ops/sort.cc): the
// accumulation dtype, values with int64 indices, topk's k against the dim,
// each check naming its argument.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TEST(SortMetaTest, CumsumAccumulatesIntegersInInt64) {
  auto out =
      OpMetas("aten.cumsum.default", {TensorMeta(DType::kBool, Shape{2, 3})},
              {Arg::Ref("x0"), Arg::Int(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kInt64);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  out = OpMetas("aten.cumsum.default", {TensorMeta(DType::kInt32, Shape{2, 3})},
                {Arg::Ref("x0"), Arg::Int(0)},
                {{"dtype", Arg::OfDType(DType::kFloat64)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kFloat64);
  ExpectError(
      OpMetas("aten.cumsum.default", {TensorMeta(DType::kFloat32, Shape{2, 3})},
              {Arg::Ref("x0"), Arg::Int(2)}),
      absl::StatusCode::kInvalidArgument, "argument 'dim': ");
}

TEST(SortMetaTest, SortAndTopkGiveValuesAndInt64Indices) {
  const TensorMeta x(DType::kFloat16, Shape{4, 6});
  auto out = OpMetas("aten.sort.default", {x},
                     {Arg::Ref("x0"), Arg::Int(0), Arg::Bool(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].dtype, DType::kFloat16);
  EXPECT_EQ((*out)[1].dtype, DType::kInt64);
  EXPECT_EQ((*out)[1].shape(), (Shape{4, 6}));

  out = OpMetas("aten.topk.default", {x}, {Arg::Ref("x0"), Arg::Int(2)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 2})) << "dim -1 by default";
  EXPECT_EQ((*out)[1].shape(), (Shape{4, 2}));
  out = OpMetas("aten.topk.default", {x},
                {Arg::Ref("x0"), Arg::Int(4), Arg::Int(0)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 6})) << "k may be the whole dim";
  ExpectError(OpMetas("aten.topk.default", {x}, {Arg::Ref("x0"), Arg::Int(7)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'k': selected index k out of range (k 7, dim 1 of "
              "size 6)");
  ExpectError(OpMetas("aten.topk.default", {x}, {Arg::Ref("x0"), Arg::Int(-1)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'k': selected index k out of range (k -1");
}

}  // namespace
}  // namespace guardjit::testing
