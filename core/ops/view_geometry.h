#ifndef GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_
#define GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_

// The geometry of ATen's view ops: how a view's sizes, strides and start
// offset follow from its base's. Shape inference calls these with contiguous
// strides and keeps the sizes; the reference kernels call them with the
// input's real strides and build the view, so both agree on every shape and
// every error. The argument names in the errors are the ATen schema's.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace guardjit {

// A view of a base tensor, PyTorch's (sizes, strides, storage_offset) with
// the offset in elements relative to the base's first element.
struct ViewGeometry {
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
};

// `size` with its one -1 inferred from `numel` (PyTorch's infer_size).
absl::StatusOr<Shape> InferViewSize(IntSpan size, int64_t numel);

// Strides that let `new_sizes` view memory laid out as (`old_sizes`,
// `old_strides`), or nullopt when a new dim would span two non-mergeable
// chunks of the old layout (PyTorch's computeStride). Numels must match.
std::optional<Shape> ComputeViewStrides(IntSpan old_sizes, IntSpan old_strides,
                                        IntSpan new_sizes);

// view.default: sizes from InferViewSize, strides from ComputeViewStrides.
absl::StatusOr<ViewGeometry> ViewAsGeometry(IntSpan sizes, IntSpan strides,
                                            IntSpan size);

absl::StatusOr<ViewGeometry> PermuteGeometry(IntSpan sizes, IntSpan strides,
                                             IntSpan dims);

// expand.default: -1 keeps a size, size-1 dims and new leading dims get
// stride 0 when expanded.
absl::StatusOr<ViewGeometry> ExpandGeometry(IntSpan sizes, IntSpan strides,
                                            IntSpan target);

absl::StatusOr<ViewGeometry> UnsqueezeGeometry(IntSpan sizes, IntSpan strides,
                                               int64_t dim);

// Drops the size-1 dims among `dims` (every size-1 dim when nullopt).
absl::StatusOr<ViewGeometry> SqueezeGeometry(
    IntSpan sizes, IntSpan strides,
    const std::optional<std::vector<int64_t>>& dims);

// slice.Tensor: start and end clamp like Python slices; step must be > 0.
absl::StatusOr<ViewGeometry> SliceGeometry(IntSpan sizes, IntSpan strides,
                                           int64_t dim,
                                           std::optional<int64_t> start,
                                           std::optional<int64_t> end,
                                           int64_t step);

// select.int: a negative index counts from the end.
absl::StatusOr<ViewGeometry> SelectGeometry(IntSpan sizes, IntSpan strides,
                                            int64_t dim, int64_t index);

// split_with_sizes.default: one slice along `dim` per entry of
// `split_sizes`, which must be non-negative and sum to the dim's size.
absl::StatusOr<std::vector<ViewGeometry>> SplitWithSizesGeometry(
    IntSpan sizes, IntSpan strides, IntSpan split_sizes, int64_t dim);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_VIEW_GEOMETRY_H_
