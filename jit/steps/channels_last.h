#ifndef GUARDJIT_JIT_STEPS_CHANNELS_LAST_H_
#define GUARDJIT_JIT_STEPS_CHANNELS_LAST_H_

// Channels-last activations around oneDNN convolutions (onednn_conv.h).
//
// oneDNN's direct convolutions read and write [N, spatial..., C] (nhwc).
// Kept as the graph's contiguous [N, C, spatial...], every activation would
// be reordered on its way into a convolution and transposed by the epilogue
// on its way out: two passes over it per layer. So, as ORT keeps NCHWc and
// Inductor channels-last between convolutions, the activations of a host
// plan with float32 convolutions on oneDNN are given channels-last memory
// when the scheduler materializes them (Schedule's `channels_last`): the
// values connected to a convolution through kernels (an epilogue, a
// pooling, a residual add) whose every reader follows strides, i.e. not
// graph outputs, views, or extern steps other than a convolution's input.
// A convolution then reads its input in place, and the kernels storing
// channels-last values loop with channels innermost.

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/graph.h"
#include "jit/lowering/lowering.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

// Per lowered value of `lowered` (lowered from `graph`): whether it should
// be laid out channels last if it is given memory. All false unless the
// graph has a float32 convolution oneDNN may run. The results of those
// convolutions are among them (their conv steps' epilogues store them at
// the strides LayOutConvResults gives), except those of the nodes in
// `contiguous_results`. The nodes in `pools` (pool steps: pool_step.h) read
// their input and store their result at any strides, as a convolution.
std::vector<bool> PreferChannelsLast(
    const Graph& graph, const LoweredGraph& lowered,
    const absl::flat_hash_set<int>& contiguous_results = {},
    const absl::flat_hash_set<int>& pools = {});

// Gives the flagged convolution results (buffers of extern outputs) their
// channels-last strides, in their values (which kernels read them through)
// and slots (which their conv steps store them at). Before Schedule.
void LayOutConvResults(LoweredGraph& lowered,
                       const std::vector<bool>& channels_last);

// The nodes whose results LayOutConvResults laid out but which stayed eager
// steps after FuseConvSteps (their reference kernels write contiguous
// results): the plan is to be made again with them in `contiguous_results`.
// The pool steps' nodes (`pools`) store at their slots' strides.
absl::flat_hash_set<int> StridedResultsLeftEager(
    const Plan& plan, const absl::flat_hash_set<int>& pools = {});

// Orders the outer loops of `plan`'s kernels (a host plan after
// FuseConvSteps) for their stores: channels innermost for a kernel storing
// only channels-last values (a oneDNN convolution's epilogue then also
// reads its result along channels), else channels first for a oneDNN
// convolution's epilogue (whose first loop, which the pool splits, would
// otherwise be a batch of 1).
void OrderChannelsLastLoops(Plan& plan);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_CHANNELS_LAST_H_
