#ifndef GUARDJIT_JIT_STEPS_LAYER_NORM_STEP_H_
#define GUARDJIT_JIT_STEPS_LAYER_NORM_STEP_H_

// aten.native_layer_norm in a compiled host program as one step of the
// library's own (no compiled kernel): per row of the normalized dims, the
// mean and the biased variance in two passes as the loop IR's lowering
// computes them (jit/lowering/lowering_reductions.cc: float32 sums, rstd =
// 1 / sqrt(var + eps)), then y = (x - mean) * rstd * weight + bias, rows in
// parallel on the program's pool, each row's loops in the widest vectors
// the host has (AVX-512, AVX2, SSE2). A transformer has two or three per
// block; as kernels they were LLVM compiles of their own (about 7 ms each on
// the GPT-2-style model's first call), and the residual add a kernel fused
// into them now joins the product before it as that product's epilogue.
// The reference kernel (runtime/kernels) computes the same in double.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "runtime/program/program.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Whether node `node` of a host program of `num_symbols` symbols runs as a
// layer-norm step: native_layer_norm of a float32 input (weight and bias
// float32 or None) in a static program, unless GJ_LAYER_NORM_STEP=0. Others
// are lowered to loop IR (or run their reference kernel).
bool TakesLayerNormStep(const Graph& graph, const GraphMeta& metas, int node,
                        int num_symbols);

// The step of such a node; `args` pairs each graph value it reads with where
// it lives, as for an eager step (runtime/program/eager_step.h).
absl::StatusOr<ProgramStep> MakeLayerNormStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool);

// The rows of a layer norm, for tests: x is [rows, n] contiguous, y too;
// mean and rstd (each may be null) one float per row; weight and bias n
// floats or null.
void LayerNormRows(const float* x, const float* weight, const float* bias,
                   float eps, int64_t rows, int64_t n, float* y, float* mean,
                   float* rstd);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_LAYER_NORM_STEP_H_
