#ifndef GUARDJIT_JIT_LLVM_COLUMN_REDUCTIONS_H_
#define GUARDJIT_JIT_LLVM_COLUMN_REDUCTIONS_H_

#include "jit/lowering/loop_ir.h"

namespace guardjit {

// Column reductions (jit/llvm/llvm_codegen.cc emits them): a kernel whose
// reductions read along its last outer loop (mean over dim 1 of [B, T, D]: each
// output sums T values D apart; an embedding bag gathers whole rows) runs its
// reductions one element per outer point, none of them contiguous, and gathers
// per element. Emitted with the last outer loop innermost in every stage (each
// local an array over it), the reads are contiguous vectors and a gather's
// index is read once per row. Taken when:
//  - there are at least two outer loops (the first is the runner's range),
//    the last of a constant extent, times the kernel's locals at most 8192
//    (the per-column arrays);
//  - every stage is a sum, max or min over its own loops of a float32,
//    float64, int32 or int64 value (no side stores), or a store of one
//    element per outer point;
//  - some reduction reads memory contiguous along the last loop that moves
//    by another stride along the reduction's innermost loop (or gathers rows
//    whose base moves along the last loop), and no reduction reads memory
//    contiguous along its innermost loop (a layer norm over an embedding's
//    rows stays a row reduction).
// Sums accumulate per column in double (floats) or their own type; max and
// min propagate NaN, as the eager kernels do.
bool ColumnReductions(const Kernel& k);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_COLUMN_REDUCTIONS_H_
