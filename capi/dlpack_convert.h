#ifndef GUARDJIT_CAPI_DLPACK_CONVERT_H_
#define GUARDJIT_CAPI_DLPACK_CONVERT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {

// DLPack element type of `dtype`; bool is GJ_DL_BOOL.
DLDataType ToDLDataType(DType dtype);

// Our element type for `type`, or INVALID_ARGUMENT naming `what`.
absl::StatusOr<DType> FromDLDataType(DLDataType type, absl::string_view what);

// A view of the host's tensor after checking every field: pointers, rank,
// sizes, element count and byte extent (OUT_OF_RANGE past int64), dtype,
// device (CPU; CUDAHost, pinned host memory, as CPU; CUDA with its ordinal;
// anything else INVALID_ARGUMENT), byte_offset and alignment. Errors start
// with `what`, e.g. "gj_function_call: input 1 ('b')".
absl::StatusOr<Tensor> BorrowDLTensor(const DLTensor* tensor,
                                      absl::string_view what);

// True when no two elements share memory: with dims sorted by stride, each
// stride exceeds the span of the dims below it (the test PyTorch uses), or,
// for layouts that rule cannot decide, no two element offsets are equal
// (checked exactly up to kMaxExactOverlapCheck elements; larger ones count as
// overlapping).
inline constexpr int64_t kMaxExactOverlapCheck = int64_t{1} << 20;
bool IsNonOverlapping(const Tensor& tensor);

// Hands a contiguous tensor that owns its storage to the host (a CUDA
// tensor as kDLCUDA memory of its device). The returned
// tensor keeps the storage alive until its deleter runs.
DLManagedTensor* ExportDLManagedTensor(Tensor tensor);

}  // namespace guardjit::capi

#endif  // GUARDJIT_CAPI_DLPACK_CONVERT_H_
