// Shape rules of the view ops. Each computes the view's geometry from the
// input's sizes with contiguous strides (TensorMeta has no strides) and keeps
// the sizes; the kernels compute the same geometry from the real strides.
// view.default can still fail in its kernel when the input's strides make
// the view impossible, as in PyTorch.

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/ops/view_ops.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// A shape rule returning the view of argument 0 that `op` makes.
MetaFn ViewMeta(ViewOp op) {
  return [op](const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
    TensorMeta self = args.tensor(0);
    const SymShape strides = ContiguousStridesOf<SymInt>(self.sizes);
    ASSIGN_OR_RETURN(SymViewGeometry g,
                     ViewOpGeometry(op, args, IntsOf<SymInt>(self.sizes),
                                    IntsOf<SymInt>(strides)));
    return std::vector<TensorMeta>{
        TensorMeta{self.dtype, std::move(g.sizes), self.device}};
  };
}

// as_strided: the sizes asked for. Sizes, strides and the storage offset
// must be non-negative and the lists of equal length; whether the view
// stays inside the input's memory depends on its storage, which only the
// kernel (and the lowering, for memory it knows) can check.
absl::StatusOr<std::vector<TensorMeta>> AsStridedMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  const std::vector<SymInt> size = args.sym_int_list(1);
  const std::vector<SymInt> stride = args.sym_int_list(2);
  if (size.size() != stride.size()) {
    return absl::InvalidArgumentError(
        "argument 'stride': mismatch in length of strides and shape");
  }
  for (const SymInt& s : stride) {
    if (s < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'stride': as_strided: Negative strides are not supported "
          "at the moment, got strides: ",
          SymShapeToString(stride)));
    }
  }
  for (const SymInt& s : size) {
    if (s < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'size': negative size in ", SymShapeToString(size)));
    }
  }
  const std::optional<SymInt> offset = args.optional_sym_int(3);
  if (offset.has_value() && *offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'storage_offset': invalid storage offset ",
                     offset->ToString()));
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, SymShape(size.begin(), size.end()), self.device}};
}

}  // namespace

absl::Status RegisterViewOps(OpRegistry& registry) {
  for (const ViewOpDef& def : kViewOps) {
    RETURN_IF_ERROR(registry.Register(def.schema, ViewMeta(def.op)));
  }
  // Like view, but a copy where no view can express the shape (the kernel
  // decides); the output shape is the same.
  RETURN_IF_ERROR(
      registry.Register("_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
                        ViewMeta(ViewOp::kView)));
  RETURN_IF_ERROR(registry.Register(
      "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
      "storage_offset=None) -> Tensor(a)",
      AsStridedMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
