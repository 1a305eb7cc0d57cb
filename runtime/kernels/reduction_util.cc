#include "runtime/kernels/reduction_util.h"

#include "core/status_macros.h"
#include "runtime/tensor_copy.h"

namespace guardjit {

Tensor MoveDimsLast(const Tensor& t, const std::vector<bool>& mask) {
  Shape sizes, strides;
  for (bool reduced : {false, true}) {
    for (int d = 0; d < t.dim(); ++d) {
      if (mask[d] != reduced) continue;
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
  }
  return t.AsStrided(sizes, strides);
}

absl::StatusOr<ReductionRows> ToReductionRows(const Tensor& t,
                                              const std::vector<bool>& mask,
                                              DType dtype) {
  ReductionRows rows;
  for (int d = 0; d < t.dim(); ++d)
    (mask[d] ? rows.inner : rows.outer) *= t.size(d);
  ASSIGN_OR_RETURN(rows.values, CastIfNeeded(MoveDimsLast(t, mask), dtype));
  ASSIGN_OR_RETURN(rows.values, Contiguous(rows.values));
  return rows;
}

}  // namespace guardjit
