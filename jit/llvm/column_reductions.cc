#include "jit/llvm/column_reductions.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace guardjit {
namespace {

// Columns times locals: the per-column arrays of doubles on the stack stay
// within 64 KiB.
constexpr int64_t kMaxColumnValues = 8192;

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

// How a reduction's reads favour a layout: `rows` when one is contiguous
// along its own innermost loop `inner` (a load one element apart per inner
// step, or a gather whose gathered row runs along it: a row reduction is
// right for those), `columns` when one is contiguous along the last outer
// loop `column` and strided along `inner` (a load one element apart per
// column step that moves per inner step by another amount, or a gather
// whose base moves one element per column step: an embedding bag's rows).
// Reads that do not move along `inner` favour neither.
struct ReadLayout {
  bool rows = false, columns = false;
};

// A gather's index operand (`in_index`) is read once per gathered element
// either way: its reads count for neither layout.
void Classify(const ValueExpr& e, int column, int inner, bool in_index,
              ReadLayout& out) {
  if (e.kind() == ValueExpr::Kind::kLoad && !in_index) {
    const std::optional<int64_t> c = Coefficient(e.index(), column);
    const std::optional<int64_t> i = Coefficient(e.index(), inner);
    if (i == 1) out.rows = true;
    if (c == 1 && i.has_value() && *i != 0 && *i != 1) out.columns = true;
  } else if (e.kind() == ValueExpr::Kind::kGather) {
    if (Coefficient(e.index(), inner) == 1) out.rows = true;
    if (Coefficient(e.index(), column) == 1) out.columns = true;
    in_index = true;
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    Classify(e.operand(i), column, inner, in_index, out);
  }
}

}  // namespace

bool ColumnReductions(const Kernel& k) {
  if (k.outer.size() < 2 || k.num_locals > 8) return false;
  const LoopRange& column = k.outer.back();
  if (!column.extent.is_const() || column.extent.value() < 2 ||
      column.extent.value() * std::max(1, k.num_locals) > kMaxColumnValues) {
    return false;
  }
  ReadLayout reads;
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
    Classify(stage.value, column.var, stage.loops.back().var,
             /*in_index=*/false, reads);
  }
  return reads.columns && !reads.rows;
}

}  // namespace guardjit
