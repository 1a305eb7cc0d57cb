// The shape and dtype rules of scaled_dot_product_attention
// (core/ops/attention.cc): query (N..., L, E), key (N..., S, E) and value
// (N..., S, Ev) give (N..., L, Ev) in query's dtype; a mask, bool or query's
// dtype, must broadcast to the scores (N..., L, S) without growing them.
// Symbolic sizes stay symbolic. The reference kernel's values and the
// eager path's errors are tested in tests/runtime/kernels/attention_test.cc.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/shape_env.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

constexpr char kSdpa[] = "aten.scaled_dot_product_attention.default";

// scaled_dot_product_attention(x0, x1, x2, x3 or None, 0.0, is_causal).
absl::StatusOr<std::vector<TensorMeta>> Sdpa(
    const TensorMeta& q, const TensorMeta& k, const TensorMeta& v,
    const std::optional<TensorMeta>& mask = std::nullopt,
    bool is_causal = false, Kwargs kwargs = {}) {
  std::vector<TensorMeta> inputs = {q, k, v};
  if (mask.has_value()) inputs.push_back(*mask);
  return OpMetas(kSdpa, inputs,
                 {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2"),
                  mask.has_value() ? Arg::Ref("x3") : Arg::None(),
                  Arg::Float(0.0), Arg::Bool(is_causal)},
                 std::move(kwargs));
}

TensorMeta F32(Shape sizes) { return TensorMeta(DType::kFloat32, sizes); }

TEST(AttentionMetaTest, OutputIsQueryRowsByValueWidth) {
  auto out = Sdpa(TensorMeta(DType::kFloat16, Shape{2, 3, 4, 8}),
                  TensorMeta(DType::kFloat16, Shape{2, 3, 6, 8}),
                  TensorMeta(DType::kFloat16, Shape{2, 3, 6, 5}));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ((*out)[0].dtype, DType::kFloat16);

  // No batch dims; a scale and is_causal change no size.
  auto plain = Sdpa(TensorMeta(DType::kBFloat16, Shape{4, 8}),
                    TensorMeta(DType::kBFloat16, Shape{6, 8}),
                    TensorMeta(DType::kBFloat16, Shape{6, 16}), std::nullopt,
                    /*is_causal=*/true, {{"scale", Arg::Float(0.25)}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[0].shape(), (Shape{4, 16}));
  EXPECT_EQ((*plain)[0].dtype, DType::kBFloat16);
}

TEST(AttentionMetaTest, MasksBroadcastToTheScores) {
  const TensorMeta q = F32({2, 3, 4, 8}), k = F32({2, 3, 6, 8}),
                   v = F32({2, 3, 6, 5});
  // The scores are [2, 3, 4, 6].
  for (const TensorMeta& mask :
       {TensorMeta(DType::kBool, Shape{4, 6}),
        TensorMeta(DType::kBool, Shape{1, 6}), F32({2, 1, 1, 6}),
        F32({3, 4, 1}), F32({2, 3, 4, 6})}) {
    SCOPED_TRACE(mask.ToString());
    auto out = Sdpa(q, k, v, mask);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 4, 5}));
  }
}

TEST(AttentionMetaTest, AMaskThatWouldGrowTheScoresIsRefused) {
  const TensorMeta q = F32({4, 8}), k = F32({6, 8}), v = F32({6, 5});
  ExpectError(Sdpa(q, k, v, TensorMeta(DType::kBool, Shape{5, 4, 6})),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.scaled_dot_product_attention.default): "
              "argument 'attn_mask': shape [5, 4, 6] cannot be broadcast to "
              "the scores' shape [4, 6]");
  ExpectError(Sdpa(q, k, v, TensorMeta(DType::kBool, Shape{2, 4, 1})),
              absl::StatusCode::kInvalidArgument,
              "argument 'attn_mask': shape [2, 4, 1] cannot be broadcast to "
              "the scores' shape [4, 6]");
  // Neither bool nor query's dtype.
  ExpectError(Sdpa(q, k, v, TensorMeta(DType::kFloat64, Shape{4, 6})),
              absl::StatusCode::kInvalidArgument,
              "argument 'attn_mask': expected bool or query's dtype float32, "
              "got float64");
  ExpectError(Sdpa(q, k, v, TensorMeta(DType::kBool, Shape{4, 6}),
                   /*is_causal=*/true),
              absl::StatusCode::kInvalidArgument,
              "argument 'attn_mask': an explicit mask should not be set when "
              "is_causal");
}

