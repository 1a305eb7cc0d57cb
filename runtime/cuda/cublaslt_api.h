#ifndef GUARDJIT_RUNTIME_CUDA_CUBLASLT_API_H_
#define GUARDJIT_RUNTIME_CUDA_CUBLASLT_API_H_

// cuBLASLt, loaded at run time like the driver (see cuda_driver.h). GPU
// mm/bmm/addmm/linear go through it for its fused bias/ReLU/GELU epilogues;
// linking it would make every host carry a ~500 MB library it may not use.
//
// The first CublasLtApi::Get() dlopens libcublasLt.so.13 (then
// libcublasLt.so) from the loader's path, $CUDA_HOME/lib64,
// $CUDA_PATH/lib64 or /usr/local/cuda/lib64 and resolves the functions
// below. Loading needs no GPU; calling most of them does.
//
// Its types are declared in cublaslt_types.h and its signatures below, as
// CUDA 13's cublasLt.h declares them, so the build needs no CUDA headers.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cublaslt_types.h"

namespace guardjit {

// The cuBLASLt functions guardjit calls, one X(name, signature) each (the
// name is the symbol).
// clang-format off
#define GJ_CUBLASLT_FUNCTIONS(X) \
  X(cublasLtGetStatusName, const char*(cublasStatus_t)) \
  X(cublasLtGetStatusString, const char*(cublasStatus_t)) \
  X(cublasLtGetVersion, size_t()) \
  X(cublasLtCreate, cublasStatus_t(cublasLtHandle_t*)) \
  X(cublasLtDestroy, cublasStatus_t(cublasLtHandle_t)) \
  X(cublasLtMatmulDescCreate, cublasStatus_t(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t)) \
  X(cublasLtMatmulDescDestroy, cublasStatus_t(cublasLtMatmulDesc_t)) \
  X(cublasLtMatmulDescSetAttribute, cublasStatus_t(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t)) \
  X(cublasLtMatrixLayoutCreate, cublasStatus_t(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t)) \
  X(cublasLtMatrixLayoutDestroy, cublasStatus_t(cublasLtMatrixLayout_t)) \
  X(cublasLtMatrixLayoutSetAttribute, cublasStatus_t(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void*, size_t)) \
  X(cublasLtMatmulPreferenceCreate, cublasStatus_t(cublasLtMatmulPreference_t*)) \
  X(cublasLtMatmulPreferenceDestroy, cublasStatus_t(cublasLtMatmulPreference_t)) \
  X(cublasLtMatmulPreferenceSetAttribute, cublasStatus_t(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t)) \
  X(cublasLtMatmulAlgoGetHeuristic, cublasStatus_t(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*)) \
  X(cublasLtMatmul, cublasStatus_t(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t))
// clang-format on

// The loaded cuBLASLt: one function pointer per GJ_CUBLASLT_FUNCTIONS entry,
// all non-null. Immutable after loading.
struct CublasLtApi {
  // The process-wide table, loaded on the first call (thread-safe).
  // UNAVAILABLE when libcublasLt is not found (naming the libraries tried
  // and dlerror()) or lacks a function.
  static absl::StatusOr<const CublasLtApi*> Get();

  // Tests: makes Get() return `api` (a software cuBLASLt such as
  // EmulatedCublasLt's) for the rest of the process, whatever libcublasLt
  // says. Call before anything uses cuBLASLt: per-device handles and cached
  // descriptors keep the table they were made with.
  static void InstallForTesting(const CublasLtApi* api);

#define GJ_CUBLASLT_MEMBER(name, signature) \
  std::add_pointer_t<signature> name = nullptr;
  GJ_CUBLASLT_FUNCTIONS(GJ_CUBLASLT_MEMBER)
#undef GJ_CUBLASLT_MEMBER

  size_t version = 0;        // cublasLtGetVersion: 130000 + ... for 13.0.x
  std::string library_path;  // the libcublasLt the loader opened
};

// `what` failed with `status`: the message carries the status's name and
// string ("cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (...)"); OK for
// CUBLAS_STATUS_SUCCESS. ALLOC_FAILED is RESOURCE_EXHAUSTED, INVALID_VALUE
// INVALID_ARGUMENT, NOT_SUPPORTED and ARCH_MISMATCH UNIMPLEMENTED (a caller
// may fall back), anything else INTERNAL.
absl::Status CublasLtStatus(cublasStatus_t status, absl::string_view what);

}  // namespace guardjit

// Returns the cuBLASLt call's error, described by the call's text, from the
// enclosing function.
#define RETURN_IF_CUBLASLT_ERROR(expr)                               \
  do {                                                               \
    const ::guardjit::cublasStatus_t gj_cublaslt_status_ = (expr);   \
    if (gj_cublaslt_status_ != ::guardjit::CUBLAS_STATUS_SUCCESS) {  \
      return ::guardjit::CublasLtStatus(gj_cublaslt_status_, #expr); \
    }                                                                \
  } while (0)

#endif  // GUARDJIT_RUNTIME_CUDA_CUBLASLT_API_H_
