#include "core/shape_env.h"

#include "gtest/gtest.h"

namespace guardjit {
namespace {

std::vector<std::string> GuardStrings(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const ShapeGuard& g : env.AllGuards()) out.push_back(env.ToString(g));
  return out;
}

TEST(ShapeEnvTest, RangesDecideWithoutGuards) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0));
  EXPECT_EQ(env.StaticallyKnown(SymRel::kLt, SymExpr(1), s0), true);
  EXPECT_EQ(env.StaticallyKnown(SymRel::kEq, s0, SymExpr(1)), false);
  EXPECT_EQ(env.StaticallyKnown(SymRel::kEq, s0, SymExpr(0)), false);
  EXPECT_FALSE(env.StaticallyKnown(SymRel::kLt, SymExpr(2), s0).has_value());
  EXPECT_TRUE(env.Guard(SymRel::kLt, SymExpr(1), s0));
  EXPECT_TRUE(env.guards().empty());
}

TEST(ShapeEnvTest, UndecidedRelationsBecomeGuardsOnTheHint) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(2, "x.size()[0]", 0, 0));
  // 2*s0 > 2 holds for every s0 >= 2: no guard.
  EXPECT_TRUE(env.Guard(SymRel::kLt, SymExpr(2), 2 * s0));
  EXPECT_TRUE(env.guards().empty());
  // s0 > 3 is false at the hint 2: the negation is guarded.
  EXPECT_FALSE(env.Guard(SymRel::kLt, SymExpr(3), s0));
  EXPECT_EQ(GuardStrings(env),
            (std::vector<std::string>{"2 <= x.size()[0]", "x.size()[0] <= 3"}));
  EXPECT_FALSE(env.IsPinned(0));
  // The guard narrowed the range to [2, 3]: s0 < 4 is now known.
  EXPECT_EQ(env.StaticallyKnown(SymRel::kLt, s0, SymExpr(4)), true);
  EXPECT_FALSE(env.StaticallyKnown(SymRel::kLt, s0, SymExpr(3)).has_value());
}

TEST(ShapeEnvTest, GuardsThatLeaveOneValuePinTheSymbol) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(2, "x.size()[0]", 0, 0));
  const SymExpr s1 = SymExpr::Symbol(env.NewSymbol(7, "y.size()[0]", 1, 0));
  // s0 > 2 is false at 2: s0 <= 2 with 2 <= s0 leaves s0 == 2.
  EXPECT_FALSE(env.Guard(SymRel::kLt, SymExpr(2), s0));
  EXPECT_TRUE(env.IsPinned(0));
  EXPECT_EQ(env.Simplify(s0 * 3), SymExpr(6));
  // 2*s1 + 1 < 16 and 2*s1 > 13: s1 in [7, 7] from two one-sided guards.
  EXPECT_TRUE(env.Guard(SymRel::kLt, 2 * s1 + 1, SymExpr(16)));
  EXPECT_FALSE(env.IsPinned(1));
  EXPECT_TRUE(env.Guard(SymRel::kLt, SymExpr(13), 2 * s1));
  EXPECT_TRUE(env.IsPinned(1));
  EXPECT_EQ(env.Simplify(s1), SymExpr(7));
  // Two symbols in one guard narrow nothing.
  ShapeEnv env2;
  const SymExpr a = SymExpr::Symbol(env2.NewSymbol(2, "a.size()[0]", 0, 0));
  const SymExpr b = SymExpr::Symbol(env2.NewSymbol(2, "b.size()[0]", 1, 0));
  EXPECT_TRUE(env2.Guard(SymRel::kLe, a + b, SymExpr(4)));
  EXPECT_FALSE(env2.IsPinned(0));
  EXPECT_FALSE(env2.IsPinned(1));
}

TEST(ShapeEnvTest, EqualityReplacesTheLaterSymbol) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(3, "x.size()[0]", 0, 0));
  const SymExpr s1 = SymExpr::Symbol(env.NewSymbol(3, "y.size()[0]", 1, 0));
  EXPECT_TRUE(env.Guard(SymRel::kEq, s1, s0));
  EXPECT_EQ(env.Simplify(s1 * 2), 2 * s0);
  // Now provable: no second guard.
  EXPECT_TRUE(env.Guard(SymRel::kEq, s0 + s1, 2 * s0));
  EXPECT_EQ(GuardStrings(env),
            (std::vector<std::string>{"2 <= x.size()[0]",
                                      "y.size()[0] == x.size()[0]"}));
}

TEST(ShapeEnvTest, SpecializationGuardsTheValue) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(4, "x.size()[0]", 0, 0));
  EXPECT_EQ(env.Specialize(s0 * 2), 8);
  EXPECT_EQ(env.Simplify(s0), SymExpr(4));
  EXPECT_EQ(GuardStrings(env),
            (std::vector<std::string>{"2*x.size()[0] == 8"}));
}

TEST(ShapeEnvTest, UserRangesAreGuardsAndDecide) {
  ShapeEnv env;
  const SymExpr s0 =
      SymExpr::Symbol(env.NewSymbol(8, "x.size()[1]", 0, 1, 4, 64));
  EXPECT_EQ(env.StaticallyKnown(SymRel::kLt, s0, SymExpr(100)), true);
  EXPECT_EQ(GuardStrings(env), (std::vector<std::string>{"4 <= x.size()[1]",
                                                         "x.size()[1] <= 64"}));
}

}  // namespace
}  // namespace guardjit
