#include "jit/cuda/cuda_online_softmax.h"

#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace guardjit {
namespace {

bool SameValueMemo(
    const ValueExpr& a, const ValueExpr& b,
    absl::flat_hash_set<std::pair<const void*, const void*>>& equal) {
  if (a.id() == b.id()) return true;
  if (equal.contains({a.id(), b.id()})) return true;
  if (a.kind() != b.kind() || a.dtype() != b.dtype() ||
      a.num_operands() != b.num_operands()) {
    return false;
  }
  switch (a.kind()) {
    case ValueExpr::Kind::kLoad:
    case ValueExpr::Kind::kIndex:
      if (a.buffer() != b.buffer() || a.index() != b.index()) return false;
      break;
    case ValueExpr::Kind::kGather:
      if (a.buffer() != b.buffer() || a.index() != b.index() ||
          a.stride() != b.stride() || a.bound() != b.bound() ||
          a.check() != b.check()) {
        return false;
      }
      break;
    case ValueExpr::Kind::kConst: {
      if (a.is_int_const() != b.is_int_const()) return false;
      if (a.is_int_const()) {
        if (a.int_value() != b.int_value()) return false;
      } else {
        const double x = a.float_value(), y = b.float_value();
        if (std::memcmp(&x, &y, sizeof(double)) != 0) return false;
      }
      break;
    }
    case ValueExpr::Kind::kLocal:
      if (a.local() != b.local()) return false;
      break;
    case ValueExpr::Kind::kUnary:
      if (a.unary_op() != b.unary_op()) return false;
      break;
    case ValueExpr::Kind::kBinary:
      if (a.binary_op() != b.binary_op()) return false;
      break;
    case ValueExpr::Kind::kWhere:
    case ValueExpr::Kind::kCast:
      break;
  }
  for (int i = 0; i < a.num_operands(); ++i) {
    if (!SameValueMemo(a.operand(i), b.operand(i), equal)) return false;
  }
  equal.insert({a.id(), b.id()});
  return true;
}

bool SameLoops(const std::vector<LoopRange>& a,
               const std::vector<LoopRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].var != b[i].var || a[i].extent != b[i].extent) return false;
  }
  return true;
}

// A load of `buffer` in `e` (nullptr if none).
const ValueExpr* FindLoad(const ValueExpr& e, int buffer) {
  if ((e.kind() == ValueExpr::Kind::kLoad ||
       e.kind() == ValueExpr::Kind::kGather) &&
      e.buffer() == buffer) {
    return &e;
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    if (const ValueExpr* l = FindLoad(e.operand(i), buffer)) return l;
  }
  return nullptr;
}

// `e` with every load of `buffer` replaced by `with`; false when one reads
// elsewhere than `index` (or is a gather).
bool ReplaceLoads(ValueExpr& e, int buffer, const IndexExpr& index,
                  const ValueExpr& with) {
  while (const ValueExpr* load = FindLoad(e, buffer)) {
    if (load->kind() != ValueExpr::Kind::kLoad || load->index() != index) {
      return false;
    }
    bool found = false;
    const ValueExpr target = *load;
    e = ValueExpr::Replace(e, target, with, &found);
    if (!found) return false;
  }
  return true;
}

// Stage `i + 1` sums exp(W - local of stage i) with W the value stage i
// maximizes.
bool IsMaxThenSumExp(const Stage& max, const Stage& sum) {
  if (max.kind != Stage::Kind::kReduce || max.combine != CombineOp::kMax ||
      max.buffer >= 0 || !IsFloating(max.value.dtype()) ||
      sum.kind != Stage::Kind::kReduce || sum.combine != CombineOp::kSum ||
      sum.value.dtype() != max.value.dtype() ||
      !SameLoops(max.loops, sum.loops)) {
    return false;
  }
  const ValueExpr& e = sum.value;
  if (e.kind() != ValueExpr::Kind::kUnary || e.unary_op() != UnaryOp::kExp) {
    return false;
  }
  const ValueExpr& d = e.operand(0);
  if (d.kind() != ValueExpr::Kind::kBinary || d.binary_op() != BinaryOp::kSub ||
      d.operand(1).kind() != ValueExpr::Kind::kLocal ||
      d.operand(1).local() != max.local) {
    return false;
  }
  return SameValue(d.operand(0), max.value);
}

// Drops stage `r`'s store of the values it reduces (fusion's
// ReuseReducedValues) by recomputing them where stages from `from` on read
// them back: every such read must be at the store's index over the same
// loops, and a later store over those loops must overwrite the buffer there
// (reads after it see its values and stay).
bool DropReducedStore(std::vector<Stage>& stages, size_t r, size_t from) {
  const Stage& reduce = stages[r];
  bool overwritten = false;
  for (size_t s = from; s < stages.size() && !overwritten; ++s) {
    Stage& later = stages[s];
    if (FindLoad(later.value, reduce.buffer) != nullptr &&
        (!SameLoops(later.loops, reduce.loops) ||
         !ReplaceLoads(later.value, reduce.buffer, reduce.index,
                       reduce.value))) {
      return false;
    }
    // Another reduction's store into the buffer would be read back, not
    // recomputed: leave such kernels alone.
    if (later.kind == Stage::Kind::kReduce && later.buffer == reduce.buffer) {
      return false;
    }
    overwritten =
        later.kind == Stage::Kind::kStore && later.buffer == reduce.buffer &&
        later.index == reduce.index && SameLoops(later.loops, reduce.loops);
  }
  if (!overwritten) return false;
  stages[r].buffer = -1;
  return true;
}

}  // namespace

bool SameValue(const ValueExpr& a, const ValueExpr& b) {
  absl::flat_hash_set<std::pair<const void*, const void*>> equal;
  return SameValueMemo(a, b, equal);
}

OnlineSoftmaxPlan PlanOnlineSoftmax(const Kernel& kernel) {
  OnlineSoftmaxPlan plan;
  plan.stages = kernel.stages;
  plan.fused.assign(plan.stages.size(), false);
  for (size_t i = 0; i + 1 < plan.stages.size(); ++i) {
    if (i > 0 && plan.fused[i - 1]) continue;
    if (plan.stages[i].kind != Stage::Kind::kReduce ||
        plan.stages[i].combine != CombineOp::kMax ||
        plan.stages[i + 1].kind != Stage::Kind::kReduce ||
        plan.stages[i + 1].combine != CombineOp::kSum) {
      continue;
    }
    std::vector<Stage> rewritten = plan.stages;
    // log_softmax stores the maximized values for its output to read back;
    // softmax stores the exponentials: both are recomputed instead.
    if (rewritten[i].buffer >= 0 && !DropReducedStore(rewritten, i, i + 1)) {
      continue;
    }
    if (!IsMaxThenSumExp(rewritten[i], rewritten[i + 1])) continue;
    if (rewritten[i + 1].buffer >= 0 &&
        !DropReducedStore(rewritten, i + 1, i + 2)) {
      continue;
    }
    plan.stages = std::move(rewritten);
    plan.fused[i] = true;
  }
  return plan;
}

}  // namespace guardjit
