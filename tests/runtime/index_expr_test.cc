#include "runtime/index_expr.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

using E = IndexExpr;

TEST(IndexExprTest, SimplifiesConstantsAndIdentities) {
  const E i = E::Var(0);
  const E j = E::Var(1);
  EXPECT_EQ((E::Const(2) + E::Const(3)).ToString(), "5");
  EXPECT_EQ((i + E::Const(0)).ToString(), "i0");
  EXPECT_EQ((i * E::Const(1)).ToString(), "i0");
  EXPECT_TRUE((i * E::Const(0)).is_const(0));
  EXPECT_EQ(E::FloorDiv(i, E::Const(1)), i);
  EXPECT_TRUE(E::Mod(i, E::Const(1)).is_const(0));
  // Constant offsets fold and move outward; constant factors fold.
  EXPECT_EQ(((i + E::Const(2)) + j + E::Const(3)).ToString(),
            "((i0 + i1) + 5)");
  EXPECT_EQ((i * E::Const(4) * E::Const(8)).ToString(), "i0*32");
  EXPECT_EQ((E::Const(3) * i).ToString(), "i0*3");
  EXPECT_EQ(E::FloorDiv(E::Const(-7), E::Const(2)).value(), -4);
  EXPECT_EQ(E::Mod(E::Const(-7), E::Const(2)).value(), 1);
  EXPECT_EQ(E::Mod(i + E::Size(0), E::Const(3)).ToString(), "((i0 + s0) % 3)");
}

TEST(IndexExprTest, EqualityIsStructural) {
  EXPECT_EQ(E::Var(0) * E::Const(3) + E::Var(1),
            E::Var(0) * E::Const(3) + E::Var(1));
  EXPECT_NE(E::Var(0) + E::Var(1), E::Var(1) + E::Var(0));
  EXPECT_NE(E::Var(0), E::Size(0));
}

TEST(IndexExprTest, MaxMinFoldConstantsAndPrint) {
  EXPECT_EQ(E::Max(E::Const(3), E::Const(-2)).value(), 3);
  EXPECT_EQ(E::Min(E::Const(3), E::Const(-2)).value(), -2);
  EXPECT_EQ(E::Max(E::Size(0), E::Size(0)), E::Size(0));
  EXPECT_EQ(E::Min(E::Const(1), E::Size(1)).ToString(), "min(1, s1)");
  EXPECT_EQ(E::Max(E::Size(0) + E::Const(-2), E::Const(0)).ToString(),
            "max((s0 + -2), 0)");
}

TEST(IndexExprTest, SubstituteVarsRebuildsAndSimplifies) {
  const E i = E::Var(0), j = E::Var(1), k = E::Var(2);
  const E e =
      E::FloorDiv((i * E::Const(1024) + j * E::Const(64)) + k, E::Const(2)) +
      E::Size(0);
  // i0 -> 0 drops its term; i1 -> i0 and i2 -> i1 renumber.
  const absl::flat_hash_map<int, E> vars = {{0, E::Const(0)}, {1, i}, {2, j}};
  EXPECT_EQ(SubstituteVars(e, vars).ToString(), "(((i0*64 + i1) // 2) + s0)");
  // Variables not in the map, and size parameters, stay.
  EXPECT_EQ(SubstituteVars(E::Max(k, E::Size(1)), {{0, j}}),
            E::Max(k, E::Size(1)));
  EXPECT_EQ(
      SubstituteVars(E::Mod(i * E::Const(3), E::Const(4)), {{0, E::Const(3)}})
          .value(),
      1);
}

// Every SymExpr atom kind converts, and the index expression evaluates to
// what the symbolic one does, for many symbol values.
TEST(IndexExprTest, FromSymEvaluatesLikeTheSymExpr) {
  const SymExpr s0 = SymExpr::Symbol(0);
  const SymExpr s1 = SymExpr::Symbol(1);
  const std::vector<SymExpr> exprs = {
      SymExpr(7),
      s0,
      s0 * s1 * 3 - s1 + 2,
      s0 * s0 - 1,
      SymExpr::FloorDiv(s0 + 1, 2) * s1,
      SymExpr::Mod(s0 * 5, s1 + 3),
      SymExpr::Max(s0 - 5, 0) + SymExpr::Min(s1, 4),
      SymExpr::FloorDiv(s0 - 10, 3),
      SymExpr::Mod(s0 - 10, 4),
  };
  for (const SymExpr& e : exprs) {
    const E index = E::FromSym(e);
    for (int64_t a : {2, 3, 7, 64, 1001}) {
      for (int64_t b : {2, 5, 9}) {
        const std::vector<int64_t> values = {a, b};
        EXPECT_EQ(index.Evaluate(values), e.Evaluate(values))
            << e.ToString() << " as " << index.ToString() << " at " << a << ", "
            << b;
      }
    }
  }
  EXPECT_EQ(E::FromSym(s0 * s1).ToString(), "s0*s1");
  EXPECT_TRUE(E::FromSym(SymExpr(5)).is_const(5));
}

TEST(IndexExprTest, ChannelsLastStridesPutChannelsInnermost) {
  const auto strides = [](const std::vector<E>& sizes) {
    std::vector<std::string> text;
    for (const E& e : ChannelsLastStrideExprs(sizes)) {
      text.push_back(e.ToString());
    }
    return text;
  };
  using V = std::vector<std::string>;
  // [N, C, H, W] -> [H*W*C, 1, W*C, C]; 1-D and 3-D spatial dims alike.
  EXPECT_EQ(strides({E::Const(2), E::Const(3), E::Const(4), E::Const(5)}),
            (V{"60", "1", "15", "3"}));
  EXPECT_EQ(strides({E::Const(2), E::Const(3), E::Const(7)}),
            (V{"21", "1", "3"}));
  EXPECT_EQ(strides({E::Const(2), E::Const(3), E::Const(4), E::Const(5),
                     E::Const(6)}),
            (V{"360", "1", "90", "18", "3"}));
  // A symbolic batch keeps every stride constant.
  EXPECT_EQ(strides({E::Size(0), E::Const(8), E::Const(2), E::Const(2)}),
            (V{"32", "1", "16", "8"}));
  // Below rank 3 there is no channel dim to move: contiguous.
  EXPECT_EQ(strides({E::Const(4), E::Const(5)}), (V{"5", "1"}));
}

}  // namespace
}  // namespace guardjit
