#include "jit/steps/channels_last.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/extern_epilogue.h"
#include "jit/steps/onednn_conv.h"

namespace guardjit {
namespace {

constexpr const char* kConvolution = "aten.convolution.default";

// Whether extern node `node` is a convolution oneDNN may run (float32, not
// transposed, 1 to 3 spatial dims), given its output value.
bool OneDnnConvolution(const Node& node, const LValue& output) {
  return node.target == kConvolution && node.args.size() == 9 &&
         node.args[6].is_bool() && !node.args[6].as_bool() &&
         output.dtype == DType::kFloat32 && output.rank() >= 3 &&
         output.rank() <= 5;
}

// Whether a value of rank `rank` may be laid out channels last: float32,
// every dim past the batch fixed.
bool Eligible(const LValue& v, int rank) {
  if (v.kind == LValue::Kind::kBuffer || v.kind == LValue::Kind::kView ||
      v.dtype != DType::kFloat32 || v.rank() != rank) {
    return false;
  }
  for (int d = 1; d < v.rank(); ++d) {
    if (!v.sizes[d].is_const()) return false;
  }
  return true;
}

// A convolution's result (a buffer its step writes) that can be.
bool EligibleResult(const LValue& v, int rank) {
  if (v.dtype != DType::kFloat32 || v.rank() != rank) return false;
  for (int d = 1; d < v.rank(); ++d) {
    if (!v.sizes[d].is_const()) return false;
  }
  return true;
}

// Orders `kernel`'s outer loops as `vars`, when it has exactly those.
void OrderLoops(Kernel& kernel, const std::vector<int>& vars) {
  if (kernel.outer.size() != vars.size()) return;
  std::vector<LoopRange> ordered;
  for (int var : vars) {
    for (const LoopRange& loop : kernel.outer) {
      if (loop.var == var) ordered.push_back(loop);
    }
  }
  if (ordered.size() == vars.size()) kernel.outer = std::move(ordered);
}

// Whether `kernel`'s outer loops are one per dim of `sizes`, var d over dim
// d, in any order.
bool HasPointLoops(const Kernel& kernel, const std::vector<IndexExpr>& sizes) {
  if (kernel.outer.size() != sizes.size()) return false;
  absl::flat_hash_set<int> vars;
  for (const LoopRange& loop : kernel.outer) {
    if (loop.var < 0 || loop.var >= static_cast<int>(sizes.size()) ||
        loop.extent != sizes[loop.var] || !vars.insert(loop.var).second) {
      return false;
    }
  }
  return true;
}

// Whether `step`'s kernel stores something, and only channels-last values
// at the point it computes.
bool StoresOnlyChannelsLast(const PlanStep& step, const Plan& plan) {
  const Kernel& k = step.kernel.kernel;
  bool any = false;
  for (const Stage& stage : k.stages) {
    if (stage.buffer < 0 || !k.buffers[stage.buffer].is_output) continue;
    any = true;
    const std::vector<IndexExpr>& sizes =
        plan.slots[step.kernel.buffer_slots[stage.buffer]].sizes;
    if (stage.kind != Stage::Kind::kStore || !stage.loops.empty() ||
        sizes.size() < 3 || !HasPointLoops(k, sizes) ||
        !IsPointIndexAt(stage.index, sizes, ChannelsLastStrideExprs(sizes)) ||
        IsPointIndex(stage.index, sizes)) {
      return false;
    }
  }
  return any;
}

// [spatial 0, N, spatial 1..., C] for an [N, C, spatial...] space: channels
// innermost, and rows first for the pool to split at batch 1.
void ChannelsLastLoops(Kernel& kernel) {
  const int rank = static_cast<int>(kernel.outer.size());
  if (rank < 3) return;
  std::vector<int> vars = {2, 0};
  for (int d = 3; d < rank; ++d) vars.push_back(d);
  vars.push_back(1);
  OrderLoops(kernel, vars);
}

// [C, N, spatial...].
void ChannelsFirstLoops(Kernel& kernel) {
  const int rank = static_cast<int>(kernel.outer.size());
  if (rank < 2) return;
  std::vector<int> vars = {1, 0};
  for (int d = 2; d < rank; ++d) vars.push_back(d);
  OrderLoops(kernel, vars);
}

}  // namespace

std::vector<bool> PreferChannelsLast(
    const Graph& graph, const LoweredGraph& lowered,
    const absl::flat_hash_set<int>& contiguous_results,
    const absl::flat_hash_set<int>& pools) {
  const int n = static_cast<int>(lowered.values.size());
  std::vector<bool> prefer(n, false);
  if (!OneDnnEnabled()) return prefer;
  // Readers of each value, and which values may not be strided.
  std::vector<std::vector<int>> readers(n);
  std::vector<bool> pinned(n, false);
  for (int v = 0; v < n; ++v) {
    const LValue& value = lowered.values[v];
    for (int operand : value.operands) {
      readers[operand].push_back(v);
      // A view of it is viewed in its memory's layout.
      if (value.kind == LValue::Kind::kView) pinned[operand] = true;
    }
  }
  for (int v : lowered.outputs) pinned[v] = true;
  // Lowering views memory as a buffer value of the same slot, its strides
  // derived from the contiguous layout then: a result viewed so stays so.
  absl::flat_hash_map<int, int> buffers_of_slot;
  for (const LValue& value : lowered.values) {
    if (value.kind == LValue::Kind::kBuffer) ++buffers_of_slot[value.slot];
  }
  // Seeds: the inputs and outputs of the convolutions oneDNN may run; a
  // value another extern step reads stays contiguous. A convolution's
  // result is laid out by its conv step's epilogue (conv_epilogue.h).
  std::vector<bool> conv_result(n, false);
  std::deque<int> queue;
  int rank = 0;
  for (const ExternNode& ext : lowered.externs) {
    const Node& node = graph.node(ext.node);
    const auto inputs = lowered.extern_inputs.find(ext.node);
    const bool conv = !ext.outputs.empty() &&
                      OneDnnConvolution(node, lowered.values[ext.outputs[0]]);
    // A pool step reads its input and stores its result at any strides.
    const bool pool = !ext.outputs.empty() && pools.contains(ext.node);
    if (inputs != lowered.extern_inputs.end()) {
      for (const auto& [key, value] : inputs->second) {
        const bool conv_input =
            (conv || pool) && node.args[0].is_value() &&
            key == (int64_t{node.args[0].as_value().node} << 16) +
                       node.args[0].as_value().index;
        if (conv_input) {
          queue.push_back(value);
        } else {
          pinned[value] = true;
        }
      }
    }
    if (pool) {
      queue.push_back(ext.outputs[0]);
      const int result = ext.outputs[0];
      conv_result[result] = !contiguous_results.contains(ext.node) &&
                            buffers_of_slot[lowered.values[result].slot] == 1;
    }
    if (conv) {
      rank = lowered.values[ext.outputs[0]].rank();
      for (int out : ext.outputs) queue.push_back(out);
      const int result = ext.outputs[0];
      conv_result[result] = !contiguous_results.contains(ext.node) &&
                            buffers_of_slot[lowered.values[result].slot] == 1;
    }
  }
  if (rank == 0) return prefer;
  // Everything connected to them through kernels' values (windows and other
  // values of other ranks are passed through, not laid out).
  std::vector<bool> seen(n, false);
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop_front();
    if (seen[v]) continue;
    seen[v] = true;
    const LValue& value = lowered.values[v];
    if (value.kind == LValue::Kind::kView) continue;
    if (!pinned[v] && (Eligible(value, rank) ||
                       (conv_result[v] && EligibleResult(value, rank)))) {
      prefer[v] = true;
    }
    for (int r : readers[v]) queue.push_back(r);
    for (int operand : value.operands) queue.push_back(operand);
  }
  return prefer;
}

