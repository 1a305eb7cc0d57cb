#include "jit/cuda/cuda_index_range.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace guardjit {
namespace {

// A closed interval of 128-bit values (products of two in-range bounds
// cannot overflow it).
struct Range {
  __int128 lo = 0;
  __int128 hi = 0;
};

class RangeChecker {
 public:
  explicit RangeChecker(absl::Span<const int64_t> size_bounds)
      : size_bounds_(size_bounds) {}

  // Declares loop variable `var` over [0, extent); false when the extent
  // does not fit.
  bool AddLoop(const LoopRange& loop) {
    const std::optional<Range> e = Of(loop.extent);
    if (!e) return false;
    vars_[loop.var] = Range{0, std::max<__int128>(0, e->hi - 1)};
    return true;
  }

  // The range of `e`, or nullopt when it (or a subexpression) leaves
  // +-kIndex32Limit or is unbounded.
  std::optional<Range> Of(const IndexExpr& e) {
    std::optional<Range> r = Compute(e);
    if (r && !Fits(*r)) return std::nullopt;
    return r;
  }

 private:
  static bool Fits(const Range& r) {
    return r.lo >= -kIndex32Limit && r.hi <= kIndex32Limit;
  }

  std::optional<Range> Compute(const IndexExpr& e) {
    switch (e.kind()) {
      case IndexExpr::Kind::kConst:
        return Range{e.value(), e.value()};
      case IndexExpr::Kind::kVar: {
        auto it = vars_.find(e.id());
        if (it == vars_.end()) return std::nullopt;
        return it->second;
      }
      case IndexExpr::Kind::kSize:
        if (e.id() < 0 || e.id() >= static_cast<int>(size_bounds_.size()) ||
            size_bounds_[e.id()] < 0) {
          return std::nullopt;
        }
        return Range{0, size_bounds_[e.id()]};
      default:
        break;
    }
    const std::optional<Range> a = Of(e.lhs());
    const std::optional<Range> b = Of(e.rhs());
    if (!a || !b) return std::nullopt;
    switch (e.kind()) {
      case IndexExpr::Kind::kAdd:
        return Range{a->lo + b->lo, a->hi + b->hi};
      case IndexExpr::Kind::kMul: {
        const __int128 p[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo,
                              a->hi * b->hi};
        return Range{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
      }
      case IndexExpr::Kind::kFloorDiv:
      case IndexExpr::Kind::kMod: {
        // Divisors are positive in kernels; anything else stays 64-bit.
        if (b->lo <= 0) return std::nullopt;
        if (e.kind() == IndexExpr::Kind::kFloorDiv) {
          // |a / b| <= |a| for b >= 1.
          return Range{std::min<__int128>(a->lo, 0),
                       std::max<__int128>(a->hi, 0)};
        }
        // C's remainder takes the dividend's sign, below the divisor.
        return Range{a->lo < 0 ? -(b->hi - 1) : 0, b->hi - 1};
      }
      case IndexExpr::Kind::kMax:
        return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
      case IndexExpr::Kind::kMin:
        return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
      default:
        return std::nullopt;
    }
  }

  absl::Span<const int64_t> size_bounds_;
  absl::flat_hash_map<int, Range> vars_;
};

// The flattened count of `loops` (what a stage loop strides over).
IndexExpr Count(const std::vector<LoopRange>& loops) {
  IndexExpr n = IndexExpr::Const(1);
  for (const LoopRange& l : loops) n = n * l.extent;
  return n;
}

bool ValueFits(RangeChecker& c, const ValueExpr& e,
               absl::flat_hash_set<const void*>& seen) {
  if (!seen.insert(e.id()).second) return true;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad:
    case ValueExpr::Kind::kIndex:
      if (!c.Of(e.index())) return false;
      break;
    case ValueExpr::Kind::kGather: {
      // base + index * stride for index in [0, bound).
      const std::optional<Range> bound = c.Of(e.bound());
      if (!bound) return false;
      const IndexExpr offset = IndexExpr::Const(static_cast<int64_t>(
                                   std::max<__int128>(0, bound->hi - 1))) *
                               e.stride();
      if (!c.Of(offset) || !c.Of(e.index() + offset) || !c.Of(e.index())) {
        return false;
      }
      break;
    }
    default:
      break;
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    if (!ValueFits(c, e.operand(i), seen)) return false;
  }
  return true;
}

}  // namespace

