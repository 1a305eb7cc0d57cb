#ifndef GUARDJIT_JIT_STEPS_POOL_STEP_H_
#define GUARDJIT_JIT_STEPS_POOL_STEP_H_

// A convnet's poolings in a compiled host program as steps of the library's
// own (no compiled kernel): max_pool2d_with_indices whose indices nothing
// reads (torch.export's F.max_pool2d, ResNet's stem) and mean over the two
// spatial dims of an [N, C, H, W] tensor (adaptive_avg_pool2d to 1x1 as
// torch.export decomposes it: the global average pool before a classifier).
// As kernels they were an LLVM compile each (about 20 ms of a first call
// apiece); between oneDNN convolutions, whose results are in memory anyway,
// the loops below do the same work. They read their input at any strides
// and write their result at the strides the plan gives its slot, so
// activations stay channels last around them (channels_last.h); with
// channels innermost in both, the loops run over channels in the widest
// vectors the host has (AVX-512, AVX2, SSE2), rows of the output split
// across the program's pool.
//
// Semantics are the lowering's (jit/lowering/lowering_pooling.cc,
// lowering_reductions.cc) and the reference kernels':
//   - max pool: each output the maximum of the window's taps inside the
//     input, NaN-propagating (a NaN tap makes the output NaN);
//   - mean: the float32 sum of the plane divided by H * W.
// Taken where the graph has a float32 convolution oneDNN may run (a convnet,
// where a pooling's input is a convolution's result in memory), unless
// GJ_POOL_STEP=0; elsewhere a pooling fuses with its producers as loop IR.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "runtime/program/program.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Whether node `node` runs as a pool step in a host program (see above).
bool TakesPoolStep(const Graph& graph, const GraphMeta& metas, int node);

// The step of such a node; `args` pairs each graph value it reads with where
// it lives, as for an eager step (runtime/program/eager_step.h).
absl::StatusOr<ProgramStep> MakePoolStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool);

// The loops, for tests. Strides are in elements, [N, C, H, W] order for
// the input and the output; the output of the mean is [N, C] (its strides
// two).
struct PoolShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t out_h = 0, out_w = 0;        // max pool only
  int64_t in_strides[4] = {0, 0, 0, 0};
  int64_t out_strides[4] = {0, 0, 0, 0};
};
struct MaxPoolWindow {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0},
          dilation[2] = {1, 1};
};
void MaxPool2dRows(const float* in, float* out, const PoolShape& shape,
                   const MaxPoolWindow& window, int64_t first_row,
                   int64_t last_row);  // rows of [N * out_h]
void SpatialMeanRows(const float* in, float* out, const PoolShape& shape,
                     int64_t first, int64_t last);  // images of [N]

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_POOL_STEP_H_
