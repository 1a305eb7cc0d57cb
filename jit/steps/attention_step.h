#ifndef GUARDJIT_JIT_STEPS_ATTENTION_STEP_H_
#define GUARDJIT_JIT_STEPS_ATTENTION_STEP_H_

// aten.scaled_dot_product_attention in a compiled host program: one step
// that runs, for each batch entry (the dims before the last two) and each
// block of query rows, the scores of the block (BLAS, q @ k^T into
// per-thread scratch), their scale, mask and safe softmax in place
// (vectorized exp), and the block's output (BLAS, P @ v) straight into the
// result. Where oneDNN has a fast matmul for a block's products (brgemm on
// AVX-512 and AVX2), it computes them instead of BLAS: at attention's sizes
// OpenBLAS's per-call packing dominates. The score matrix never exists in memory as a whole: a block holds
// at most kScoreBlockFloats scores (whole rows over the keys, so its softmax
// needs no online rescaling). Blocks run in parallel on the program's pool,
// OpenBLAS held at one thread. The reference kernel (runtime/kernels/
// attention.cc) computes the same in double.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "runtime/program/program.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Scores per block of query rows (64 KiB of float32: L2-resident).
inline constexpr int64_t kScoreBlockFloats = int64_t{1} << 14;

// Whether node `node` of a host program of `num_symbols` symbols runs as an
// attention step: scaled_dot_product_attention of float32 operands (a bool
// or float32 mask) in a static program. Others run the reference kernel.
bool TakesAttentionStep(const Graph& graph, const GraphMeta& metas, int node,
                        int num_symbols);

// The step of such a node; `args` pairs each graph value it reads with where
// it lives, as for an eager step (runtime/program/eager_step.h).
absl::StatusOr<ProgramStep> MakeAttentionStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_ATTENTION_STEP_H_
