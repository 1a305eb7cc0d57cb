#ifndef GUARDJIT_JIT_CUDA_CUDA_ONLINE_SOFTMAX_H_
#define GUARDJIT_JIT_CUDA_CUDA_ONLINE_SOFTMAX_H_

// Finds the softmax/log_softmax pattern in a kernel's stages, for the CUDA C
// generator (cuda_codegen.h) to compute the row's max and its sum of
// exponentials in one pass (online: the sum rescales by exp(m_old - m_new)
// whenever the running max grows) instead of one pass each:
//   stage i:   local a = max(V) over loops L;
//   stage i+1: local b = sum(exp(W - a)) over the same loops L, W the same
//              expression as V.
// Either stage may also store the values it reduces for a later store to
// read back (fusion's ReuseReducedValues: log_softmax's x, softmax's
// exp(x - max)); then every read of that buffer up to a later store over L
// that overwrites it must be at its index, over L.
// The rewrite moves the stored values back into the later stages (they
// recompute V or exp(W - a) from the inputs and the final max instead of
// reading them back) and drops the stores: the row is read twice (max and
// sum together, then the output) instead of three times, and no
// intermediate is written or read back.

#include <vector>

#include "jit/lowering/loop_ir.h"

namespace guardjit {

struct OnlineSoftmaxPlan {
  // The kernel's stages, rewritten as above where fused.
  std::vector<Stage> stages;
  // fused[i]: stages i (max) and i + 1 (sum) run as one online pass.
  std::vector<bool> fused;
};

OnlineSoftmaxPlan PlanOnlineSoftmax(const Kernel& kernel);

// The expressions compute the same value: the same tree of operations,
// loads, constants and locals (shared nodes or copies).
bool SameValue(const ValueExpr& a, const ValueExpr& b);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_ONLINE_SOFTMAX_H_
