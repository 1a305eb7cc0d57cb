#include "jit/cuda/cuda_vectorize.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/dtype.h"

namespace guardjit {
namespace {

// An index as coefficient * i<var> + rest: `divisor` divides rest at every
// value of the other variables and sizes (0: rest is always 0).
struct Affine {
  int64_t coefficient = 0;
  int64_t divisor = 0;
};

std::optional<Affine> AffineIn(const IndexExpr& e, int var) {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
      return Affine{0, e.value() < 0 ? -e.value() : e.value()};
    case IndexExpr::Kind::kVar:
      return e.id() == var ? Affine{1, 0} : Affine{0, 1};
    case IndexExpr::Kind::kSize:
      return Affine{0, 1};
    case IndexExpr::Kind::kAdd: {
      const std::optional<Affine> a = AffineIn(e.lhs(), var);
      const std::optional<Affine> b = AffineIn(e.rhs(), var);
      if (!a || !b) return std::nullopt;
      return Affine{a->coefficient + b->coefficient,
                    std::gcd(a->divisor, b->divisor)};
    }
    case IndexExpr::Kind::kMul: {
      const std::optional<Affine> a = AffineIn(e.lhs(), var);
      const std::optional<Affine> b = AffineIn(e.rhs(), var);
      if (!a || !b) return std::nullopt;
      if (a->coefficient != 0 && b->coefficient != 0) return std::nullopt;
      // (ca * i + ra) * (cb * i + rb) with one coefficient 0: the other
      // side must be a constant to keep the coefficient constant.
      const Affine& with_var = a->coefficient != 0 ? *a : *b;
      const IndexExpr& other = a->coefficient != 0 ? e.rhs() : e.lhs();
      if (with_var.coefficient != 0) {
        if (!other.is_const()) return std::nullopt;
        const int64_t c = other.value();
        return Affine{with_var.coefficient * c,
                      with_var.divisor * (c < 0 ? -c : c)};
      }
      return Affine{0, a->divisor * b->divisor};
    }
    default:
      // floor division, modulo, max, min: fine without the variable.
      if (!IndependentOf(e, var)) return std::nullopt;
      return Affine{0, 1};
  }
}

void CollectLoads(const ValueExpr& e, absl::flat_hash_set<const void*>& seen,
                  std::vector<ValueExpr>& loads) {
  if (!seen.insert(e.id()).second) return;
  if (e.kind() == ValueExpr::Kind::kLoad ||
      e.kind() == ValueExpr::Kind::kGather) {
    loads.push_back(e);
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    CollectLoads(e.operand(i), seen, loads);
  }
}

}  // namespace

bool IndependentOf(const IndexExpr& e, int var) {
  switch (e.kind()) {
    case IndexExpr::Kind::kVar:
      return e.id() != var;
    case IndexExpr::Kind::kConst:
    case IndexExpr::Kind::kSize:
      return true;
    default:
      return IndependentOf(e.lhs(), var) && IndependentOf(e.rhs(), var);
  }
}

bool IsVectorIndex(const IndexExpr& index, int var, int width) {
  const std::optional<Affine> a = AffineIn(index, var);
  return a && a->coefficient == 1 && a->divisor % width == 0;
}

CudaVectorPlan PlanVectorAccess(const Kernel& kernel) {
  CudaVectorPlan none;
  if (kernel.outer.empty() || kernel.stages.empty()) return none;
  const LoopRange& last = kernel.outer.back();
  if (!last.extent.is_const()) return none;
  const int var = last.var;
  std::vector<ValueExpr> loads;
  absl::flat_hash_set<const void*> seen;
  for (const Stage& s : kernel.stages) {
    if (s.kind != Stage::Kind::kStore || !s.loops.empty() || s.buffer < 0) {
      return none;
    }
    CollectLoads(s.value, seen, loads);
  }
  // The widest element moved as a vector sets the width.
  int item = 0;
  for (const ValueExpr& l : loads) {
    if (kernel.buffers[l.buffer()].is_output) return none;
    if (l.kind() == ValueExpr::Kind::kGather) continue;
    const std::optional<Affine> a = AffineIn(l.index(), var);
    if (!a || (a->coefficient != 0 && a->coefficient != 1)) return none;
    if (a->coefficient == 1) {
      item = std::max(item, ItemSize(kernel.buffers[l.buffer()].dtype));
    }
  }
  for (const Stage& s : kernel.stages) {
    const std::optional<Affine> a = AffineIn(s.index, var);
    if (!a || a->coefficient != 1) return none;
    item = std::max(item, ItemSize(kernel.buffers[s.buffer].dtype));
  }
  if (item <= 0 || item > 8) return none;
  const int width = 16 / item;
  if (last.extent.value() % width != 0) return none;
  std::vector<bool> moved(kernel.buffers.size(), false);
  for (const ValueExpr& l : loads) {
    if (l.kind() == ValueExpr::Kind::kGather || IndependentOf(l.index(), var)) {
      continue;
    }
    if (!IsVectorIndex(l.index(), var, width)) return none;
    moved[l.buffer()] = true;
  }
  for (const Stage& s : kernel.stages) {
    if (!IsVectorIndex(s.index, var, width)) return none;
    moved[s.buffer] = true;
  }
  CudaVectorPlan plan{width, var, {}};
  for (size_t b = 0; b < moved.size(); ++b) {
    if (moved[b]) plan.buffers.push_back(static_cast<int>(b));
  }
  return plan;
}

}  // namespace guardjit
