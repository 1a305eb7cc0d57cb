#include "jit/lowering/index_simplify.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

using E = IndexExpr;

int64_t FloorDivOf(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// `e` with loop variable v at point[v] (the tests use no sizes).
int64_t Eval(const E& e, const std::vector<int64_t>& point) {
  using Kind = E::Kind;
  switch (e.kind()) {
    case Kind::kConst:
      return e.value();
    case Kind::kVar:
      return point[e.id()];
    case Kind::kSize:
      return 0;
    case Kind::kAdd:
      return Eval(e.lhs(), point) + Eval(e.rhs(), point);
    case Kind::kMul:
      return Eval(e.lhs(), point) * Eval(e.rhs(), point);
    case Kind::kFloorDiv:
      return FloorDivOf(Eval(e.lhs(), point), Eval(e.rhs(), point));
    case Kind::kMod: {
      const int64_t a = Eval(e.lhs(), point), b = Eval(e.rhs(), point);
      return a - FloorDivOf(a, b) * b;
    }
    case Kind::kMax:
      return std::max(Eval(e.lhs(), point), Eval(e.rhs(), point));
    case Kind::kMin:
      return std::min(Eval(e.lhs(), point), Eval(e.rhs(), point));
  }
  return 0;
}

// Expects `simplified` to equal `original` at every point of the loops
// (var v over [0, extents[v])).
void ExpectSameEverywhere(const E& original, const E& simplified,
                          const std::vector<int64_t>& extents) {
  std::vector<int64_t> point(extents.size(), 0);
  while (true) {
    ASSERT_EQ(Eval(original, point), Eval(simplified, point))
        << original.ToString() << " vs " << simplified.ToString();
    size_t d = 0;
    while (d < point.size() && ++point[d] == extents[d]) point[d++] = 0;
    if (d == point.size()) break;
  }
}

TEST(IndexSimplifyTest, AViewOfAGatherBackToItsRows) {
  // ((i0*2048 + i2*64 + i1) // 64) // 32 * 32 + ((...) // 64) % 32 over
  // i0 < 8, i1 < 64, i2 < 32: the row i0*32 + i2.
  const E flat =
      E::Var(0) * E::Const(2048) + (E::Var(2) * E::Const(64) + E::Var(1));
  const E row = E::FloorDiv(flat, E::Const(64));
  const E e =
      E::FloorDiv(row, E::Const(32)) * E::Const(32) + E::Mod(row, E::Const(32));
  const LoopExtents extents = {{0, 8}, {1, 64}, {2, 32}};
  const E s = SimplifyIndex(e, extents);
  EXPECT_EQ(s.ToString(), (E::Var(0) * E::Const(32) + E::Var(2)).ToString());
  ExpectSameEverywhere(e, s, {8, 64, 32});
  const E col = SimplifyIndex(E::Mod(flat, E::Const(64)), extents);
  EXPECT_EQ(col.ToString(), E::Var(1).ToString());
}

TEST(IndexSimplifyTest, WhatTheRangesDoNotDecideStays) {
  // i1 < 100 spans two blocks of 64: the division stays, the multiple of 64
  // comes out of it.
  const E e = E::FloorDiv(E::Var(0) * E::Const(128) + E::Var(1), E::Const(64));
  const E s = SimplifyIndex(e, {{0, 4}, {1, 100}});
  EXPECT_EQ(s.ToString(),
            (E::Var(0) * E::Const(2) + E::FloorDiv(E::Var(1), E::Const(64)))
                .ToString());
  ExpectSameEverywhere(e, s, {4, 100});
  // A size (a dynamic extent) has no upper bound.
  const E dynamic = E::Mod(E::Size(0) + E::Var(0), E::Const(8));
  EXPECT_EQ(SimplifyIndex(dynamic, {{0, 4}}).ToString(), dynamic.ToString());
  // Negative offsets round toward minus infinity, as IndexExpr's do.
  const E negative = E::FloorDiv(E::Var(0) + E::Const(-3), E::Const(4));
  const E sn = SimplifyIndex(negative, {{0, 3}});
  EXPECT_EQ(sn.ToString(), E::Const(-1).ToString());
  ExpectSameEverywhere(negative, sn, {3});
}

TEST(IndexSimplifyTest, NestedDivisionsAndDisjointMinMax) {
  const E e = E::FloorDiv(E::FloorDiv(E::Var(0), E::Const(3)), E::Const(5));
  const E s = SimplifyIndex(e, {{0, 100}});
  EXPECT_EQ(s.ToString(), E::FloorDiv(E::Var(0), E::Const(15)).ToString());
  ExpectSameEverywhere(e, s, {100});
  // min(i0, 9) with i0 < 8 is i0; max(i0 - 1, 0) keeps its max.
  EXPECT_EQ(SimplifyIndex(E::Min(E::Var(0), E::Const(9)), {{0, 8}}).ToString(),
            E::Var(0).ToString());
  const E clamp = E::Max(E::Var(0) + E::Const(-1), E::Const(0));
  EXPECT_EQ(SimplifyIndex(clamp, {{0, 8}}).ToString(), clamp.ToString());
}

}  // namespace
}  // namespace guardjit
