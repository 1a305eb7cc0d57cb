#include "jit/lowering/index_simplify.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace guardjit {
namespace {

using Kind = IndexExpr::Kind;
constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t ModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// [lo, hi] of a value; hi == kUnbounded: no upper bound known; known ==
// false: nothing known.
struct Range {
  bool known = false;
  int64_t lo = 0, hi = 0;
};

Range Exactly(int64_t v) { return {true, v, v}; }

Range RangeOf(const IndexExpr& e, const LoopExtents& extents) {
  switch (e.kind()) {
    case Kind::kConst:
      return Exactly(e.value());
    case Kind::kVar: {
      auto it = extents.find(e.id());
      if (it == extents.end() || it->second < 1) return {true, 0, kUnbounded};
      return {true, 0, it->second - 1};
    }
    case Kind::kSize:
      return {true, 0, kUnbounded};
    case Kind::kAdd: {
      const Range a = RangeOf(e.lhs(), extents);
      const Range b = RangeOf(e.rhs(), extents);
      Range r;
      if (!a.known || !b.known || a.hi == kUnbounded || b.hi == kUnbounded ||
          __builtin_add_overflow(a.lo, b.lo, &r.lo) ||
          __builtin_add_overflow(a.hi, b.hi, &r.hi)) {
        return {};
      }
      r.known = true;
      return r;
    }
    case Kind::kMul: {
      const Range a = RangeOf(e.lhs(), extents);
      const Range b = RangeOf(e.rhs(), extents);
      if (!a.known || !b.known || a.hi == kUnbounded || b.hi == kUnbounded) {
        return {};
      }
      int64_t p[4];
      if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) ||
          __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
          __builtin_mul_overflow(a.hi, b.lo, &p[2]) ||
          __builtin_mul_overflow(a.hi, b.hi, &p[3])) {
        return {};
      }
      return {true, *std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case Kind::kFloorDiv: {
      if (!e.rhs().is_const() || e.rhs().value() <= 0) return {};
      const Range a = RangeOf(e.lhs(), extents);
      if (!a.known || a.hi == kUnbounded) return {};
      const int64_t c = e.rhs().value();
      return {true, FloorDivInt(a.lo, c), FloorDivInt(a.hi, c)};
    }
    case Kind::kMod: {
      if (!e.rhs().is_const() || e.rhs().value() <= 0) return {};
      const int64_t c = e.rhs().value();
      const Range a = RangeOf(e.lhs(), extents);
      if (a.known && a.hi != kUnbounded && a.lo >= 0 && a.hi < c) return a;
      return {true, 0, c - 1};
    }
    case Kind::kMax:
    case Kind::kMin: {
      const Range a = RangeOf(e.lhs(), extents);
      const Range b = RangeOf(e.rhs(), extents);
      if (!a.known || !b.known || a.hi == kUnbounded || b.hi == kUnbounded) {
        return {};
      }
      return e.kind() == Kind::kMax
                 ? Range{true, std::max(a.lo, b.lo), std::max(a.hi, b.hi)}
                 : Range{true, std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    }
  }
  return {};
}

// An expression as constant + sum of coefficient * atom, where atoms are
// what is not a sum or a product by a constant.
struct Terms {
  std::vector<std::pair<IndexExpr, int64_t>> atoms;
  int64_t constant = 0;
  bool overflow = false;

  void Add(const IndexExpr& atom, int64_t coefficient) {
    for (auto& [a, k] : atoms) {
      if (a == atom) {
        overflow |= __builtin_add_overflow(k, coefficient, &k);
        return;
      }
    }
    atoms.emplace_back(atom, coefficient);
  }
};

void Collect(const IndexExpr& e, int64_t scale, Terms& t) {
  if (t.overflow) return;
  switch (e.kind()) {
    case Kind::kConst: {
      int64_t v = 0;
      t.overflow |= __builtin_mul_overflow(e.value(), scale, &v) ||
                    __builtin_add_overflow(t.constant, v, &t.constant);
      return;
    }
    case Kind::kAdd:
      Collect(e.lhs(), scale, t);
      Collect(e.rhs(), scale, t);
      return;
    case Kind::kMul:
      if (e.lhs().is_const() || e.rhs().is_const()) {
        const bool left = e.lhs().is_const();
        int64_t s = 0;
        if (__builtin_mul_overflow(left ? e.lhs().value() : e.rhs().value(),
                                   scale, &s)) {
          t.overflow = true;
          return;
        }
        Collect(left ? e.rhs() : e.lhs(), s, t);
        return;
      }
      break;
    default:
      break;
  }
  t.Add(e, scale);
}

IndexExpr Build(const std::vector<std::pair<IndexExpr, int64_t>>& atoms,
                int64_t constant) {
  IndexExpr sum = IndexExpr::Const(0);
  for (const auto& [atom, k] : atoms) {
    if (k == 0) continue;
    sum = sum + (k == 1 ? atom : atom * IndexExpr::Const(k));
  }
  return sum + IndexExpr::Const(constant);
}

IndexExpr Simplify(const IndexExpr& e, const LoopExtents& extents);

// a // c for a constant c > 0, `a` simplified.
IndexExpr DivideBy(const IndexExpr& a, int64_t c, const LoopExtents& extents) {
  if (a.kind() == Kind::kFloorDiv && a.rhs().is_const() &&
      a.rhs().value() > 0) {
    int64_t ac = 0;
    if (!__builtin_mul_overflow(a.rhs().value(), c, &ac)) {
      return DivideBy(a.lhs(), ac, extents);
    }
  }
  Terms t;
  Collect(a, 1, t);
  if (t.overflow) return IndexExpr::FloorDiv(a, IndexExpr::Const(c));
  std::vector<std::pair<IndexExpr, int64_t>> quotient, rest;
  for (const auto& [atom, k] : t.atoms) {
    if (k % c == 0) {
      quotient.emplace_back(atom, k / c);
    } else {
      rest.emplace_back(atom, k);
    }
  }
  const IndexExpr q = Build(quotient, FloorDivInt(t.constant, c));
  const IndexExpr r = Build(rest, ModInt(t.constant, c));
  const Range range = RangeOf(r, extents);
  if (range.known && range.hi != kUnbounded &&
      FloorDivInt(range.lo, c) == FloorDivInt(range.hi, c)) {
    return q + IndexExpr::Const(FloorDivInt(range.lo, c));
  }
  return q + IndexExpr::FloorDiv(r, IndexExpr::Const(c));
}

// a % c for a constant c > 0, `a` simplified.
IndexExpr Modulo(const IndexExpr& a, int64_t c, const LoopExtents& extents) {
  Terms t;
  Collect(a, 1, t);
  if (t.overflow) return IndexExpr::Mod(a, IndexExpr::Const(c));
  std::vector<std::pair<IndexExpr, int64_t>> rest;
  for (const auto& [atom, k] : t.atoms) {
    if (k % c != 0) rest.emplace_back(atom, k);
  }
  const IndexExpr r = Build(rest, ModInt(t.constant, c));
  const Range range = RangeOf(r, extents);
  if (range.known && range.hi != kUnbounded && range.lo >= 0 && range.hi < c) {
    return r;
  }
  return IndexExpr::Mod(r, IndexExpr::Const(c));
}

IndexExpr Simplify(const IndexExpr& e, const LoopExtents& extents) {
  switch (e.kind()) {
    case Kind::kConst:
    case Kind::kVar:
    case Kind::kSize:
      return e;
    case Kind::kAdd:
      return Simplify(e.lhs(), extents) + Simplify(e.rhs(), extents);
    case Kind::kMul:
      return Simplify(e.lhs(), extents) * Simplify(e.rhs(), extents);
    case Kind::kFloorDiv: {
      const IndexExpr a = Simplify(e.lhs(), extents);
      const IndexExpr b = Simplify(e.rhs(), extents);
      if (b.is_const() && b.value() > 0) return DivideBy(a, b.value(), extents);
      return IndexExpr::FloorDiv(a, b);
    }
    case Kind::kMod: {
      const IndexExpr a = Simplify(e.lhs(), extents);
      const IndexExpr b = Simplify(e.rhs(), extents);
      if (b.is_const() && b.value() > 0) return Modulo(a, b.value(), extents);
      return IndexExpr::Mod(a, b);
    }
    case Kind::kMax:
    case Kind::kMin: {
      const IndexExpr a = Simplify(e.lhs(), extents);
      const IndexExpr b = Simplify(e.rhs(), extents);
      const Range ra = RangeOf(a, extents), rb = RangeOf(b, extents);
      if (ra.known && rb.known && ra.hi != kUnbounded && rb.hi != kUnbounded) {
        const bool max = e.kind() == Kind::kMax;
        if (ra.lo >= rb.hi) return max ? a : b;
        if (rb.lo >= ra.hi) return max ? b : a;
      }
      return e.kind() == Kind::kMax ? IndexExpr::Max(a, b)
                                    : IndexExpr::Min(a, b);
    }
  }
  return e;
}

ValueExpr SimplifyValue(const ValueExpr& e, const LoopExtents& extents,
                        absl::flat_hash_map<const void*, ValueExpr>& memo) {
  if (auto it = memo.find(e.id()); it != memo.end()) return it->second;
  const auto operand = [&](int i) {
    return SimplifyValue(e.operand(i), extents, memo);
  };
  ValueExpr result = e;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad:
      result =
          ValueExpr::Load(e.buffer(), e.dtype(), Simplify(e.index(), extents));
      break;
    case ValueExpr::Kind::kIndex:
      result = ValueExpr::Index(Simplify(e.index(), extents));
      break;
    case ValueExpr::Kind::kConst:
    case ValueExpr::Kind::kLocal:
      break;
    case ValueExpr::Kind::kUnary:
      result = ValueExpr::Unary(e.unary_op(), operand(0));
      break;
    case ValueExpr::Kind::kBinary:
      result = ValueExpr::Binary(e.binary_op(), operand(0), operand(1));
      break;
    case ValueExpr::Kind::kWhere:
      result = ValueExpr::Where(operand(0), operand(1), operand(2));
      break;
    case ValueExpr::Kind::kCast:
      result = ValueExpr::Cast(operand(0), e.dtype());
      break;
    case ValueExpr::Kind::kGather:
      result = ValueExpr::Gather(
          e.buffer(), e.dtype(), Simplify(e.index(), extents), operand(0),
          Simplify(e.stride(), extents), e.bound(), e.check());
      break;
  }
  memo.emplace(e.id(), result);
  return result;
}

void AddExtents(const std::vector<LoopRange>& loops, LoopExtents& extents) {
  for (const LoopRange& loop : loops) {
    if (loop.extent.is_const()) extents[loop.var] = loop.extent.value();
  }
}

}  // namespace

IndexExpr SimplifyIndex(const IndexExpr& e, const LoopExtents& extents) {
  return Simplify(e, extents);
}

void SimplifyIndices(Kernel& kernel) {
  LoopExtents outer;
  AddExtents(kernel.outer, outer);
  for (Stage& stage : kernel.stages) {
    LoopExtents extents = outer;
    AddExtents(stage.loops, extents);
    absl::flat_hash_map<const void*, ValueExpr> memo;
    stage.value = SimplifyValue(stage.value, extents, memo);
    if (stage.buffer >= 0) stage.index = Simplify(stage.index, extents);
  }
}

}  // namespace guardjit
