#ifndef GUARDJIT_CORE_SPECIALIZER_H_
#define GUARDJIT_CORE_SPECIALIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/call_signature.h"
#include "core/graph.h"
#include "core/shape_env.h"
#include "core/shape_inference.h"
#include "core/symbolic_inputs.h"
#include "core/tensor_meta.h"
#include "core/value_inputs.h"

namespace guardjit {

// A graph specialized to one cache entry's inputs.
struct SpecializedGraph {
  // The graph with every cond replaced by the nodes of its taken branch
  // (the input graph itself when it has no cond).
  std::shared_ptr<const Graph> graph;
  // Every value's metadata over the entry's symbols.
  GraphMeta meta;
  int inlined_conds = 0;
  // Size nodes (sym_size, sym_numel, integer arithmetic and comparisons)
  // whose value the specialization fixes, replaced by literals.
  int folded_sizes = 0;
};

// Runs shape inference on `inputs` (sizes may be symbolic; call it inside a
// ShapeEnv::Scope so the decisions become guards), inlines the taken branch
// of each cond, so the compiled graph has no control flow (torch's
// "shape-dependent branches are flattened away"), and folds size nodes whose
// value is fixed into literals, so a static entry computes no sizes. Errors
// name the node; a predicate over tensor values is UNIMPLEMENTED (a graph
// break).
// `values`: the entry's values of value-specialized inputs, which become
// constants in their placeholders' place (the placeholders stay, unused).
absl::StatusOr<SpecializedGraph> SpecializeGraph(
    std::shared_ptr<const Graph> graph, absl::Span<const TensorMeta> inputs,
    absl::Span<const InputValues> values = {});

// One cache entry's specialization of `graph` to a call: the symbols of its
// dynamic dims, the inputs' metas and guards over them, and the graph
// specialized to those metas.
struct SpecializedCall {
  ShapeEnv env;
  SymbolicInputs symbolic;
  SpecializedGraph graph;
};

// Specializes `graph` (inputs named `input_names`) to `call` with the
// `dynamic` dims symbolic. A symbol the guards pin to one value
// (`x.size()[0] <= 2` on top of `2 <= x.size()[0]`, or an op that needs the
// concrete size) makes its dims static, as torch specializes it: the
// specialization runs again without them until no symbol is pinned. Errors
// name the node and the sources of the symbols they mention.
absl::StatusOr<SpecializedCall> SpecializeCall(
    std::shared_ptr<const Graph> graph,
    const std::vector<std::string>& input_names, const CallSignature& call,
    std::vector<DynamicDim> dynamic, absl::Span<const InputValues> values = {});

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SPECIALIZER_H_
