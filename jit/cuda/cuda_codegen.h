#ifndef GUARDJIT_JIT_CUDA_CUDA_CODEGEN_H_
#define GUARDJIT_JIT_CUDA_CUDA_CODEGEN_H_

// The GPU backend's code generator: CUDA C from the same loop IR the CPU JIT
// compiles (no second lowering, no second fusion). One translation unit per
// cache entry holds all its kernels; NVRTC compiles it for the device
// (nvrtc_compiler.h) and the SIMT emulator (runtime/simt/simt_emulator.h)
// runs it on the host in tests and `guardjit compile --emulate`.
//
// Mapping. A kernel's outer points are its "rows"; a group of threads
// computes one row at a time, grid-striding over the rows, and runs the
// row's stages in order, its threads striding over each stage's (flattened)
// inner loops:
// - kRowPerThread: a group is one thread (pointwise kernels, whose stages
//   have no inner loops, and reductions over rows of at most
//   kSerialRowLimit elements): no synchronization at all;
// - kRowPerWarp: rows up to kWarpRowLimit elements; reductions combine
//   through warp shuffles, stages are separated by __syncwarp;
// - kRowPerBlock: longer or symbolic rows; reductions combine through warp
//   shuffles and shared memory, stages are separated by __syncthreads.
// Every thread of a group runs the same number of row iterations, so the
// barriers are uniform. Floating sums add blocks of kSumBlock of a thread's
// elements in the compute dtype and the blocks (and the threads' partial
// sums) in double, which bounds the error as the CPU kernels' blocked sums
// do (README "Numerics"). Gathers check their index as the CPU kernels do;
// a failed check ORs its bit into a device flag (the kernel's last
// parameter) and reads zero.
//
// Index width. A kernel computes its loop variables and index arithmetic in
// `int` when interval arithmetic (cuda_index_range.h) proves every index,
// offset, loop extent and flattened loop count within kIndex32Limit: always
// decidable for static sizes; for symbolic ones only with
// CudaCodegenOptions::size_bounds (the entry's guards' maxima), else
// `long long`. Size parameters stay `long long` arguments and narrow in the
// body (s<i>i); the row loop runs in unsigned with its stride clamped to the
// row count, so no launch can wrap it; a gather compares its loaded int64
// index in 64 bits and narrows it only on the in-range path. The kernel's
// first line says which width it uses (CudaKernelInfo::index32).
//
// Online softmax. A max reduction followed by a sum of exp(x - max) over the
// same row and the same x (softmax, log_softmax, logsumexp-like chains;
// cuda_online_softmax.h) runs as one pass: each thread keeps a running max m
// and a sum relative to it (s = s * exp(m_old - m_new) when m grows, then
// s += exp(x - m)), and partials combine by the same rule, a partial already
// at the combined max taken unscaled so -inf partials never compute
// exp(-inf - -inf). A row whose max ends -inf gets the sum NaN (softmax of
// an all -inf row is NaN, as in torch); a NaN becomes the max and poisons
// the sum. Values the stages stored for the output to read back (x for
// log_softmax, exp(x - max) for softmax) are recomputed by the output stage
// instead, so a row is read twice and written once
// (CudaKernelInfo::online_softmax_passes counts the fused pairs).
//
// Vectors. A pointwise kernel (single-store stages, no inner loops) whose
// loads and stores are all contiguous along its last outer loop (index =
// base + i, base a multiple of the width; loads may also not use i, and
// gathers stay scalar), with that loop's static extent divisible by the
// width, also gets a vector path (cuda_vectorize.h): a thread computes
// `width` consecutive points, 16 bytes of its widest buffer (4 float32, 2
// float64, 8 float16), loading and storing gj_vec<T, width> (alignas their
// size). No alignment is guaranteed, so the kernel tests every vector
// buffer's pointer at entry (one uniform branch) and otherwise runs the
// scalar loop; CudaKernelInfo::rows then counts vectors and the scalar path
// grid-strides over the elements.
//
// The generated code stays inside the subset the SIMT emulator models:
// static __shared__ arrays, __syncthreads/__syncwarp, __shfl_xor_sync over
// full warps, atomicOr, libm names, __half/__nv_bfloat16 conversions.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit {

struct CudaCodegenOptions {
  // Threads per block (a multiple of 32, at most 1024).
  int block_threads = 256;
  // Prefix of the kernels' names: "<prefix><i>".
  std::string name_prefix = "gj_kernel_";
  // The largest value each size parameter can take, when the entry's guards
  // bound it (a missing or negative entry: unbounded). Kernels whose index
  // math provably fits 32 bits compute it in int (CudaKernelInfo::index32).
  std::vector<int64_t> size_bounds;
};

// How a generated kernel is launched.
struct CudaKernelInfo {
  enum class Mapping { kRowPerThread, kRowPerWarp, kRowPerBlock };
  std::string name;
  Mapping mapping = Mapping::kRowPerThread;
  int block_threads = 256;
  // Rows one block computes at a time (block_threads, block_threads / 32 or
  // 1 by mapping).
  int rows_per_block = 1;
  // The number of rows (outer points), over the kernel's size parameters.
  IndexExpr rows;
  // Parameters in order: one pointer per buffer, one `long long` per size
  // parameter, then, when has_fault_flag, the `unsigned long long*` flag
  // that failed index checks OR their bits into.
  int num_buffers = 0;
  int num_size_params = 0;
  bool has_fault_flag = false;
  // Loop variables and index arithmetic are `int` (every index, offset and
  // loop count provably within kIndex32Limit), else `long long`.
  bool index32 = false;
  // Softmax/log_softmax rows whose max and sum of exponentials run as one
  // online pass (cuda_online_softmax.h).
  int online_softmax_passes = 0;
  // Pointwise kernels: points per 16-byte vector on the aligned path
  // (cuda_vectorize.h), whose rows `rows` then counts; 1: scalar only.
  int vector_width = 1;

  // Blocks to launch for the sizes `sizes`: enough to give every group a
  // row, at most `max_blocks` (the rows are grid-strided beyond), at least 1.
  int64_t GridBlocks(absl::Span<const int64_t> sizes, int64_t max_blocks) const;
};

struct CudaModuleSource {
  std::string source;  // one translation unit, kernels with C linkage
  std::vector<CudaKernelInfo> kernels;  // in the order given
};

// Rows of at most this many elements are reduced by one thread; of at most
// kWarpRowLimit by a warp.
inline constexpr int64_t kSerialRowLimit = 16;
inline constexpr int64_t kWarpRowLimit = 1024;
// Floating sums add blocks of this many of a thread's elements in float
// (the CPU kernels' 2048-element blocks spread over 16 vector lanes: the
// same error bound, README "Numerics").
inline constexpr int64_t kCudaSumBlock = 128;

// The CUDA C of `kernels`, the i-th named options.name_prefix + i. Fails
// (UNIMPLEMENTED, naming the construct) on loop IR it has no lowering for.
absl::StatusOr<CudaModuleSource> RenderCudaModule(
    absl::Span<const Kernel* const> kernels,
    const CudaCodegenOptions& options = {});

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_CODEGEN_H_
