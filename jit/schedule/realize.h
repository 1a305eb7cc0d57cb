#ifndef GUARDJIT_JIT_SCHEDULE_REALIZE_H_
#define GUARDJIT_JIT_SCHEDULE_REALIZE_H_

// Which computed values get memory although no extern step, gather or
// output needs them. Fusion inlines pointwise values into every kernel that
// reads them; a value read by several others is then recomputed by each,
// and a chain of such values grows with every link: a transformer's
// residual stream (x + attn + mlp + attn + ...) was recomputed from the
// embedding gathers in every layer norm of every layer, each layer's
// kernels differed from the last's, and none compiled once for all layers.
// Like Inductor's realize heuristics, a pointwise value (or select) that
// two or more values read, and whose inlined expression reads
// kRealizeReads or more tensors, is stored once by the kernel computing it
// and read back by the kernels after it; a stored value counts as one read
// for the values built on it.

#include <vector>

#include "jit/lowering/lowering.h"

namespace guardjit {

inline constexpr int kRealizeReads = 3;

// Per lowered value: whether the scheduler gives it memory where it is
// computed.
std::vector<bool> SharedValuesToRealize(const LoweredGraph& graph);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_SCHEDULE_REALIZE_H_
