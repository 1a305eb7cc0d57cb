#ifndef GUARDJIT_JIT_STEPS_PACKED_GEMM_H_
#define GUARDJIT_JIT_STEPS_PACKED_GEMM_H_

// Float32 matrix products of few rows whose second operand is a graph
// constant (a served model's linear layers: addmm(bias, x, W^T) at a batch
// of 1-255 rows) on register-tiled micro-kernels (loop_ir.h's PackedGemm):
// compiled into the library per instruction set where the host has one
// (packed_gemm_kernels.h), else generated with LLVM for the product's
// static shape (jit/llvm/packed_gemm_codegen.h); the weight packed once,
// when the program is built, into the column panels the kernels read. BLAS
// packs b again on every call, and oneDNN 2.6 has a packed weight layout only
// on AVX-512 (brgemm; on AVX2 its gemm:jit packs per call like BLAS) and
// generates its kernels at a process's first product (26 ms measured). The
// ahead-of-time kernels compile nothing; generated code is compiled with the
// program's kernels and cached with them (memory, disk, Redis), so a warm start
// loads it.
//
// The tile shape is chosen per product from the host's vector registers
// by a cost model of a k step (ChoosePackedGemm). The product lands in
// scratch as the contiguous [M, N] matrix (or straight in the step's output
// for a bare product) and the epilogue kernel runs over it as after BLAS.
// With several pool threads, a product of at least a million multiply-adds
// is split by panels (column ranges) across the pool.
//
// Planned only on host plans, for static float32 products, not batched;
// GJ_PACKED_GEMM=0 leaves them to oneDNN or BLAS.

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "core/allocator.h"
#include "core/graph.h"
#include "jit/llvm/packed_gemm_codegen.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/gemm_step.h"
#include "jit/steps/packed_gemm_kernels.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/step_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Whether GJ_PACKED_GEMM is unset or anything but "0".
bool PackedGemmEnabled();

// The ahead-of-time kernel `g` runs on (packed_gemm_kernels.h), or null
// where it runs on LLVM code generated for its shape (g.ahead_of_time
// unset: PlanPackedGemm found GJ_PACKED_GEMM=llvm, or a host or tile the
// ahead-of-time kernels do not cover). The backend compiles a packed
// product's kernel only when this is null.
PackedGemmKernel AheadOfTimePackedGemm(const PackedGemm& g);

// The blocking of an [m, k] @ [k, n] product for `target`: the tile (rows
// by vectors) that costs the fewest cycles by a model of one k step
// (multiply-adds and loads at two per cycle, at least a multiply-add's
// latency), whole tiles and the row tail counted, columns past n wasted;
// k blocks whose panel rows stay in L1 when more than one tile reuses them.
PackedGemm ChoosePackedGemm(int64_t m, int64_t n, int64_t k, int64_t lda,
                            int64_t a_col_stride, double alpha,
                            const VectorTarget& target);

// Plans `gemm` as a packed product: what GemmStep::packed holds, or
// UNIMPLEMENTED saying why not. Whether it runs ahead of time is decided
// here, once (PackedGemm::ahead_of_time), and read by the backend, the step
// and explain.
absl::StatusOr<GemmStep::Packed> PlanPackedGemm(const GemmStep& gemm,
                                                const Plan& plan);

// Packs b ([k, n] with strides `b_strides`, float32) into `g`'s panels:
// g.panels() * g.k * g.panel_width floats at `out`, zeros past column n.
void PackGemmPanels(const PackedGemm& g, const float* b,
                    const int64_t b_strides[2], float* out);

// The floats of `g`'s packed weight (PackGemmPanels' `out`).
size_t PackedGemmFloats(const PackedGemm& g);

// The runner of a plan step whose gemm has `packed` set: `gemm` is the
// packed kernel's generated code, null where it runs on an ahead-of-time
// kernel (AheadOfTimePackedGemm), `epilogue` the step's kernel (null where
// it never runs: a bare product). The packed weight comes from `allocator` (a
// program's ConstantArena, core/constant_arena.h), or when it is null from
// a block of its own.
absl::StatusOr<std::unique_ptr<const StepRunner>> MakePackedGemmStep(
    const PlanStep& step, const Graph& graph, HostKernelFn gemm,
    HostKernelFn epilogue, std::shared_ptr<ThreadPool> pool,
    std::shared_ptr<Allocator> allocator = nullptr);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_PACKED_GEMM_H_
