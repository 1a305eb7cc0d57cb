#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_TRANSFER_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_TRANSFER_H_

// Tensors between host and device memory, on a stream, for the parts of a
// CUDA call that run on the host (an op without a GPU lowering runs its
// reference kernel on a host copy) and for copies into a caller's outputs.
// The caller has the device's primary context current. Strided tensors move
// as the byte span their elements cover, so views keep their strides.

#include "absl/status/statusor.h"
#include "core/allocator.h"
#include "core/tensor.h"

namespace guardjit {

// A host copy of device tensor `t` (its element span, with `t`'s strides).
// Waits for `stream` to reach the copy.
absl::StatusOr<Tensor> CudaToHost(const Tensor& t, void* stream);

// A copy of host tensor `t` on `device` with t's strides (its element span
// copied), from `allocator` (a CudaCachingAllocator's, bound to `stream`).
// Waits for the copy, so `t` may be released when this returns.
absl::StatusOr<Tensor> CudaToDevice(const Tensor& t, Device device,
                                    std::shared_ptr<Allocator> allocator,
                                    void* stream);

// Copies device tensor `src` into device tensor `dst` (same dtype and sizes,
// any non-overlapping strides) on `stream`: one cuMemcpyDtoDAsync when both
// are contiguous, else through a host copy of both spans (slow: it waits for
// the stream).
absl::Status CudaCopyInto(const Tensor& dst, const Tensor& src, void* stream);

// A contiguous device copy of device tensor `src`.
absl::StatusOr<Tensor> CudaContiguous(const Tensor& src,
                                      std::shared_ptr<Allocator> allocator,
                                      void* stream);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_TRANSFER_H_
