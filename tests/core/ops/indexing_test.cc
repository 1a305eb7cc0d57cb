// Shape rules of the gathering ops (core/ops/indexing.cc): index_select,
// embedding, gather and index.Tensor, with the checks PyTorch makes of
// index dtypes, ranks and sizes, each naming its argument. Index values are
// checked by the kernels: tests/runtime/kernels/indexing_test.cc.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TensorMeta F32(Shape sizes) { return TensorMeta(DType::kFloat32, sizes); }
TensorMeta I64(Shape sizes) { return TensorMeta(DType::kInt64, sizes); }

// `target`(x0, dim, x1) as index_select and gather take them.
absl::StatusOr<std::vector<TensorMeta>> AlongDim(const std::string& target,
                                                 const TensorMeta& self,
                                                 int64_t dim,
                                                 const TensorMeta& index) {
  return OpMetas(target, {self, index},
                 {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1")});
}

TEST(IndexingMetaTest, IndexSelectAndEmbedding) {
  auto out =
      AlongDim("aten.index_select.default", F32({4, 5, 6}), -2, I64({3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 3, 6}));
  ExpectError(
      AlongDim("aten.index_select.default", F32({4, 5}), 0, I64({2, 2})),
      absl::StatusCode::kInvalidArgument,
      "argument 'index': expected a 0-d or 1-d tensor, got 2-d");
  ExpectError(AlongDim("aten.index_select.default", F32({4, 5}), 0,
                       TensorMeta(DType::kInt16, Shape{2})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': expected an int64 or int32 tensor, got int16");
  ExpectError(AlongDim("aten.index_select.default", F32({}), 0, I64({2})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': selecting from a 0-dim tensor takes exactly "
              "1 index, got 2");
  ExpectError(AlongDim("aten.index_select.default", F32({4, 5}), 2, I64({2})),
              absl::StatusCode::kInvalidArgument, "argument 'dim': ");

  out = OpMetas("aten.embedding.default",
                {TensorMeta(DType::kFloat16, Shape{10, 8}), I64({2, 3})},
                {Arg::Ref("x0"), Arg::Ref("x1")});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 8}));
  EXPECT_EQ((*out)[0].dtype, DType::kFloat16);
  ExpectError(OpMetas("aten.embedding.default", {F32({10}), I64({2})},
                      {Arg::Ref("x0"), Arg::Ref("x1")}),
              absl::StatusCode::kInvalidArgument,
              "argument 'weight': expected a 2-D tensor, got 1-D");
}

TEST(IndexingMetaTest, GatherTakesTheIndexShape) {
  auto out = AlongDim("aten.gather.default", F32({4, 5}), 1, I64({2, 9}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 9})) << "dim 1 may be larger";
  ExpectError(AlongDim("aten.gather.default", F32({4, 5}), 1, I64({5, 1})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': size 5 at dimension 0 exceeds self's size 4 "
              "(index [5, 1], self [4, 5], dim 1)");
  ExpectError(AlongDim("aten.gather.default", F32({4, 5}), 0, I64({4})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': expected as many dims as self (2), got 1");
  // PyTorch checks nothing more of an empty index.
  out = AlongDim("aten.gather.default", F32({4, 5}), 0,
                 TensorMeta(DType::kFloat32, Shape{0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{0}));
}

TEST(IndexingMetaTest, IndexTensor) {
  auto out =
      OpMetas("aten.index.Tensor", {F32({2, 3, 7}), I64({5})},
              {Arg::Ref("x0"), Arg::OfList({Arg::None(), Arg::Ref("x1")})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 5, 7}));
  ExpectError(
      OpMetas("aten.index.Tensor", {F32({2, 3}), I64({1})},
              {Arg::Ref("x0"),
               Arg::OfList({Arg::Ref("x1"), Arg::Ref("x1"), Arg::Ref("x1")})}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.index.Tensor): argument 'indices': too many "
      "indices for tensor of dimension 2 (got 3)");
}

}  // namespace
}  // namespace guardjit::testing
