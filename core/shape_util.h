#ifndef GUARDJIT_CORE_SHAPE_UTIL_H_
#define GUARDJIT_CORE_SHAPE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"

namespace guardjit {

// NumPy/PyTorch broadcasting of two shapes.
absl::StatusOr<Shape> BroadcastShapes(IntSpan a, IntSpan b);
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const Shape> shapes);
// The same over symbolic sizes: a dim that is 1 in one operand takes the
// other's size; two symbolic sizes must be equal (guarded: s0 == s1).
absl::StatusOr<SymShape> BroadcastShapes(absl::Span<const SymInt> a,
                                         absl::Span<const SymInt> b);

// Wraps a possibly negative `dim` into [0, rank); rank 0 accepts -1 and 0 as
// PyTorch does.
absl::StatusOr<int> NormalizeDim(int64_t dim, int rank);

// Dims of a reduction: `dims` normalized and deduplicated; empty means all.
absl::StatusOr<std::vector<bool>> ReductionMask(
    const std::optional<std::vector<int64_t>>& dims, int rank);

// Output shape of a reduction over `mask` (keepdim keeps 1s).
SymShape ReducedShape(absl::Span<const SymInt> sizes,
                      const std::vector<bool>& mask, bool keepdim);

// Formats "[2, 3]".
std::string ShapeToString(IntSpan sizes);
std::string ShapeToString(absl::Span<const SymInt> sizes);

// torch.result_type over the tensor operands of an op (wrapped numbers have the
// lowest priority, then 0-dim tensors, then dimensioned tensors).
DType ResultType(absl::Span<const TensorMeta> operands);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SHAPE_UTIL_H_
