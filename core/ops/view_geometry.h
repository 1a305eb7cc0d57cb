#ifndef GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_
#define GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_

// The geometry of ATen's view ops: how a view's sizes, strides and start
// offset follow from its base's. Every function exists for int64_t (kernels)
// and SymInt (shape inference over symbolic sizes; decisions become guards).
// Shape inference calls these with contiguous strides and keeps the sizes; the
// reference kernels call them with the input's real strides and build the view,
// so both agree on every shape and every error. The argument names in the
// errors are the ATen schema's.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/sym_int.h"
#include "core/tensor.h"

namespace guardjit {

// A view of a base tensor, PyTorch's (sizes, strides, storage_offset) with
// the offset in elements relative to the base's first element.
template <typename I>
struct ViewGeometryT {
  absl::InlinedVector<I, 6> sizes;
  absl::InlinedVector<I, 6> strides;
  I offset = 0;
};
using ViewGeometry = ViewGeometryT<int64_t>;
using SymViewGeometry = ViewGeometryT<SymInt>;

template <typename I>
using IntsOf = absl::Span<const I>;

// `size` with its one -1 inferred from `numel` (PyTorch's infer_size).
template <typename I>
absl::StatusOr<absl::InlinedVector<I, 6>> InferViewSize(IntsOf<I> size,
                                                        I numel);

// Strides that let `new_sizes` view memory laid out as (`old_sizes`,
// `old_strides`), or nullopt when a new dim would span two non-mergeable
// chunks of the old layout (PyTorch's computeStride). Numels must match.
template <typename I>
std::optional<absl::InlinedVector<I, 6>> ComputeViewStrides(
    IntsOf<I> old_sizes, IntsOf<I> old_strides, IntsOf<I> new_sizes);

// view.default: sizes from InferViewSize, strides from ComputeViewStrides.
template <typename I>
absl::StatusOr<ViewGeometryT<I>> ViewAsGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides,
                                                IntsOf<I> size);

template <typename I>
absl::StatusOr<ViewGeometryT<I>> PermuteGeometry(IntsOf<I> sizes,
                                                 IntsOf<I> strides,
                                                 IntSpan dims);

// expand.default: -1 keeps a size, size-1 dims and new leading dims get
// stride 0 when expanded.
template <typename I>
absl::StatusOr<ViewGeometryT<I>> ExpandGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides,
                                                IntsOf<I> target);

template <typename I>
absl::StatusOr<ViewGeometryT<I>> UnsqueezeGeometry(IntsOf<I> sizes,
                                                   IntsOf<I> strides,
                                                   int64_t dim);

// Drops the size-1 dims among `dims` (every size-1 dim when nullopt).
template <typename I>
absl::StatusOr<ViewGeometryT<I>> SqueezeGeometry(
    IntsOf<I> sizes, IntsOf<I> strides,
    const std::optional<std::vector<int64_t>>& dims);

// slice.Tensor: start and end clamp like Python slices; step must be > 0.
template <typename I>
absl::StatusOr<ViewGeometryT<I>> SliceGeometry(IntsOf<I> sizes,
                                               IntsOf<I> strides, int64_t dim,
                                               std::optional<I> start,
                                               std::optional<I> end,
                                               int64_t step);

// select.int: a negative index counts from the end.
template <typename I>
absl::StatusOr<ViewGeometryT<I>> SelectGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides, int64_t dim,
                                                I index);

// diagonal.default: dims dim1 and dim2 replaced by a last dim along the
// diagonal `offset` above (below, when negative) the main one.
template <typename I>
absl::StatusOr<ViewGeometryT<I>> DiagonalGeometry(IntsOf<I> sizes,
                                                  IntsOf<I> strides,
                                                  int64_t offset, int64_t dim1,
                                                  int64_t dim2);

// split_with_sizes.default: one slice along `dim` per entry of
// `split_sizes`, which must be non-negative and sum to the dim's size.
template <typename I>
absl::StatusOr<std::vector<ViewGeometryT<I>>> SplitWithSizesGeometry(
    IntsOf<I> sizes, IntsOf<I> strides, IntsOf<I> split_sizes, int64_t dim);

// Contiguous strides of `sizes` (size-0/1 dims as ContiguousStrides).
template <typename I>
absl::InlinedVector<I, 6> ContiguousStridesOf(IntsOf<I> sizes);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_
