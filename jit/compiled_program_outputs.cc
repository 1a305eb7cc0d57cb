// CompiledProgram's outputs written in place: which output slots a call
// with destinations writes straight into them, and explain()'s account of
// why the others are copied.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/compiled_program.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

void CompiledProgram::PlanDirectOutputs() {
  const Plan& p = plan_;
  direct_output_.assign(p.slots.size(), -1);
  // Steps that can fail once running: their failure must find every
  // destination unwritten.
  int last_fallible = -1;
  std::vector<int> allocated_at(p.slots.size(), -1);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep& step = p.steps[i];
    if (!step.is_kernel || step.kernel.kernel.num_checks > 0) {
      last_fallible = static_cast<int>(i);
    }
    if (step.is_kernel) {
      for (int s : step.kernel.allocate) allocated_at[s] = static_cast<int>(i);
    }
  }
  std::vector<int> first_use(p.slots.size(), -1);
  copy_reason_.assign(p.outputs.size(), std::string());
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const TensorRef& r = p.outputs[k];
    const int s = r.slot;
    const Slot& slot = p.slots[s];
    std::string& reason = copy_reason_[k];
    if (first_use[s] >= 0) {
      reason = absl::StrCat("the same memory as output ", first_use[s]);
      // The first one is then not in place either.
      if (copy_reason_[first_use[s]].empty()) {
        copy_reason_[first_use[s]] =
            absl::StrCat("the same memory as output ", k);
      }
      direct_output_[s] = -1;
      continue;
    }
    first_use[s] = static_cast<int>(k);
    if (slot.source == Slot::Source::kInput) {
      reason =
          absl::StrCat("a view of input ", slot.input, " ('",
                       graph_->node(graph_->inputs()[slot.input]).name, "')");
      continue;
    }
    if (slot.source == Slot::Source::kConstant) {
      reason = absl::StrCat("a view of constant '",
                            graph_->node(slot.node).name, "'");
      continue;
    }
    // A GEMM or conv step's epilogue kernel writes slots planned for the
    // eager node it replaced: the producer is whichever step allocates it.
    // Otherwise the slot is an eager step's result, which its reference
    // kernel writes into the destination when it can (it fails only before
    // its first write, KernelRegistry::writes_destinations).
    int producer = allocated_at[s];
    // A kernel with index checks reports them after its writes; a reference
    // kernel that writes destinations fails only before its first write.
    bool fails_before_writing = false;
    if (producer < 0) {
      const Node& node = graph_->node(slot.node);
      for (size_t i = 0; i < p.steps.size(); ++i) {
        if (!p.steps[i].is_kernel && p.steps[i].node == slot.node) {
          producer = static_cast<int>(i);
        }
      }
      const std::string eager =
          absl::StrCat("eager node '", node.name, "' (", node.target, ")");
      if (producer < 0 || transfer_ != nullptr) {
        reason = absl::StrCat("computed on the host by ", eager);
        continue;
      }
      if (!KernelRegistry::Global().writes_destinations(node.target)) {
        reason = absl::StrCat("computed by ", eager,
                              ", whose reference kernel allocates its results");
        continue;
      }
      fails_before_writing = true;
    }
    if (producer < last_fallible ||
        (producer == last_fallible && !fails_before_writing)) {
      const PlanStep& step = p.steps[last_fallible];
      reason = absl::StrCat(
          "step ", last_fallible + 1, " can still fail after it is written (",
          step.is_kernel
              ? "a kernel with index checks"
              : absl::StrCat("eager node '", graph_->node(step.node).name, "'"),
          ")");
      continue;
    }
    if (p.slot_buffer[s] >= 0 || !r.offset.is_const() ||
        r.offset.value() != 0 || r.sizes.size() != slot.sizes.size()) {
      reason = "a view of a kernel's result";
      continue;
    }
    // The output is the whole slot, laid out contiguously.
    const std::vector<IndexExpr> contiguous = ContiguousStrideExprs(slot.sizes);
    bool whole = true;
    for (size_t d = 0; d < r.sizes.size(); ++d) {
      whole &= r.sizes[d] == slot.sizes[d] && r.strides[d] == contiguous[d];
    }
    if (whole) {
      direct_output_[s] = static_cast<int>(k);
    } else {
      reason = "a view of a kernel's result";
    }
  }
}

std::string CompiledProgram::DescribeOutputCopies() const {
  std::string copies;
  for (size_t k = 0; k < copy_reason_.size(); ++k) {
    if (copy_reason_[k].empty()) continue;
    std::string name;
    const Arg& arg = graph_->output_node().args[k];
    if (arg.is_value()) {
      name = absl::StrCat(" '", graph_->node(arg.as_value().node).name, "'");
    }
    absl::StrAppend(&copies, copies.empty() ? "outputs copied: " : ", ", k,
                    name, " (", copy_reason_[k], ")");
  }
  return copies;
}

int CompiledProgram::num_direct_outputs() const {
  int n = 0;
  for (int k : direct_output_) n += k >= 0;
  return n;
}

}  // namespace guardjit
