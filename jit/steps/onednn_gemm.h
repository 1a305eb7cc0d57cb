#ifndef GUARDJIT_JIT_STEPS_ONEDNN_GEMM_H_
#define GUARDJIT_JIT_STEPS_ONEDNN_GEMM_H_

// Float32 matrix products of few rows whose second operand is a graph
// constant (a served model's linear layers: addmm(bias, x, W^T) at a batch
// of 1-255 rows) on oneDNN's matmul, with the weight reordered once, when
// the program is built, into the layout oneDNN's kernel reads (measured at
// 8x784x512: 2.6x faster than cblas_sgemm, which packs b on every call).
// The product lands in scratch as the contiguous [M, N] matrix BLAS would
// write, and the step's epilogue kernel (bias, activation, the consumers
// fused into it) runs over it unchanged. With several pool threads a large
// enough product is cut into ranges of rows, each a primitive writing its
// dense share of the product and all reading the one packed weight (its
// layout does not depend on the row count), run in parallel on the pool
// with one OpenMP thread each (onednn_conv_step.cc says why). Column ranges
// would leave each part's result strided, which oneDNN 2.6 runs on its
// slower gemm:jit instead of brgemm.
//
// Small batched products of two values (bmm in attention spelled out:
// [8, 64, 32] @ [8, 32, 64] per GPT-2 block) run on oneDNN's brgemm batched
// matmul too, on dense copies of strided operands, nothing packed: one
// primitive over the batch, or its entries split across the pool. OpenBLAS
// takes 150 us for that product at one thread (eight sgemm calls, each
// packing both operands), oneDNN's brgemm 21 us (measured on AVX-512,
// 2026-11-30). Only brgemm: oneDNN's other matmul, gemm:jit, generates its
// kernels at a process's first use (26 ms); oneDNN 2.6 has brgemm on
// AVX-512 only, so elsewhere these stay BLAS.
//
// Planned only on host plans, for static products (no size symbols), alpha
// any, and never on oneDNN's reference implementations; everything else
// stays BLAS (gemm_step.h). Unbatched products are planned as packed
// products (packed_gemm.h) first: oneDNN takes them with GJ_PACKED_GEMM=0.
// GJ_ONEDNN=0 keeps BLAS for all.

#include <memory>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/gemm_step.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/step_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Plans `gemm` on oneDNN: what GemmStep::onednn holds (weight_node -1 for a
// batched product of two values), or UNIMPLEMENTED saying why it stays
// BLAS.
absl::StatusOr<GemmStep::OneDnn> PlanOneDnnGemm(const GemmStep& gemm,
                                                const Plan& plan);

// The runner of a plan step whose gemm has `onednn` set, with `fn` (the
// step's kernel) as its epilogue.
absl::StatusOr<std::unique_ptr<const StepRunner>> MakeOneDnnGemmStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_ONEDNN_GEMM_H_
