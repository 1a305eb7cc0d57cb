// SymInt (core/sym_int.h): concrete sizes stay plain integers (wrapping like
// the kernels' int64 arithmetic); symbolic ones keep expressions with their
// hints; comparisons answer for the hint and guard in the current ShapeEnv
// unless its ranges decide; converting to int64_t specializes.

#include "core/sym_int.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/shape_env.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

std::vector<std::string> GuardStrings(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const ShapeGuard& g : env.guards()) out.push_back(env.ToString(g));
  return out;
}

TEST(SymIntTest, ConcreteArithmeticWraps) {
  const SymInt a = 3;
  EXPECT_FALSE((a + 4).is_symbolic());
  EXPECT_EQ((a + 4).hint(), 7);
  EXPECT_EQ((a * -2 - 1).hint(), -7);
  EXPECT_EQ((-a).hint(), -3);
  EXPECT_EQ((SymInt(std::numeric_limits<int64_t>::max()) + 1).hint(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(a.ToString(), "3");
  EXPECT_TRUE(a < 4);
  EXPECT_TRUE(5 >= a);
  // Python's // and % round toward negative infinity.
  EXPECT_EQ(SymFloorDiv(-7, 2).hint(), -4);
  EXPECT_EQ(SymMod(-7, 2).hint(), 1);
  EXPECT_EQ(SymMax(-7, 2).hint(), 2);
  EXPECT_EQ(SymMin(-7, 2).hint(), -7);
  EXPECT_FALSE(SymMax(-7, 2).is_symbolic());
}

TEST(SymIntTest, SymbolicValuesKeepExpressionsAndHints) {
  ShapeEnv env;
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0));
  const SymInt n(s0, 5);
  const SymInt m = n * 2 + 1;
  EXPECT_TRUE(m.is_symbolic());
  EXPECT_EQ(m.hint(), 11);
  EXPECT_EQ(m.expr(), s0 * 2 + SymExpr(1));
  const SymInt q = SymFloorDiv(n, 2);
  EXPECT_TRUE(q.is_symbolic());
  EXPECT_EQ(q.hint(), 2);
  EXPECT_EQ(SymMax(n, 10).hint(), 10);
  EXPECT_TRUE(SymMax(n, 10).is_symbolic());
  // A constant expression is a plain integer.
  EXPECT_FALSE(SymInt(SymExpr(4), 4).is_symbolic());
  const SymShape shape = {n, 3};
  EXPECT_TRUE(IsSymbolic(shape));
  EXPECT_EQ(SymShapeToString(shape), "[s0, 3]");
  EXPECT_EQ(Product(shape).hint(), 15);
  EXPECT_TRUE(Product(shape).is_symbolic());
  EXPECT_TRUE(env.guards().empty()) << "arithmetic guards nothing";
}

TEST(SymIntTest, ArithmeticStaysSymbolicAndComparisonsGuard) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt a(SymExpr::Symbol(env.NewSymbol(3, "x.size()[0]", 0, 0)), 3);
  const SymInt b = a * 2 + 1;
  EXPECT_TRUE(b.is_symbolic());
  EXPECT_EQ(b.hint(), 7);
  EXPECT_EQ(b.ToString(), "2*s0 + 1");
  EXPECT_TRUE(b != 1);  // proven by the range: no guard
  EXPECT_TRUE(env.guards().empty());
  EXPECT_TRUE(a == 3);  // guarded
  EXPECT_EQ(env.guards().size(), 1u);
  const SymInt zero = a - a;
  EXPECT_FALSE(zero.is_symbolic());
  const int64_t v = b;  // specializes
  EXPECT_EQ(v, 7);
  EXPECT_EQ(SymFloorDiv(a * 4, 2).ToString(), "2*s0");
  EXPECT_EQ(SymShapeToString({a, SymInt(4)}), "[s0, 4]");
  EXPECT_EQ(Product({a, SymInt(4)}).ToString(), "4*s0");
}

TEST(SymIntTest, ComparisonsGuardInTheCurrentShapeEnv) {
  ShapeEnv env;
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  // Without a current ShapeEnv: the hint decides, nothing is recorded.
  EXPECT_TRUE(n > 3);
  EXPECT_TRUE(env.guards().empty());
  ShapeEnv::Scope scope(&env);
  EXPECT_TRUE(n > 1) << "the range [2, inf) decides: no guard";
  EXPECT_TRUE(env.guards().empty());
  EXPECT_TRUE(n > 3);
  EXPECT_FALSE(n == 7);
  EXPECT_EQ(GuardStrings(env),
            (std::vector<std::string>{"3 < x.size()[0]", "x.size()[0] != 7"}));
  // HintShape reads without guarding; ConcreteShape specializes.
  const SymShape shape = {n, 3};
  EXPECT_EQ(HintShape(shape)[0], 5);
  EXPECT_EQ(env.guards().size(), 2u);
  EXPECT_EQ(ConcreteShape(shape)[0], 5);
  EXPECT_EQ(GuardStrings(env).back(), "x.size()[0] == 5");
  EXPECT_TRUE(env.IsPinned(0));
  const int64_t value = n;  // specializes too, already pinned
  EXPECT_EQ(value, 5);
}

}  // namespace
}  // namespace guardjit
