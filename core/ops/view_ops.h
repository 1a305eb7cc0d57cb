#ifndef GUARDJIT_CORE_OPS_VIEW_OPS_H_
#define GUARDJIT_CORE_OPS_VIEW_OPS_H_

// The single-output view ops as one table, read by both their shape rules
// (core/ops/view.cc) and their kernels (runtime/kernels/view.cc), so both
// read the arguments and compute the geometry the same way.

#include <optional>
#include <vector>

#include "core/bound_args.h"
#include "core/ops/view_geometry.h"

namespace guardjit {

enum class ViewOp {
  kView,
  kPermute,
  kExpand,
  kUnsqueeze,
  kSqueeze,
  kSqueezeDim,
  kSqueezeDims,
  kSlice,
  kSelect,
  kAlias,
  kDiagonal,
};

struct ViewOpDef {
  ViewOp op;
  const char* schema;  // ATen schema; the target is aten.<name>.<overload>
};

inline constexpr ViewOpDef kViewOps[] = {
    {ViewOp::kView, "view(Tensor(a) self, SymInt[] size) -> Tensor(a)"},
    {ViewOp::kPermute, "permute(Tensor(a) self, int[] dims) -> Tensor(a)"},
    {ViewOp::kExpand,
     "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> "
     "Tensor(a)"},
    {ViewOp::kUnsqueeze, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"},
    {ViewOp::kSqueeze, "squeeze(Tensor(a) self) -> Tensor(a)"},
    {ViewOp::kSqueezeDim, "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"},
    {ViewOp::kSqueezeDims,
     "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)"},
    {ViewOp::kSlice,
     "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
     "end=None, SymInt step=1) -> Tensor(a)"},
    {ViewOp::kSelect,
     "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"},
    // The whole tensor as a new view (what torch.export leaves of
    // detach-like ops).
    {ViewOp::kAlias, "alias(Tensor(a) self) -> Tensor(a)"},
    {ViewOp::kDiagonal,
     "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> "
     "Tensor(a)"},
};

template <typename I, typename J>
std::optional<I> OptionalAs(const std::optional<J>& v) {
  if (!v.has_value()) return std::nullopt;
  return I(*v);
}

// The geometry of `op` applied to a tensor laid out as (`sizes`, `strides`),
// in the integer type of `T`'s arguments (SymInt for shape inference).
template <typename T, typename I = typename BoundArgs<T>::Int>
absl::StatusOr<ViewGeometryT<I>> ViewOpGeometry(ViewOp op,
                                                const BoundArgs<T>& a,
                                                IntsOf<I> sizes,
                                                IntsOf<I> strides) {
  switch (op) {
    case ViewOp::kView: {
      const auto list = a.sym_int_list(1);
      const std::vector<I> size(list.begin(), list.end());
      return ViewAsGeometry<I>(sizes, strides, size);
    }
    case ViewOp::kPermute:
      return PermuteGeometry<I>(sizes, strides, a.int_list(1));
    case ViewOp::kExpand: {
      const auto list = a.sym_int_list(1);
      const std::vector<I> size(list.begin(), list.end());
      return ExpandGeometry<I>(sizes, strides, size);
    }
    case ViewOp::kUnsqueeze:
      return UnsqueezeGeometry<I>(sizes, strides, a.int_arg(1));
    case ViewOp::kSqueeze:
      return SqueezeGeometry<I>(sizes, strides, std::nullopt);
    case ViewOp::kSqueezeDim:
      return SqueezeGeometry<I>(sizes, strides,
                                std::vector<int64_t>{a.int_arg(1)});
    case ViewOp::kSqueezeDims:
      return SqueezeGeometry<I>(sizes, strides, a.int_list(1));
    case ViewOp::kSlice:
      return SliceGeometry<I>(
          sizes, strides, a.int_arg(1), OptionalAs<I>(a.optional_sym_int(2)),
          OptionalAs<I>(a.optional_sym_int(3)), a.int_arg(4));
    case ViewOp::kSelect:
      return SelectGeometry<I>(sizes, strides, a.int_arg(1), I(a.sym_int(2)));
    case ViewOp::kAlias:
      return ViewGeometryT<I>{
          {sizes.begin(), sizes.end()}, {strides.begin(), strides.end()}, I(0)};
    case ViewOp::kDiagonal:
      return DiagonalGeometry<I>(sizes, strides, a.int_arg(1), a.int_arg(2),
                                 a.int_arg(3));
  }
  return absl::InternalError("unknown view op");
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_VIEW_OPS_H_
