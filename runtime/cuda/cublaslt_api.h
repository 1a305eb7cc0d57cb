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
// Without the CUDA headers the table is empty and Get() is UNAVAILABLE.

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cuda_config.h"

#ifdef GUARDJIT_HAVE_CUDA_HEADERS
#include <cublasLt.h>
#else
typedef int cublasStatus_t;
typedef struct cublasLtContext* cublasLtHandle_t;
#endif

namespace guardjit {

#define GJ_CUBLASLT_FUNCTIONS(X)          \
  X(cublasLtGetStatusName)                \
  X(cublasLtGetStatusString)              \
  X(cublasLtGetVersion)                   \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

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

#ifdef GUARDJIT_HAVE_CUDA_HEADERS
#define GJ_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  GJ_CUBLASLT_FUNCTIONS(GJ_CUBLASLT_MEMBER)
#undef GJ_CUBLASLT_MEMBER
#endif

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
    const cublasStatus_t gj_cublaslt_status_ = (expr);               \
    if (gj_cublaslt_status_ != 0) {                                  \
      return ::guardjit::CublasLtStatus(gj_cublaslt_status_, #expr); \
    }                                                                \
  } while (0)

#endif  // GUARDJIT_RUNTIME_CUDA_CUBLASLT_API_H_
