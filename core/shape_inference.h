#ifndef GUARDJIT_CORE_SHAPE_INFERENCE_H_
#define GUARDJIT_CORE_SHAPE_INFERENCE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph.h"
#include "core/tensor_meta.h"

namespace guardjit {

// Metadata of every value of a graph: values[node][output].
using GraphMeta = std::vector<std::vector<TensorMeta>>;

// Runs each node's shape/dtype rule on concrete input metadata. Errors name
// the node: "node 'add' (aten.add.Tensor): shapes [2] and [3] are not
// broadcastable ...". A caller that acts on which node failed reads
// `failed_node`, not the message: when not null it is set to the index in
// `graph` of the node that failed (the cond node for an error in its taken
// branch), or -1 when none did (success, a wrong input count).
absl::StatusOr<GraphMeta> InferShapes(const Graph& graph,
                                      absl::Span<const TensorMeta> inputs,
                                      int* failed_node = nullptr);

// One call node's rule, with its inputs' metadata already in `values`.
absl::StatusOr<std::vector<TensorMeta>> InferNode(const Node& node,
                                                  const GraphMeta& values);

// The branch a cond node (core/ops/control_flow.h) takes for `values`: true
// for true_fn. A predicate over sizes is decided on the hints, recording its
// guard in the current ShapeEnv; one computed from tensor values is
// data-dependent control flow (a graph break): UNIMPLEMENTED.
absl::StatusOr<bool> CondBranch(const Node& node, const GraphMeta& values);

// Checks the count of `inputs` against the graph's placeholders.
absl::Status CheckInputCount(const Graph& graph, size_t num_inputs);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SHAPE_INFERENCE_H_
