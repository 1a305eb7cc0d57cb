#include "jit/index_expr.h"

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

}  // namespace
}  // namespace guardjit