void LayOutConvResults(LoweredGraph& lowered,
                       const std::vector<bool>& channels_last) {
  for (size_t v = 0; v < channels_last.size(); ++v) {
    LValue& value = lowered.values[v];
    if (!channels_last[v] || value.kind != LValue::Kind::kBuffer) continue;
    value.strides = ChannelsLastStrideExprs(value.sizes);
    lowered.slots[value.slot].strides = value.strides;
  }
}

absl::flat_hash_set<int> StridedResultsLeftEager(
    const Plan& plan, const absl::flat_hash_set<int>& pools) {
  absl::flat_hash_set<int> nodes;
  for (const Slot& slot : plan.slots) {
    if (slot.source != Slot::Source::kExtern || slot.strides.empty() ||
        pools.contains(slot.node)) {
      continue;
    }
    for (const PlanStep& step : plan.steps) {
      if (!step.is_kernel && step.node == slot.node) nodes.insert(slot.node);
    }
  }
  return nodes;
}

void OrderChannelsLastLoops(Plan& plan) {
  for (PlanStep& step : plan.steps) {
    if (!step.is_kernel) continue;
    if (StoresOnlyChannelsLast(step, plan)) {
      ChannelsLastLoops(step.kernel.kernel);
    } else if (step.conv != nullptr && step.conv->onednn.has_value()) {
      // The pool splits the first loop even at batch 1.
      ChannelsFirstLoops(step.kernel.kernel);
    }
  }
}

}  // namespace guardjit
