#ifndef GUARDJIT_RUNTIME_KERNELS_REDUCTION_UTIL_H_
#define GUARDJIT_RUNTIME_KERNELS_REDUCTION_UTIL_H_

// Layout helpers shared by the reduction and normalization kernels: they bring
// the values of every output element together in one contiguous row, so the
// arithmetic is a plain loop whatever the input's strides.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace guardjit {

// `t` viewed with the dims flagged in `mask` moved after the others; both
// groups keep their order. No copy.
Tensor MoveDimsLast(const Tensor& t, const std::vector<bool>& mask);

// A reduction's input as `outer` contiguous rows of `inner` values: row o
// holds the values that produce output element o (output in row-major order),
// in row-major order of the reduced dims.
struct ReductionRows {
  Tensor values;
  int64_t outer = 1;
  int64_t inner = 1;

  // Row `o` as `T` (the storage type of `values`).
  template <typename T>
  absl::Span<const T> row(int64_t o) const {
    if (inner == 0) return {};
    return absl::Span<const T>(values.data_as<const T>() + o * inner,
                               static_cast<size_t>(inner));
  }
};

// The rows of `t` reduced over `mask`, converted to `dtype`. Copies only when
// `t` is not already laid out that way.
absl::StatusOr<ReductionRows> ToReductionRows(const Tensor& t,
                                              const std::vector<bool>& mask,
                                              DType dtype);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_REDUCTION_UTIL_H_
