#ifndef GUARDJIT_CORE_GRAPH_BUILDER_H_
#define GUARDJIT_CORE_GRAPH_BUILDER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/shape_inference.h"

namespace guardjit {

using Kwargs = std::vector<std::pair<std::string, Arg>>;

// `a` with every value reference replaced by mapped[node][index], lists
// included: how a graph rewrite (the specializer, graph breaks) carries a
// node's arguments into a new GraphBuilder.
Arg RemapArg(const std::vector<std::vector<Arg>>& mapped, const Arg& a);

// Call node `node`'s bound arguments as GraphBuilder::AddNode takes them
// (positional in schema order, keyword-only ones by name), each passed
// through `map`.
template <typename MapFn>
std::pair<std::vector<Arg>, Kwargs> UnbindArgs(const Node& node, MapFn&& map) {
  std::pair<std::vector<Arg>, Kwargs> out;
  for (size_t k = 0; k < node.args.size(); ++k) {
    const ArgSchema& schema = node.op->schema.args[k];
    if (schema.kwarg_only) {
      out.second.emplace_back(schema.name, map(node.args[k]));
    } else {
      out.first.push_back(map(node.args[k]));
    }
  }
  return out;
}

// Builds a validated Graph node by node. Every Add* checks its node at once
// and fails with a message naming it: unknown target, wrong arity, argument of
// the wrong kind, reference to an undefined value, duplicate name. References
// are written as Arg::Ref("name") (or Arg::Value of a returned ValueRef).
// The protobuf loader and the C builder API both go through this class.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name,
                        const OpRegistry& registry = OpRegistry::Global());

  // An input; `meta` is the exporter's description, used by Finish() to check
  // shapes ahead of any call when every input has one.
  absl::StatusOr<ValueRef> AddPlaceholder(std::string name,
                                          std::optional<TensorMeta> meta = {});
  // Marks input `name` (an earlier placeholder) value-specialized
  // (core/value_inputs.h). INVALID_ARGUMENT naming it when its metadata
  // rules that out: not an integer, bool, float32 or float64 dtype, or more
  // than kMaxSpecializedValues elements.
  absl::Status MarkValueSpecialized(const std::string& name);
  // What rebuilds the graph for the values of its value-specialized inputs
  // (Graph::rebuilder). Finish() then infers no shapes: the graph's nodes
  // may stand for what the values decide.
  void SetRebuilder(std::shared_ptr<const GraphRebuilder> rebuilder) {
    graph_->rebuilder_ = std::move(rebuilder);
  }
  // A weight owned by the graph (FX get_attr).
  absl::StatusOr<ValueRef> AddConstant(std::string name, Tensor value);
  // A call of `target` ("aten.add.Tensor", or "getitem" with {ref, index}).
  absl::StatusOr<ValueRef> AddNode(std::string name, std::string target,
                                   std::vector<Arg> args, Kwargs kwargs = {});
  // Renames node `node` (a call, getitem or constant) to the unused `name`
  // (an importer
  // naming a graph output after the value it declares, once the node that
  // computes it is known). Values refer to nodes by index, so they follow;
  // FAILED_PRECONDITION after SetOutputs or where a later node's arguments
  // name the node as written, INVALID_ARGUMENT for a name in use.
  absl::Status RenameNode(int node, std::string name);
  // A nested graph that control-flow nodes name.
  absl::Status AddSubgraph(std::string name, std::unique_ptr<Graph> graph);
  absl::Status SetOutputs(std::vector<Arg> outputs);
  // What the graph declares of input `name` (an earlier placeholder) and of
  // output `index` (after SetOutputs): Graph::input_spec/output_spec.
  // Checked by ValidateIoSpec. A fully static input spec also serves as the
  // placeholder's metadata for Finish()'s shape check.
  absl::Status SetInputSpec(const std::string& name, IoSpec spec);
  absl::Status SetOutputSpec(int index, IoSpec spec);

  // The nodes added so far (no output node until Finish): what an importer
  // reads to infer each node's metadata as it adds them.
  const Graph& partial_graph() const { return *graph_; }

  // The graph; fails if outputs were never set. When every placeholder has
  // metadata, shape and dtype inference runs and its errors name the node;
  // then a declared output spec must agree with the inferred dtype, rank and
  // static sizes (INVALID_ARGUMENT naming the output otherwise).
  absl::StatusOr<std::unique_ptr<Graph>> Finish();

 private:
  absl::Status CheckNewName(const std::string& name) const;
  absl::StatusOr<Arg> Resolve(const Node& node, absl::string_view what,
                              const Arg& arg) const;
  absl::Status BindCall(Node& node, std::vector<Arg> args, Kwargs kwargs) const;
  absl::Status CheckArg(const Node& node, const ArgSchema& schema,
                        Arg& arg) const;
  // A reference to a node computing an integer (aten.sym_size.int, ...).
  bool IsIntValue(const Arg& arg) const;
  absl::Status CheckTensorRef(const Node& node, absl::string_view what,
                              const Arg& arg) const;

  absl::Status CheckOutputSpecs(const GraphMeta& inferred) const;

  const OpRegistry& registry_;
  std::unique_ptr<Graph> graph_;
  bool outputs_set_ = false;
  absl::flat_hash_map<std::string, IoSpec> input_specs_;
  std::vector<IoSpec> output_specs_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_BUILDER_H_
