// Reference kernels of the view ops: each returns a view sharing its input's
// memory (Tensor::AsStrided), never a copy, exactly like PyTorch; only
// _unsafe_view copies, and only when no view can express the new shape.

#include <optional>
#include <vector>

#include "core/ops/view_geometry.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using GeometryFn = absl::StatusOr<ViewGeometry> (*)(const KernelArgs& args,
                                                    IntSpan sizes,
                                                    IntSpan strides);

// A kernel that returns the view of argument 0 that `geometry` computes.
KernelFn ViewKernel(GeometryFn geometry) {
  return [geometry](const KernelArgs& args, absl::Span<const TensorMeta>)
             -> absl::StatusOr<std::vector<Tensor>> {
    Tensor self = args.tensor(0);
    ASSIGN_OR_RETURN(ViewGeometry g,
                     geometry(args, self.sizes(), self.strides()));
    return std::vector<Tensor>{self.AsStrided(g.sizes, g.strides, g.offset)};
  };
}

// reshape's behaviour: a view when the strides allow one, else a view of a
// contiguous copy.
absl::StatusOr<std::vector<Tensor>> UnsafeViewKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  Tensor self = args.tensor(0);
  IntSpan sizes = out[0].sizes;
  if (std::optional<Shape> strides =
          ComputeViewStrides(self.sizes(), self.strides(), sizes)) {
    return std::vector<Tensor>{self.AsStrided(sizes, *strides)};
  }
  ASSIGN_OR_RETURN(Tensor copy, Contiguous(self));
  return std::vector<Tensor>{copy.AsStrided(sizes, ContiguousStrides(sizes))};
}

}  // namespace

absl::Status RegisterViewKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "aten.view.default",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return ViewAsGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(
      registry.Register("aten._unsafe_view.default", UnsafeViewKernel));
  RETURN_IF_ERROR(registry.Register(
      "aten.permute.default",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return PermuteGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.expand.default",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return ExpandGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.unsqueeze.default",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return UnsqueezeGeometry(sizes, strides, a.int_arg(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.squeeze.default",
      ViewKernel([](const KernelArgs&, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides, std::nullopt);
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.squeeze.dim",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides,
                               std::vector<int64_t>{a.int_arg(1)});
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.squeeze.dims",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.slice.Tensor",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return SliceGeometry(sizes, strides, a.int_arg(1), a.optional_int(2),
                             a.optional_int(3), a.int_arg(4));
      })));
  RETURN_IF_ERROR(registry.Register(
      "aten.select.int",
      ViewKernel([](const KernelArgs& a, IntSpan sizes, IntSpan strides) {
        return SelectGeometry(sizes, strides, a.int_arg(1), a.int_arg(2));
      })));
  return absl::OkStatus();
}

}  // namespace guardjit
