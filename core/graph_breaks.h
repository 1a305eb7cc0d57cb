#ifndef GUARDJIT_CORE_GRAPH_BREAKS_H_
#define GUARDJIT_CORE_GRAPH_BREAKS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace guardjit {

// Where a graph stops being one compiled graph (DESIGN.md, "Graph breaks"):
// a cond whose predicate is computed from tensor values, or an op whose
// output size depends on values (OpDef::data_dependent_output). Only the
// graph's top level is searched: a break inside a cond branch surfaces when
// the continuation that inlines the branch is planned.
struct GraphBreak {
  enum class Kind {
    kPredicate,  // cond over tensor values: the host reads the predicate
    kOutputSize  // the op runs eagerly; the next segment sees real sizes
  };
  Kind kind = Kind::kPredicate;
  int node = -1;  // the breaking node's index in the graph
  // "data-dependent predicate: cond 'cond' reads the value of 'lt'"
  std::string reason;
};

// The first break of `graph` in node order, if any.
std::optional<GraphBreak> FindGraphBreak(const Graph& graph);

// Where a value the continuation or a step reads comes from on each call.
struct SegmentSource {
  enum class Kind { kInput, kHead, kStep };
  Kind kind = Kind::kInput;
  int index = 0;  // graph input, head output or step output
};

// `graph` split at its first break. A call runs `head` (everything before the
// break; absent when nothing runs there), then for a predicate break reads
// the predicate on the host, or for an output-size break runs `step` (the
// breaking node alone) eagerly, and calls the continuation: the rest of the
// graph (for a cond, with the taken branch inlined), whose inputs are the
// values crossing the break. Values cross as tensors: nothing before the
// break is recomputed after it, except size arithmetic (sym_size and the
// integer ops over it), which the continuation recomputes from its inputs.
struct SegmentPlan {
  GraphBreak at;
  std::shared_ptr<const Graph> head;  // null: no op before the break
  std::vector<int> head_inputs;       // graph inputs the head takes, in order
  SegmentSource predicate;            // kPredicate: where the predicate is
  std::shared_ptr<const Graph> step;  // kOutputSize: the breaking node alone
  std::vector<SegmentSource> step_inputs;
  // Per continuation input, where its tensor comes from (the same for every
  // branch of a cond).
  std::vector<SegmentSource> continuation_inputs;
};

// The plan for `graph`'s first break, or nullopt when it has none. Errors
// name the node (a graph the split cannot express).
absl::StatusOr<std::optional<SegmentPlan>> PlanGraphBreak(
    std::shared_ptr<const Graph> graph);

// The continuation of `plan` (for a predicate break, with the `taken` branch
// of the cond inlined): placeholders in plan.continuation_inputs order, the
// graph's outputs as outputs.
absl::StatusOr<std::shared_ptr<const Graph>> ContinuationGraph(
    const Graph& graph, const SegmentPlan& plan, bool taken);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_BREAKS_H_
