// Reference kernels of the view ops: each returns a view sharing its input's
// memory (Tensor::AsStrided), never a copy, exactly like PyTorch; only
// _unsafe_view copies, and only when no view can express the new shape.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_schema.h"
#include "core/ops/view_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/kernels/storage_offset.h"
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

// as_strided: a view of self's storage with the given geometry, the
// storage offset absolute (self's own when None). The view must stay inside
// the storage (ATen's setStorage check).
absl::StatusOr<std::vector<Tensor>> AsStridedKernel(
    const KernelArgs& args, absl::Span<const TensorMeta>) {
  const Tensor self = args.tensor(0);
  const std::vector<int64_t> sizes = args.int_list(1);
  const std::vector<int64_t> strides = args.int_list(2);
  const int64_t base = StorageOffsetOf(self);
  const int64_t offset = args.optional_int(3).value_or(base);
  int64_t need = offset + 1;
  bool overflow = false;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty = true;
    int64_t reach;
    overflow |= __builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
                __builtin_add_overflow(need, reach, &need);
  }
  if (empty) need = 0;
  const int64_t have = StorageElementsOf(self);
  if (overflow || need > have) {
    return absl::OutOfRangeError(absl::StrCat(
        "argument 'size': as_strided: sizes ", ShapeToString(sizes),
        ", strides ", ShapeToString(strides), ", storage offset ", offset,
        " and itemsize ", self.item_size(), " need a storage of ",
        overflow ? std::string("more than 2^63 elements")
                 : absl::StrCat(need * self.item_size(), " bytes"),
        ", out of bounds for the input's storage of ", have * self.item_size(),
        " bytes"));
  }
  return std::vector<Tensor>{self.AsStrided(sizes, strides, offset - base)};
}

}  // namespace

absl::Status RegisterViewKernels(KernelRegistry& registry) {
  for (const ViewOpDef& def : kViewOps) {
    ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(def.schema));
    RETURN_IF_ERROR(
        registry.Register(schema.QualifiedName(), ViewKernel(def.op)));
  }
  RETURN_IF_ERROR(
      registry.Register("aten.as_strided.default", AsStridedKernel));
  return registry.Register("aten._unsafe_view.default", UnsafeViewKernel);
}

}  // namespace guardjit
