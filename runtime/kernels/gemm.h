#ifndef GUARDJIT_RUNTIME_KERNELS_GEMM_H_
#define GUARDJIT_RUNTIME_KERNELS_GEMM_H_

#include "absl/status/status.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace guardjit {

// out[i] = alpha * (a[i] @ b[i]) + beta * out[i] for every batch index i: the
// one matrix product behind mm, bmm, addmm and convolution.
//
// a is [B, M, K], b is [B, K, N], out is [B, M, N], all of one dtype (not
// bool). a and b may have any strides (stride 0 broadcasts); out must not
// overlap them. float32 and float64 go to OpenBLAS, with transposed operands
// passed as such rather than copied; other dtypes use a loop that accumulates
// in float (half types) or wraps modulo 2^bits (integers). When beta is zero
// (after conversion to the dtype) out's old values are ignored, NaNs
// included, as in BLAS and PyTorch; when alpha is zero the product is not
// computed at all, as in reference BLAS.
absl::Status BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out,
                         const Scalar& alpha, const Scalar& beta);

// `t` (2-D) viewed as a batch of one, for BatchedGemm.
Tensor AsBatchOfOne(const Tensor& t);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_GEMM_H_
