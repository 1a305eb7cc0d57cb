#ifndef GUARDJIT_RUNTIME_TENSOR_COPY_H_
#define GUARDJIT_RUNTIME_TENSOR_COPY_H_

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace guardjit {

// dst[...] = src[...] converted to dst's dtype; src broadcasts to dst's shape.
// Any strides on either side. The caller checked that the shapes broadcast.
void CopyInto(const Tensor& dst, const Tensor& src);

// A new contiguous tensor with `src`'s values converted to `dtype`.
absl::StatusOr<Tensor> CopyAs(const Tensor& src, DType dtype);

// `src` itself when it already has `dtype` (no copy), else CopyAs.
absl::StatusOr<Tensor> CastIfNeeded(const Tensor& src, DType dtype);

// `src` itself when contiguous, else a contiguous copy.
absl::StatusOr<Tensor> Contiguous(const Tensor& src);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_TENSOR_COPY_H_
