#include "core/sym_expr.h"

#include <random>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

const SymExpr s0 = SymExpr::Symbol(0);
const SymExpr s1 = SymExpr::Symbol(1);
const SymExpr s2 = SymExpr::Symbol(2);

TEST(SymExprTest, CanonicalFormMakesEqualPolynomialsEqual) {
  EXPECT_EQ(s0 * 2 + s0, 3 * s0);
  EXPECT_EQ(s0 * s1, s1 * s0);
  EXPECT_EQ((s0 + 1) * (s0 - 1), s0 * s0 - 1);
  EXPECT_EQ(s0 - s0, SymExpr(0));
  EXPECT_TRUE((s0 - s0).is_constant());
  EXPECT_NE(s0, s1);
  EXPECT_EQ(s0.as_symbol(), 0);
  EXPECT_FALSE((2 * s0).as_symbol().has_value());
}

TEST(SymExprTest, ExactDivisionSimplifies) {
  EXPECT_EQ(SymExpr::FloorDiv(6 * s0, 3), 2 * s0);
  EXPECT_EQ(SymExpr::FloorDiv(s0 * s1 * 4, s1 * 2), 2 * s0);
  EXPECT_EQ(SymExpr::FloorDiv(s0, 1), s0);
  EXPECT_EQ(SymExpr::Mod(4 * s0 + 6, 2), SymExpr(0));
  EXPECT_EQ(SymExpr::Mod(4 * s0 + 7, 2), SymExpr(1));
  EXPECT_EQ(SymExpr::Mod(s0 * s1, s1), SymExpr(0));
  EXPECT_FALSE(SymExpr::FloorDiv(s0, 2).is_constant());
  EXPECT_EQ(SymExpr::Max(s0, s0), s0);
  EXPECT_EQ(SymExpr::Max(s0, s1), SymExpr::Max(s1, s0));
  EXPECT_EQ(SymExpr::FloorDiv(-7, 2), SymExpr(-4));
  EXPECT_EQ(SymExpr::Mod(-7, 2), SymExpr(1));
}

TEST(SymExprTest, PrintsLikeSympy) {
  EXPECT_EQ((2 * s0 + s1 - 1).ToString(), "2*s0 + s1 - 1");
  EXPECT_EQ((s0 * s1).ToString(), "s0*s1");
  EXPECT_EQ((-s0 + 3).ToString(), "-s0 + 3");
  EXPECT_EQ(SymExpr::FloorDiv(s0, 2).ToString(), "(s0//2)");
  EXPECT_EQ(SymExpr::Mod(s0 + 1, 3).ToString(), "((s0 + 1) % 3)");
  EXPECT_EQ(SymExpr::Max(s0, s1).ToString(), "max(s0, s1)");
  EXPECT_EQ(s0.ToString([](int) { return std::string("x.size()[0]"); }),
            "x.size()[0]");
}

TEST(SymExprTest, SymbolsAndSubstitute) {
  const SymExpr e = s2 * s0 + SymExpr::FloorDiv(s1, 2);
  EXPECT_EQ(e.Symbols(), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(e.Mentions(1));
  EXPECT_FALSE((s0 + 1).Mentions(1));
  const SymExpr r = e.Substitute(
      [](int s) { return s == 2 ? SymExpr(3) : SymExpr::Symbol(s); });
  EXPECT_EQ(r, 3 * s0 + SymExpr::FloorDiv(s1, 2));
}

TEST(SymExprTest, BoundsFollowRanges) {
  auto range = [](int) { return std::pair<int64_t, int64_t>(2, 10); };
  EXPECT_EQ((s0 - 2).Bounds(range), (std::pair<int64_t, int64_t>(0, 8)));
  EXPECT_EQ((s0 * s1).Bounds(range), (std::pair<int64_t, int64_t>(4, 100)));
  EXPECT_EQ(SymExpr::Mod(s0, 4).Bounds(range),
            (std::pair<int64_t, int64_t>(0, 3)));
  auto open = [](int) {
    return std::pair<int64_t, int64_t>(2, std::numeric_limits<int64_t>::max());
  };
  EXPECT_EQ((s0 - 1).Bounds(open).first, 1);
  EXPECT_EQ((s0 - 1).Bounds(open).second, std::numeric_limits<int64_t>::max());
  EXPECT_EQ((1 - s0).Bounds(open).first, std::numeric_limits<int64_t>::min());
}

// Random expressions evaluate like the same arithmetic done on integers.
TEST(SymExprTest, EvaluateMatchesIntegerArithmetic) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int64_t> v = {static_cast<int64_t>(rng() % 9) + 1,
                              static_cast<int64_t>(rng() % 9) + 1,
                              static_cast<int64_t>(rng() % 9) + 1};
    SymExpr e = SymExpr::Symbol(static_cast<int>(rng() % 3));
    int64_t want = v[0];
    {
      const SymExpr probe = e;
      want = probe.Evaluate(v);
    }
    for (int step = 0; step < 6; ++step) {
      const int s = static_cast<int>(rng() % 3);
      const int64_t c = static_cast<int64_t>(rng() % 5) + 1;
      switch (rng() % 6) {
        case 0:
          e = e + SymExpr::Symbol(s);
          want += v[s];
          break;
        case 1:
          e = e * SymExpr::Symbol(s);
          want *= v[s];
          break;
        case 2:
          e = e - c;
          want -= c;
          break;
        case 3:
          e = SymExpr::FloorDiv(e, c);
          want = want >= 0 ? want / c : -((-want + c - 1) / c);
          break;
        case 4:
          e = SymExpr::Mod(e, c);
          want = ((want % c) + c) % c;
          break;
        case 5:
          e = SymExpr::Max(e, SymExpr::Symbol(s));
          want = std::max(want, v[s]);
          break;
      }
    }
    EXPECT_EQ(e.Evaluate(v), want) << e.ToString();
  }
}

TEST(SymExprTest, TermsSpellTheCanonicalForm) {
  const SymExpr s0 = SymExpr::Symbol(0);
  const SymExpr s1 = SymExpr::Symbol(1);
  const SymExpr e = s0 * s0 * 3 - SymExpr::Max(s1, 4) + 2;
  // Rebuilding from the terms gives the expression back.
  SymExpr rebuilt(0);
  for (const SymExpr::Monomial& m : e.Terms()) {
    SymExpr product(m.coefficient);
    for (const SymExpr::Factor& f : m.factors) {
      switch (f.kind) {
        case SymExpr::AtomKind::kSymbol:
          product = product * SymExpr::Symbol(f.symbol);
          break;
        case SymExpr::AtomKind::kMax:
          product = product * SymExpr::Max(f.a, f.b);
          break;
        default:
          ADD_FAILURE() << "unexpected atom";
      }
    }
    rebuilt = rebuilt + product;
  }
  EXPECT_EQ(rebuilt, e);
  EXPECT_EQ(e.Terms().size(), 3u);
  EXPECT_TRUE(SymExpr(0).Terms().empty());
}

}  // namespace
}  // namespace guardjit
