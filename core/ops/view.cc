// Shape rules of the view ops. Each computes the view's geometry from the
// input's sizes with contiguous strides (TensorMeta has no strides) and keeps
// the sizes; the kernels compute the same geometry from the real strides.
// view.default can still fail in its kernel when the input's strides make
// the view impossible, as in PyTorch.

#include <optional>
#include <vector>

#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/ops/view_geometry.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using GeometryFn = absl::StatusOr<ViewGeometry> (*)(const MetaArgs& args,
                                                    IntSpan sizes,
                                                    IntSpan strides);

// A shape rule that returns the view of argument 0 that `geometry` computes.
MetaFn ViewMeta(GeometryFn geometry) {
  return [geometry](
             const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
    TensorMeta self = args.tensor(0);
    ASSIGN_OR_RETURN(ViewGeometry g,
                     geometry(args, self.sizes, ContiguousStrides(self.sizes)));
    return std::vector<TensorMeta>{
        TensorMeta{self.dtype, std::move(g.sizes), self.device}};
  };
}

}  // namespace

absl::Status RegisterViewOps(OpRegistry& registry) {
  auto view = ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
    return ViewAsGeometry(sizes, strides, a.int_list(1));
  });
  RETURN_IF_ERROR(registry.Register(
      "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", view));
  RETURN_IF_ERROR(registry.Register(
      "_unsafe_view(Tensor self, SymInt[] size) -> Tensor", view));
  RETURN_IF_ERROR(registry.Register(
      "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return PermuteGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> "
      "Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return ExpandGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return UnsqueezeGeometry(sizes, strides, a.int_arg(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "squeeze(Tensor(a) self) -> Tensor(a)",
      ViewMeta([](const MetaArgs&, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides, std::nullopt);
      })));
  RETURN_IF_ERROR(registry.Register(
      "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides,
                               std::vector<int64_t>{a.int_arg(1)});
      })));
  RETURN_IF_ERROR(registry.Register(
      "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return SqueezeGeometry(sizes, strides, a.int_list(1));
      })));
  RETURN_IF_ERROR(registry.Register(
      "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
      "end=None, SymInt step=1) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return SliceGeometry(sizes, strides, a.int_arg(1), a.optional_int(2),
                             a.optional_int(3), a.int_arg(4));
      })));
  RETURN_IF_ERROR(registry.Register(
      "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
      ViewMeta([](const MetaArgs& a, IntSpan sizes, IntSpan strides) {
        return SelectGeometry(sizes, strides, a.int_arg(1), a.int_arg(2));
      })));
  return absl::OkStatus();
}

}  // namespace guardjit
