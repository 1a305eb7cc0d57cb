#ifndef GUARDJIT_JIT_SCHEDULE_FUSION_H_
#define GUARDJIT_JIT_SCHEDULE_FUSION_H_

// Fusion and scheduling: turns a LoweredGraph into a plan of kernels (one per
// fused group, in loop IR) and eager steps. Pointwise values and views are
// inlined into every use; a value gets memory when an eager or extern step,
// a gather or the graph's outputs read it, when it is a reduction a later
// kernel reads, or when it is shared and costly to recompute
// (SharedValuesToRealize, realize.h). Reductions over the same rows fuse into
// one kernel with their pointwise prologues, and pointwise consumers of the row
// (softmax's division, layer_norm's normalization) fuse in as epilogue stores.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jit/lowering/loop_ir.h"
#include "jit/lowering/lowering.h"

namespace guardjit {

// TensorRef (a strided view of a slot): runtime/program/program.h.

// What a kernel's index check guards: `what` (the node and argument) reads
// dimension `dim` of a tensor whose size there is `bound`.
struct IndexCheck {
  std::string what;
  int dim = 0;
  IndexExpr bound;

  // The error of a failed check, sizes evaluated with `symbols`.
  absl::Status Error(absl::Span<const int64_t> symbols) const;
};

struct KernelStep {
  Kernel kernel;
  std::vector<IndexCheck> checks;     // kernel.num_checks of them
  std::vector<int> buffer_slots;      // slot of each kernel buffer parameter
  std::vector<int> allocate;          // slots this kernel writes (fresh memory)
  std::vector<std::string> computes;  // labels of the values it stores
  // The partials kernel of a split reduction (split_reduction.h): what was
  // split, for explain ("reduction 'r' split into 64 partials"); else empty.
  std::string split;
};

struct GemmStep;  // gemm_step.h
struct ConvStep;  // conv_step.h

struct PlanStep {
  bool is_kernel = true;
  KernelStep kernel;
  // Set on a kernel step: an extern matrix product with `kernel` as its
  // epilogue (gemm_epilogue.h); `node` is the product's node.
  std::shared_ptr<const GemmStep> gemm;
  // Likewise an extern convolution (conv_epilogue.h).
  std::shared_ptr<const ConvStep> conv;
  int node = -1;  // an eager step: the graph node
  // Host plans: an eager step of scaled_dot_product_attention that runs as
  // one attention step (jit/steps/attention_step.h), not its reference
  // kernel.
  bool attention = false;
  // Likewise native_layer_norm as one layer-norm step
  // (jit/steps/layer_norm_step.h); Lower left it unlowered.
  bool layer_norm = false;
  // Likewise a max pool or a spatial mean as one pool step
  // (jit/steps/pool_step.h).
  bool pool = false;
  // Eager step: (node << 16 | output) of each graph value it reads, with
  // where that value lives.
  std::vector<std::pair<int64_t, TensorRef>> extern_args;
  std::vector<int> release;  // slots nobody reads after this step
};

struct Plan {
  std::vector<Slot> slots;
  std::vector<PlanStep> steps;
  std::vector<TensorRef> outputs;
  // Intermediates only kernels touch share reusable buffers by liveness:
  // slot_buffer[slot] is the buffer it lives in (-1: its own allocation),
  // buffer_bytes[b] the largest slot it holds (a max of expressions where
  // sizes are symbolic). Two slots share a buffer only when one is dead
  // before the other is written.
  std::vector<int> slot_buffer;
  std::vector<IndexExpr> buffer_bytes;

  int num_kernels() const;
  // Steps with their kernels' loop IR, for GJ_LOGS=codegen and tests.
  std::string ToString() const;
};

// Fuses `graph`'s values into kernels and plans its steps. A value flagged
// in `channels_last` (by value index; jit/steps/channels_last.h decides)
// that is given memory is laid out channels last: [N, C, spatial...] stored
// with strides [C * S, 1, ...] (dims past 1 fixed), which every kernel and
// extern step reading it follows.
absl::StatusOr<Plan> Schedule(const LoweredGraph& graph,
                              const std::vector<bool>& channels_last = {});

// (Re)assigns plan.slot_buffer and plan.buffer_bytes by liveness: Schedule
// calls it, and the JIT again after GEMM and conv steps have replaced eager
// matrix products and convolutions, whose operands then become buffers.
void PlanBuffers(Plan& plan);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_SCHEDULE_FUSION_H_
