#ifndef GUARDJIT_JIT_SCHEDULE_REUSE_REDUCED_VALUES_H_
#define GUARDJIT_JIT_SCHEDULE_REUSE_REDUCED_VALUES_H_

#include "jit/lowering/loop_ir.h"

namespace guardjit {

// A store over the reduced dims that recomputes what an earlier reduction
// stage reduced (softmax: exp(x - max) summed, then divided by the sum) reads
// it back instead: the reduction also stores it into the store's buffer at
// the same index, which the store then overwrites. Not a reduction of a bare
// load (layer norm's sum of x): reading it again costs what reading the copy
// back does, and the copy's store comes on top (layer norm's kernels made 3
// reads and 2 writes of each row where 3 reads and 1 write do). A pass over
// a scheduled kernel (fusion.cc runs it on each kernel it builds).
void ReuseReducedValues(Kernel& k);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_SCHEDULE_REUSE_REDUCED_VALUES_H_
