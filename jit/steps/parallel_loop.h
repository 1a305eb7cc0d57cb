#ifndef GUARDJIT_JIT_STEPS_PARALLEL_LOOP_H_
#define GUARDJIT_JIT_STEPS_PARALLEL_LOOP_H_

// The host runner splits a kernel's first outer loop across its thread pool
// (jit/steps/kernel_steps.cc). A result with leading dims of size one (a
// batch of one: GELU over [1, 64, 1024]) puts a loop of one iteration there,
// and the whole kernel runs on one thread.

#include "jit/lowering/loop_ir.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

// Moves `kernel`'s leading outer loops of constant extent 1 behind its first
// other outer loop (the same iterations in the same memory order) when the
// runner then splits that loop across threads (StaticSplitOf). Leaves every
// other kernel alone: a kernel too small to split, one whose extents are
// symbolic, and one whose outer loops all have extent 1. (A rotated kernel's
// loop variable is the runner's range, not a constant loop: LLVM then finds
// fewer addresses affine, and a small kernel that gains no thread would only
// lose: a masked softmax's where over [1, 8, 64, 64] ran 4x slower so.)
void LeadWithParallelLoop(Kernel& kernel);

// LeadWithParallelLoop on the plan's plain kernel steps; a GEMM or
// convolution step's epilogue keeps the loop order its step expects.
void LeadWithParallelLoops(Plan& plan);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_PARALLEL_LOOP_H_
