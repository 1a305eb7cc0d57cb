#ifndef GUARDJIT_CORE_GRAPH_H_
#define GUARDJIT_CORE_GRAPH_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "core/arg_value.h"
#include "core/io_spec.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"
#include "core/value_inputs.h"

namespace guardjit {

struct OpDef;

// FX opcodes.
enum class NodeKind {
  kPlaceholder,   // a graph input
  kConstant,      // FX get_attr: a weight owned by the graph
  kCallFunction,  // an ATen op
  kGetItem,       // element `index` of a multi-output node
  kOutput,        // the graph's outputs (always the last node)
};

const char* NodeKindName(NodeKind kind);  // FX spelling: "call_function", ...

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kCallFunction;
  std::string target;         // "aten.add.Tensor"; "getitem"; "output"
  const OpDef* op = nullptr;  // set for kCallFunction
  // Arguments bound to op->schema: one per schema argument, in schema order,
  // defaults filled in. For getitem: {value, index}; for output: the values.
  std::vector<Arg> args;
  // Arguments as written in the graph, for printing.
  std::vector<Arg> written_args;
  std::vector<std::pair<std::string, Arg>> written_kwargs;
  // Outputs this node produces; -1 when known only at run time (Tensor[]).
  int num_outputs = 1;
  // kPlaceholder: the exporter's metadata, if any.
  std::optional<TensorMeta> meta;
  // kPlaceholder: the input is value-specialized (core/value_inputs.h).
  bool specialize_value = false;
  // kConstant: the weight.
  Tensor constant;
};

// A validated graph: nodes in topological order (placeholders, constants,
// calls, output last), every reference resolved to an earlier node.
// Immutable once built; shared by every function and cache entry made from it.
class Graph {
 public:
  const std::string& name() const { return name_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[i]; }
  // Indices of placeholder nodes, in input order.
  const std::vector<int>& inputs() const { return inputs_; }
  const Node& output_node() const { return nodes_.back(); }
  int num_outputs() const {
    return static_cast<int>(output_node().args.size());
  }
  const Graph* subgraph(const std::string& name) const;
  const std::map<std::string, std::unique_ptr<Graph>>& subgraphs() const {
    return subgraphs_;
  }
  // What the graph declares of input `i` / output `i` (unknown parts where it
  // declares nothing); one per input and output.
  const IoSpec& input_spec(int i) const { return input_specs_[i]; }
  const IoSpec& output_spec(int i) const { return output_specs_[i]; }
  // Positions (in inputs()) of the value-specialized inputs, ascending.
  const std::vector<int>& value_inputs() const { return value_inputs_; }
  // What rebuilds the graph for their values, or null: entries then
  // compile this graph with the values as constants. A graph with a
  // rebuilder runs only specialized (its nodes may stand for what the
  // values decide: kValueSpecializedTarget).
  const std::shared_ptr<const GraphRebuilder>& rebuilder() const {
    return rebuilder_;
  }
  // Index of the node called `name`, or -1.
  int FindNode(absl::string_view name) const;
  // Number of ATen op nodes (what explain() calls the op count).
  int num_ops() const;

 private:
  friend class GraphBuilder;
  std::string name_;
  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<IoSpec> input_specs_;
  std::vector<IoSpec> output_specs_;
  std::vector<int> value_inputs_;
  std::shared_ptr<const GraphRebuilder> rebuilder_;
  absl::flat_hash_map<std::string, int> index_;
  std::map<std::string, std::unique_ptr<Graph>> subgraphs_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_H_
