#include "runtime/program/output_placement.h"

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

// What runs a step that runs one graph node, for reasons.
const char* StepNoun(StepKind kind) {
  switch (kind) {
    case StepKind::kAttention:
      return "attention step";
    case StepKind::kLayerNorm:
      return "layer-norm step";
    default:
      return "eager node";
  }
}

}  // namespace

OutputPlacement::OutputPlacement(const Program& program) : program_(program) {
  const Program& p = program;
  const Graph& graph = *p.graph;
  direct_output_.assign(p.slots.size(), -1);
  // The last step that can fail once running: its failure must find every
  // destination unwritten.
  int last_fallible = -1;
  // The step that writes each slot: the one that allocates it, or the eager
  // step of its node.
  std::vector<int> producer(p.slots.size(), -1);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const ProgramStep& step = p.steps[i];
    if (step.can_fail) last_fallible = static_cast<int>(i);
    for (int s : step.allocate) producer[s] = static_cast<int>(i);
    if (RunsGraphNode(step.kind)) {
      for (size_t s = 0; s < p.slots.size(); ++s) {
        if (p.slots[s].source == Slot::Source::kExtern &&
            p.slots[s].node == step.node && producer[s] < 0) {
          producer[s] = static_cast<int>(i);
        }
      }
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
      reason = absl::StrCat("a view of input ", slot.input, " ('",
                            graph.node(graph.inputs()[slot.input]).name, "')");
      continue;
    }
    if (slot.source == Slot::Source::kConstant) {
      reason =
          absl::StrCat("a view of constant '", graph.node(slot.node).name, "'");
      continue;
    }
    const int at = producer[s];
    // A kernel with index checks reports them after its writes; an eager
    // step whose reference kernel writes destinations fails only before its
    // first write.
    bool fails_before_writing = false;
    if (at >= 0 && RunsGraphNode(p.steps[at].kind)) {
      const ProgramStep& step = p.steps[at];
      const Node& node = graph.node(step.node);
      const std::string eager = absl::StrCat(
          StepNoun(step.kind), " '", node.name, "' (", node.target, ")");
      if (p.transfer != nullptr) {
        reason = absl::StrCat("computed on the host by ", eager);
        continue;
      }
      if (!step.writes_destinations) {
        reason = absl::StrCat("computed by ", eager,
                              ", whose reference kernel allocates its results");
        continue;
      }
      fails_before_writing = true;
    }
    if (at < 0) {
      reason = "computed by no step of the program";
      continue;
    }
    if (at < last_fallible || (at == last_fallible && !fails_before_writing)) {
      const ProgramStep& step = p.steps[last_fallible];
      reason = absl::StrCat("step ", last_fallible + 1,
                            " can still fail after it is written (",
                            RunsGraphNode(step.kind)
                                ? absl::StrCat(StepNoun(step.kind), " '",
                                               graph.node(step.node).name, "'")
                                : "a kernel with index checks",
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

int OutputPlacement::num_direct_outputs() const {
  int n = 0;
  for (int k : direct_output_) n += k >= 0;
  return n;
}

std::string OutputPlacement::DescribeCopies() const {
  const Graph& graph = *program_.graph;
  std::string copies;
  for (size_t k = 0; k < copy_reason_.size(); ++k) {
    if (copy_reason_[k].empty()) continue;
    std::string name;
    const Arg& arg = graph.output_node().args[k];
    if (arg.is_value()) {
      name = absl::StrCat(" '", graph.node(arg.as_value().node).name, "'");
    }
    absl::StrAppend(&copies, copies.empty() ? "outputs copied: " : ", ", k,
                    name, " (", copy_reason_[k], ")");
  }
  return copies;
}

}  // namespace guardjit
