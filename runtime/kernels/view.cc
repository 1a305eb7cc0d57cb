// Reference kernels of the view ops: each returns a view sharing its input's
// memory (Tensor::AsStrided), never a copy, exactly like PyTorch; only
// _unsafe_view copies, and only when no view can express the new shape.

#include <optional>
#include <vector>

#include "core/op_schema.h"
#include "core/ops/view_ops.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

// A kernel returning the view of argument 0 that `op` makes.
KernelFn ViewKernel(ViewOp op) {
  return [op](const KernelArgs& args, absl::Span<const TensorMeta>)
             -> absl::StatusOr<std::vector<Tensor>> {
    Tensor self = args.tensor(0);
    ASSIGN_OR_RETURN(ViewGeometry g,
                     ViewOpGeometry(op, args, self.sizes(), self.strides()));
    return std::vector<Tensor>{self.AsStrided(g.sizes, g.strides, g.offset)};
  };
}

// reshape's behaviour: a view when the strides allow one, else a view of a
// contiguous copy.
absl::StatusOr<std::vector<Tensor>> UnsafeViewKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  Tensor self = args.tensor(0);
  const Shape sizes = out[0].shape();
  if (std::optional<Shape> strides =
          ComputeViewStrides<int64_t>(self.sizes(), self.strides(), sizes)) {
    return std::vector<Tensor>{self.AsStrided(sizes, *strides)};
  }
  ASSIGN_OR_RETURN(Tensor copy, Contiguous(self));
  return std::vector<Tensor>{copy.AsStrided(sizes, ContiguousStrides(sizes))};
}

}  // namespace

absl::Status RegisterViewKernels(KernelRegistry& registry) {
  for (const ViewOpDef& def : kViewOps) {
    ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(def.schema));
    RETURN_IF_ERROR(
        registry.Register(schema.QualifiedName(), ViewKernel(def.op)));
  }
  return registry.Register("aten._unsafe_view.default", UnsafeViewKernel);
}

}  // namespace guardjit
