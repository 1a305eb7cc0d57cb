#ifndef GUARDJIT_RUNTIME_KERNELS_ADVANCED_INDEX_H_
#define GUARDJIT_RUNTIME_KERNELS_ADVANCED_INDEX_H_

// Element offsets of ATen's advanced indexing, shared by the index.Tensor
// kernel (runtime/kernels/indexing.cc) and index_put (scatter.cc).

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace guardjit {

struct AdvancedIndexOffsets {
  Shape result;                  // sizes of the indexing result
  std::vector<int64_t> offsets;  // per result element (row-major): offset in t
};

// The elements of `t` (self's sizes, any strides) that `indices` select.
// Negative indices count from the end; every index is range-checked before
// any offset is returned (an error naming `indices`, the value and the dim).
absl::StatusOr<AdvancedIndexOffsets> ComputeAdvancedIndex(
    const Tensor& t, const std::vector<std::optional<Tensor>>& indices);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_ADVANCED_INDEX_H_