bool IndexMathFits32Bits(const Kernel& kernel,
                         absl::Span<const int64_t> size_bounds) {
  RangeChecker c(size_bounds);
  for (const LoopRange& l : kernel.outer) {
    if (!c.AddLoop(l)) return false;
  }
  if (!c.Of(Count(kernel.outer))) return false;
  for (const Stage& s : kernel.stages) {
    for (const LoopRange& l : s.loops) {
      if (!c.AddLoop(l)) return false;
    }
    if (!c.Of(Count(s.loops))) return false;
    absl::flat_hash_set<const void*> seen;
    if (!ValueFits(c, s.value, seen)) return false;
    if (s.buffer >= 0 && !c.Of(s.index)) return false;
  }
  return true;
}

namespace {

// Whether every kernel of `which` narrows under `bounds`.
bool AllFit(absl::Span<const Kernel* const> kernels,
            const std::vector<int>& which, const std::vector<int64_t>& bounds) {
  for (int k : which) {
    if (!IndexMathFits32Bits(*kernels[k], bounds)) return false;
  }
  return true;
}

// The smallest power of two >= v (v >= 0).
int64_t CeilPow2(int64_t v) {
  int64_t p = 1;
  while (p < v && p <= kIndex32Limit) p *= 2;
  return p;
}

}  // namespace

IndexBounds ChooseIndexBounds(absl::Span<const Kernel* const> kernels,
                              absl::Span<const int64_t> known,
                              absl::Span<const int64_t> hints) {
  IndexBounds out;
  size_t n = known.size();
  for (const Kernel* k : kernels) {
    n = std::max(n, static_cast<size_t>(k->num_size_params));
  }
  out.size_bounds.assign(n, -1);
  for (size_t i = 0; i < known.size(); ++i) {
    out.size_bounds[i] = known[i] < 0 ? -1 : known[i];
  }
  auto index32 = [&](const std::vector<int64_t>& bounds) {
    std::vector<bool> fits;
    for (const Kernel* k : kernels) {
      fits.push_back(IndexMathFits32Bits(*k, bounds));
    }
    return fits;
  };
  const std::vector<bool> base = index32(out.size_bounds);
  out.index32 = base;
  // Unbounded symbols with a hint are the candidates.
  std::vector<int> free;
  std::vector<int64_t> at_hints = out.size_bounds;
  for (size_t i = 0; i < n && i < hints.size(); ++i) {
    if (out.size_bounds[i] >= 0 || hints[i] < 0) continue;
    free.push_back(static_cast<int>(i));
    at_hints[i] = hints[i];
  }
  if (free.empty()) return out;
  // The kernels that narrow at the hints and not without them.
  std::vector<int> gain;
  const std::vector<bool> hinted = index32(at_hints);
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (hinted[k] && !base[k]) gain.push_back(static_cast<int>(k));
  }
  if (gain.empty()) return out;
  std::vector<int64_t> bounds = at_hints;
  // Powers of two at least the hints, then doubled together while every
  // gaining kernel still narrows, then one symbol at a time.
  std::vector<int64_t> trial = bounds;
  for (int i : free) trial[i] = CeilPow2(bounds[i]);
  if (AllFit(kernels, gain, trial)) bounds = trial;
  auto doubled = [&](int i) {
    return bounds[i] > kIndex32Limit ? bounds[i] : bounds[i] * 2;
  };
  for (;;) {
    trial = bounds;
    for (int i : free) trial[i] = doubled(i);
    if (trial == bounds || !AllFit(kernels, gain, trial)) break;
    bounds = trial;
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (int i : free) {
      trial = bounds;
      trial[i] = doubled(i);
      if (trial[i] == bounds[i] || !AllFit(kernels, gain, trial)) continue;
      bounds = trial;
      grew = true;
    }
  }
  // A symbol the gaining kernels do not need bounded stays unbounded.
  for (int i : free) {
    trial = bounds;
    trial[i] = -1;
    if (AllFit(kernels, gain, trial)) bounds = trial;
  }
  for (int i : free) {
    if (bounds[i] >= 0) out.chosen.push_back(i);
  }
  out.size_bounds = std::move(bounds);
  out.index32 = index32(out.size_bounds);
  return out;
}

}  // namespace guardjit
