#include "jit/llvm/column_reductions.h"

#include <cstdint>
#include <optional>

namespace guardjit {
namespace {

constexpr int64_t kMaxColumns = 1024;

// d(e)/d(i<var>) where `e` is affine in it with a constant coefficient, else
// nullopt.
std::optional<int64_t> Coefficient(const IndexExpr& e, int var) {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
    case IndexExpr::Kind::kSize:
      return 0;
    case IndexExpr::Kind::kVar:
      return e.id() == var ? 1 : 0;
    case IndexExpr::Kind::kAdd: {
      const std::optional<int64_t> a = Coefficient(e.lhs(), var);
      const std::optional<int64_t> b = Coefficient(e.rhs(), var);
      if (!a.has_value() || !b.has_value()) return std::nullopt;
      return *a + *b;
    }
    case IndexExpr::Kind::kMul: {
      const std::optional<int64_t> a = Coefficient(e.lhs(), var);
      const std::optional<int64_t> b = Coefficient(e.rhs(), var);
      if (!a.has_value() || !b.has_value()) return std::nullopt;
      if (*a == 0 && *b == 0) return 0;
      if (*a == 0 && e.lhs().is_const()) return e.lhs().value() * *b;
      if (*b == 0 && e.rhs().is_const()) return *a * e.rhs().value();
      return std::nullopt;
    }
    default: {
      const std::optional<int64_t> a = Coefficient(e.lhs(), var);
      const std::optional<int64_t> b = Coefficient(e.rhs(), var);
      if (a == 0 && b == 0) return 0;
      return std::nullopt;
    }
  }
}

// Whether `e` reads memory that is contiguous along loop `column` and not
// along loop `inner`: a load one element apart per column step and not per
// inner step, or a gather whose base moves one element per column step
// (whose rows the inner loop picks: an embedding bag).
bool ReadsAlongColumns(const ValueExpr& e, int column, int inner) {
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad:
      return Coefficient(e.index(), column) == 1 &&
             Coefficient(e.index(), inner) != 1;
    case ValueExpr::Kind::kGather:
      if (Coefficient(e.index(), column) == 1) return true;
      break;
    default:
      break;
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    if (ReadsAlongColumns(e.operand(i), column, inner)) return true;
  }
  return false;
}

}  // namespace

bool ColumnReductions(const Kernel& k) {
  if (k.outer.size() < 2 || k.num_locals > 8) return false;
  const LoopRange& column = k.outer.back();
  if (!column.extent.is_const() || column.extent.value() < 2 ||
      column.extent.value() > kMaxColumns) {
    return false;
  }
  bool along = false;
  for (const Stage& stage : k.stages) {
    if (stage.kind == Stage::Kind::kStore) {
      if (!stage.loops.empty()) return false;
      continue;
    }
    const DType d = stage.value.dtype();
    if (stage.buffer >= 0 || stage.loops.empty() ||
        (stage.combine != CombineOp::kSum && stage.combine != CombineOp::kMax &&
         stage.combine != CombineOp::kMin) ||
        (d != DType::kFloat32 && d != DType::kFloat64 && d != DType::kInt32 &&
         d != DType::kInt64)) {
      return false;
    }
    along = along ||
            ReadsAlongColumns(stage.value, column.var, stage.loops.back().var);
  }
  return along;
}

}  // namespace guardjit
