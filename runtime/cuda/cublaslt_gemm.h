#ifndef GUARDJIT_RUNTIME_CUDA_CUBLASLT_GEMM_H_
#define GUARDJIT_RUNTIME_CUDA_CUBLASLT_GEMM_H_

// One matrix product on a CUDA device through cuBLASLt (cublaslt_api.h):
//   D = act(alpha * A @ B + beta * C + bias)
// over row-major operands with any strides cuBLASLt can read (one unit
// stride per matrix: a transposed operand is a layout attribute, not a
// copy), batched with per-operand batch strides (0 broadcasts), with
// cuBLASLt's fused bias/ReLU/GELU epilogues.
//
// cuBLASLt is column-major; a row-major D = A @ B is the column-major
// D^T = B^T @ A^T, so B is passed as cuBLASLt's A and A as its B, and the
// bias (one value per column of D) is cuBLASLt's per-row bias of D^T.
//
// One CublasLtGemm per device holds the cublasLt handle (created in the
// device's primary context) and the matmul descriptors, matrix layouts and
// heuristic's algorithm per problem (dtype, extents, strides, epilogue,
// pointer alignment): a call whose problem was seen before creates no
// descriptor and asks no heuristic. The workspace the algorithm asks for
// comes from the call's allocator (stream-ordered: it is released when Run
// returns, and reused by the stream's next work after the matmul), or, for
// a captured graph, from the caller (RunWithWorkspace).

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/allocator.h"
#include "core/dtype.h"
#include "runtime/cuda/cublaslt_api.h"

namespace guardjit {

class CudaDevice;

// cuBLASLt's fused activations. kGeluTanh is GELU's tanh approximation
// (CUBLASLT_EPILOGUE_GELU), which aten.gelu computes for approximate='tanh'.
enum class GemmActivation { kNone, kRelu, kGeluTanh };

// A row-major matrix in device memory: element (i, j) of batch b at
// data + b * batch_stride + i * row_stride + j * col_stride (in elements).
struct GemmMatrix {
  const void* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
  int64_t batch_stride = 0;
};

struct CublasLtGemmArgs {
  DType dtype = DType::kFloat32;  // float32, float64, float16 or bfloat16
  int64_t batch = 1, m = 0, n = 0, k = 0;  // all >= 1
  GemmMatrix a;                            // [m, k]
  GemmMatrix b;                            // [k, n]
  GemmMatrix d;  // [m, n], written; its col_stride must be 1
  double alpha = 1;
  double beta = 0;
  GemmMatrix c;                // [m, n], read when beta != 0; col_stride 1
  const void* bias = nullptr;  // n contiguous values, added to every row
  GemmActivation activation = GemmActivation::kNone;
};

class CublasLtGemm {
 public:
  // The device's GEMM runner, created on the first call (cublasLtCreate in
  // the primary context). UNAVAILABLE without cuBLASLt. Thread-safe.
  static absl::StatusOr<CublasLtGemm*> ForDevice(const CudaDevice& device);

  // Whether cuBLASLt reads a [rows, cols] matrix with these strides as is
  // (one of them 1, the other at least the extent it steps over; size-1
  // dims take any stride). Operands for which it is false need a
  // contiguous copy first.
  static bool ReadsInPlace(int64_t rows, int64_t cols, int64_t row_stride,
                           int64_t col_stride);

  // Enqueues the product on `stream` (a CUstream; null = the legacy default
  // stream), with the device's primary context current. INVALID_ARGUMENT
  // for operands ReadsInPlace refuses or a D whose col_stride is not 1;
  // cuBLASLt's own errors as CublasLtStatus describes them.
  absl::Status Run(const CublasLtGemmArgs& args, void* stream,
                   Allocator& workspace) const;

  // For a stream being captured into a CUDA graph (runtime/cuda/
  // cuda_graph.h), where nothing may be allocated and the workspace's
  // address is baked into the graph: the workspace `args`' algorithm needs
  // (preparing the problem if new), and Run with the caller's `workspace`
  // of `workspace_bytes` (FAILED_PRECONDITION if smaller than that).
  absl::StatusOr<size_t> WorkspaceBytes(const CublasLtGemmArgs& args) const;
  absl::Status RunWithWorkspace(const CublasLtGemmArgs& args, void* stream,
                                void* workspace, size_t workspace_bytes) const;

  // Problems whose descriptors and algorithm are cached (for tests).
  int64_t cached_problems() const;

 private:
  struct Problem;  // descriptors, layouts and algorithm of one problem
  using Key = std::array<int64_t, 23>;  // see MatrixField in the .cc

  CublasLtGemm(const CublasLtApi* api, const CudaDevice* device,
               cublasLtHandle_t handle)
      : api_(api), device_(device), handle_(handle) {}
  absl::StatusOr<std::shared_ptr<Problem>> Prepare(
      const Key& key, const CublasLtGemmArgs& args) const;
  // The problem of `args` (its key, then Prepare).
  absl::StatusOr<std::shared_ptr<Problem>> ProblemFor(
      const CublasLtGemmArgs& args) const;
  // cublasLtMatmul of `args` on `stream` with `space` as its workspace.
  absl::Status Enqueue(Problem& problem, const CublasLtGemmArgs& args,
                       void* stream, void* space) const;

  const CublasLtApi* api_;
  const CudaDevice* device_;
  cublasLtHandle_t handle_;
  mutable std::mutex mu_;
  mutable absl::flat_hash_map<Key, std::shared_ptr<Problem>> problems_;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUBLASLT_GEMM_H_
