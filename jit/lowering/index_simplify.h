#ifndef GUARDJIT_JIT_LOWERING_INDEX_SIMPLIFY_H_
#define GUARDJIT_JIT_LOWERING_INDEX_SIMPLIFY_H_

// Index arithmetic simplified with the loops' ranges. Lowering composes a
// view's index from the flat position of the element it reads
// ((i0*2048 + i2*64 + i1) // 64 % 32 for a gather viewed back to
// [8, 32, 64]); knowing 0 <= i1 < 64 and 0 <= i2 < 32, that is i2. Left as
// written, every element pays integer divisions, and the backends see no
// affine index (no contiguous vectors, no column reductions).
//
// Exact for floor division and modulo by positive constants (IndexExpr's):
//   (c*q + r) // c = q + r // c, and r // c = m when r's range lies in
//   [c*m, c*m + c); (c*q + r) % c = r % c, and r % c = r when r's range lies
//   in [0, c); (x // a) // b = x // (a*b); max and min of disjoint ranges.
// A loop variable ranges over [0, extent) for a constant extent; sizes and
// symbolic extents are unbounded, so a dynamic kernel keeps what depends on
// them.

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit {

// Constant extents of loop variables, by variable.
using LoopExtents = absl::flat_hash_map<int, int64_t>;

// `e` simplified, its loop variables in [0, extent) per `extents` (a
// variable without one is only known to be >= 0).
IndexExpr SimplifyIndex(const IndexExpr& e, const LoopExtents& extents);

// Every index of `kernel` (loads, gathers' bases, index values, stores)
// simplified with the ranges of the loops around it.
void SimplifyIndices(Kernel& kernel);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LOWERING_INDEX_SIMPLIFY_H_
