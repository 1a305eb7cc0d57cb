#ifndef GUARDJIT_JIT_SCHEDULE_SPLIT_REDUCTION_H_
#define GUARDJIT_JIT_SCHEDULE_SPLIT_REDUCTION_H_

// Split reductions (issue #19), as Inductor splits them: a reduction kernel
// with few outer points over a long reduced extent (sum of a 64M-element
// tensor, sum(expand(x, [2^20, 2^20]))) is one chunk of the runner's
// parallel loop, so it runs on one thread and no cancel flag or deadline can
// stop it. SplitReduction rewrites it as two kernels in loop IR: the first
// reduces P chunks of the reduced extent into partials, its outer loop over
// the P chunks first (so the runner runs them in parallel and checks the
// call's stop conditions between them); the second combines the P partials
// of each outer point and performs the original kernel's row stores (mean's
// division, the cast to the result dtype). Both backends render the two
// kernels like any other.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/lowering/lowering.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

struct SplitKernels {
  KernelStep partials;      // outer loop over the P chunks, then the old outer
  KernelStep combine;       // the old outer loops, reducing the P partials
  std::string description;  // "reduction 'r' split into 64 partials"
};

// The split of `step`, whose reduction stages compute the values labelled
// `reductions` (for the description), or nullopt where the kernel is not
// worth splitting or cannot be split:
//  - only reduce stages whose combine is sum, prod, max or min (any/all are
//    max/min over bool) are split: argmax/argmin would need the partials'
//    positions too;
//  - every reduce stage must be independent of the others' results: var,
//    layer_norm and softmax reduce a value computed from an earlier stage's
//    local (the mean, the max), which a chunk does not know, so their two-pass
//    kernels stay unsplit;
//  - stores must be row stores (after the reductions, one per outer point):
//    a kernel that also stores over the reduced dims (softmax's output) is
//    not split;
//  - the outer extent must be a constant below kSplitMaxOuter (enough outer
//    points already give the runner chunks to share and to stop between);
//    a static reduced extent must be at least kSplitMinReduced elements per
//    outer point. A symbolic reduced extent is split with chunk sizes
//    computed per call, so a call with a short extent gets one partial.
// float32 sums accumulate in float64 in both kernels (the partials are
// float64): never less accurate than the unsplit kernel's float blocks.
// New slots (the partials) are appended to `slots`.
std::optional<SplitKernels> SplitReduction(
    const KernelStep& step, const std::vector<std::string>& reductions,
    std::vector<Slot>& slots);

// Whether Schedule splits reductions: yes unless the environment sets
// GJ_SPLIT_REDUCTIONS=0 (for measuring the unsplit plan).
bool SplitReductionsEnabled();

inline constexpr int64_t kSplitMaxOuter = 64;
inline constexpr int64_t kSplitMinReduced = int64_t{1} << 16;

}  // namespace guardjit

#endif  // GUARDJIT_JIT_SCHEDULE_SPLIT_REDUCTION_H_