TEST(AttentionMetaTest, RanksMustMatchTheQuerys) {
  ExpectError(Sdpa(F32({8}), F32({8}), F32({8})),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.scaled_dot_product_attention.default): "
              "argument 'query': expected at least 2 dims (..., L, E), got 1");
  ExpectError(Sdpa(F32({2, 4, 8}), F32({6, 8}), F32({2, 6, 5})),
              absl::StatusCode::kInvalidArgument,
              "argument 'key': expected 3 dims like query, got 2");
  ExpectError(Sdpa(F32({2, 4, 8}), F32({2, 6, 8}), F32({1, 2, 6, 5})),
              absl::StatusCode::kInvalidArgument,
              "argument 'value': expected 3 dims like query, got 4");
}

TEST(AttentionMetaTest, BatchDimsMustMatchWithoutBroadcastOrGroupedHeads) {
  ExpectError(Sdpa(F32({2, 4, 8}), F32({3, 6, 8}), F32({3, 6, 5})),
              absl::StatusCode::kInvalidArgument,
              "argument 'key': batch dims [3, 6, 8] do not match query's "
              "[2, 4, 8]");
  // A batch of 1 does not broadcast either.
  ExpectError(Sdpa(F32({2, 4, 8}), F32({2, 6, 8}), F32({1, 6, 5})),
              absl::StatusCode::kInvalidArgument,
              "argument 'value': batch dims [1, 6, 5] do not match query's "
              "[2, 4, 8]");
  // 8 query heads over 2 key/value heads needs enable_gqa.
  ExpectError(
      Sdpa(F32({1, 8, 4, 16}), F32({1, 2, 6, 16}), F32({1, 2, 6, 16})),
      absl::StatusCode::kInvalidArgument,
      "argument 'key': batch dims [1, 2, 6, 16] do not match query's [1, 8, "
      "4, 16]");
}

TEST(AttentionMetaTest, DTypesMustBeQuerysAndFloating) {
  ExpectError(Sdpa(TensorMeta(DType::kFloat16, Shape{4, 8}), F32({6, 8}),
                   TensorMeta(DType::kFloat16, Shape{6, 5})),
              absl::StatusCode::kInvalidArgument,
              "argument 'key': expected query's dtype float16, got float32");
  // Matching integer dtypes pass the key and value checks, then fail.
  const TensorMeta i32(DType::kInt32, Shape{4, 8});
  ExpectError(Sdpa(i32, i32, i32), absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.scaled_dot_product_attention.default): "
              "argument 'query': expected a floating dtype, got int32");
}

TEST(AttentionMetaTest, SymbolicSizesStaySymbolicWithoutGuards) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(3, "q.size()[0]", 0, 0)), 3);
  const SymInt s(SymExpr::Symbol(env.NewSymbol(7, "k.size()[1]", 1, 1)), 7);
  const TensorMeta q(DType::kFloat32, SymShape{n, 4, 8});
  const TensorMeta k(DType::kFloat32, SymShape{n, s, 8});
  const TensorMeta v(DType::kFloat32, SymShape{n, s, 5});
  auto out = Sdpa(q, k, v, TensorMeta(DType::kBool, SymShape{4, s}));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dim(), 3);
  EXPECT_EQ(SymShapeToString((*out)[0].sizes), "[s0, 4, 5]");
  EXPECT_TRUE(env.guards().empty());
}

TEST(AttentionMetaTest, EqualSymbolicSequenceLengthsAreGuarded) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt key_len(SymExpr::Symbol(env.NewSymbol(6, "k.size()[0]", 1, 0)),
                       6);
  const SymInt value_len(SymExpr::Symbol(env.NewSymbol(6, "v.size()[0]", 2, 0)),
                         6);
  auto out =
      Sdpa(F32({4, 8}), TensorMeta(DType::kFloat32, SymShape{key_len, 8}),
           TensorMeta(DType::kFloat32, SymShape{value_len, 5}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 5}));
  // The entry holds while the two stay equal.
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.ToString(env.guards()[0]), "v.size()[0] == k.size()[0]");
}

}  // namespace
}  // namespace guardjit::testing
