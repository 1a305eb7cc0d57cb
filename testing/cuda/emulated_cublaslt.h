#ifndef GUARDJIT_TESTING_CUDA_EMULATED_CUBLASLT_H_
#define GUARDJIT_TESTING_CUDA_EMULATED_CUBLASLT_H_

// A software cuBLASLt behind the CublasLtApi table: what tests install with
// CublasLtApi::InstallForTesting beside the emulated driver
// (emulated_driver.h), whose "device memory" is host memory, so device GEMM
// steps run in CI through the same calls they make on a GPU.
//
// What it models, on the calling thread when cublasLtMatmul is called (the
// stream is not waited on: the emulated device runs everything at enqueue):
// column-major layouts (CUBLASLT_ORDER_COL only) with rows, cols, ld, batch
// count and strided batch offset (0 broadcasts one matrix over the batch);
// TRANSA/TRANSB; data types CUDA_R_32F, CUDA_R_64F, CUDA_R_16F and
// CUDA_R_16BF with a float (double for 64F) scale type and accumulation;
// alpha and beta as host pointers; C read where beta != 0; the epilogues
// DEFAULT, RELU, BIAS, RELU_BIAS, GELU and GELU_BIAS (GELU is the tanh
// approximation, as cuBLASLt's) with the bias vector (length rows of D, the
// data type of D) at CUBLASLT_MATMUL_DESC_BIAS_POINTER. Heuristics return
// one algorithm that asks for a workspace of min(4 KiB, the preference's
// maximum), and cublasLtMatmul checks the workspace it gets against that.
// Shapes that do not fit (op(A) not rows(D) x k, mismatched batch counts,
// ld < rows) are CUBLAS_STATUS_INVALID_VALUE; other attributes are
// CUBLAS_STATUS_NOT_SUPPORTED, so a caller relying on one fails loudly.
//
// It counts what tests check (and fails matmuls on request, for the error
// paths): handles, descriptors and heuristic queries
// made (a descriptor cache hit makes none) and matmuls run.

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/cuda/cublaslt_api.h"

namespace guardjit {

class EmulatedCublasLt {
 public:
  // The process-wide table (created on the first call; never destroyed).
  static const CublasLtApi* Get();

  struct Counters {
    int64_t handles = 0;            // cublasLtCreate calls
    int64_t matmul_descs = 0;       // cublasLtMatmulDescCreate calls
    int64_t layouts = 0;            // cublasLtMatrixLayoutCreate calls
    int64_t heuristic_queries = 0;  // cublasLtMatmulAlgoGetHeuristic calls
    int64_t matmuls = 0;            // matmuls that ran (graph launches too)
    int64_t captured_matmuls = 0;   // cublasLtMatmul calls on a capturing
                                    // stream (recorded, not run)
    int64_t matmuls_reading_c = 0;  // those with beta != 0 (C read)
    double last_beta = 0;           // beta of the last matmul
    int last_epilogue = 0;          // cublasLtEpilogue_t of the last matmul
    void* last_stream = nullptr;    // the stream of the last matmul
  };
  static Counters counters();
  // Fault injection: the next `count` cublasLtMatmul calls return `status`
  // without computing anything.
  static void FailNextMatmuls(int count, cublasStatus_t status);
};

}  // namespace guardjit

#endif  // GUARDJIT_TESTING_CUDA_EMULATED_CUBLASLT_H_
