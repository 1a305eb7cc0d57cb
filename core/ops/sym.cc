// Shape rules of the size ops: aten.sym_size.int, aten.sym_numel and the
// integer arithmetic/comparison nodes. Their values are 0-dim int64 (bool for
// comparisons) metas carrying the SymInt in `sym_value`; comparisons over
// symbolic sizes record guards in the current ShapeEnv.

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/ops/sym_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using MetaResult = absl::StatusOr<std::vector<TensorMeta>>;

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

// An integer operand: a literal or a node that computes an integer.
absl::StatusOr<SymInt> IntOperand(const MetaArgs& args, int i,
                                  absl::string_view name) {
  const Arg& raw = args.raw(i);
  if (raw.is_int()) return SymInt(raw.as_int());
  if (raw.is_bool()) return SymInt(raw.as_bool() ? 1 : 0);
  if (raw.is_value()) {
    const TensorMeta meta = args.tensor(i);
    if (meta.sym_value.has_value()) return *meta.sym_value;
    return ArgError(name, absl::StrCat("expected an integer (a size), got a "
                                       "tensor ",
                                       meta.ToString()));
  }
  return ArgError(name,
                  absl::StrCat("expected an integer, got ", raw.kind_name()));
}

MetaResult SymSizeMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  auto dim = NormalizeDim(args.int_arg(1), self.dim());
  if (!dim.ok()) return ArgError("dim", dim.status().message());
  if (self.dim() == 0) return ArgError("self", "a 0-dim tensor has no sizes");
  return std::vector<TensorMeta>{TensorMeta::SymValue(self.sizes[*dim])};
}

MetaResult SymNumelMeta(const MetaArgs& args) {
  return std::vector<TensorMeta>{TensorMeta::SymValue(args.tensor(0).numel())};
}

MetaFn SymOpMeta(const SymOpDef& def) {
  return [def](const MetaArgs& args) -> MetaResult {
    ASSIGN_OR_RETURN(SymInt a, IntOperand(args, 0, "a"));
    ASSIGN_OR_RETURN(SymInt b, IntOperand(args, 1, "b"));
    if ((def.op == SymOp::kFloorDiv || def.op == SymOp::kMod) && b == 0) {
      return ArgError("b", "integer division or modulo by zero");
    }
    return std::vector<TensorMeta>{
        TensorMeta::SymValue(ApplySymOp<SymInt>(def.op, a, b),
                             def.compare ? DType::kBool : DType::kInt64)};
  };
}

}  // namespace

absl::Status RegisterSymOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "sym_size.int(Tensor self, int dim) -> SymInt", SymSizeMeta));
  RETURN_IF_ERROR(
      registry.Register("sym_numel(Tensor self) -> SymInt", SymNumelMeta));
  // sym_stride.int and sym_storage_offset read what shape inference does
  // not model (TensorMeta has no strides; a kernel's output strides are
  // its own): like item(), they end a compiled segment (a graph break) and
  // their kernels read the real tensor, so a transposed or offset input
  // gets its own stride and offset, never the contiguous ones.
  RETURN_IF_ERROR(registry.RegisterDataDependent(
      "sym_stride.int(Tensor self, int dim) -> SymInt"));
  RETURN_IF_ERROR(registry.RegisterDataDependent(
      "sym_storage_offset(Tensor self) -> SymInt"));
  for (const SymOpDef& def : kSymOps) {
    RETURN_IF_ERROR(
        registry.RegisterWithTarget(def.target, def.schema, SymOpMeta(def)));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
