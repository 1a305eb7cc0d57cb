// Shape rules of the view ops. Each computes the view's geometry from the
// input's sizes with contiguous strides (TensorMeta has no strides) and keeps
// the sizes; the kernels compute the same geometry from the real strides.
// view.default can still fail in its kernel when the input's strides make
// the view impossible, as in PyTorch.

#include <optional>
#include <vector>

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
  return absl::OkStatus();
}

}  // namespace guardjit
