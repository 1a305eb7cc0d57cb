#include "core/graph_rewriter.h"

#include <utility>

#include "core/status_macros.h"

namespace guardjit {

GraphRewriter::GraphRewriter(const Graph& source)
    : source_(source), builder_(source.name()), mapped_(source.nodes().size()) {
  for (const Node& node : source.nodes()) names_.insert(node.name);
}

std::string GraphRewriter::UniqueName(std::string base) {
  while (!names_.insert(base).second) base += "_";
  return base;
}

absl::Status GraphRewriter::Copy(int i) {
  const Node& node = source_.node(i);
  const auto remap = [&](const Arg& a) { return Remap(a); };
  switch (node.kind) {
    case NodeKind::kPlaceholder: {
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder_.AddPlaceholder(node.name, node.meta));
      if (node.specialize_value) {
        RETURN_IF_ERROR(builder_.MarkValueSpecialized(node.name));
      }
      Record(ref, i);
      mapped_[i] = {Arg::Value(ref)};
      return absl::OkStatus();
    }
    case NodeKind::kConstant: {
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder_.AddConstant(node.name, node.constant));
      Record(ref, i);
      mapped_[i] = {Arg::Value(ref)};
      return absl::OkStatus();
    }
    case NodeKind::kGetItem: {
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder_.AddNode(node.name, "getitem",
                                        {Remap(node.args[0]), node.args[1]}));
      Record(ref, i);
      mapped_[i] = {Arg::Value(ref)};
      return absl::OkStatus();
    }
    case NodeKind::kCallFunction: {
      auto [args, kwargs] = UnbindArgs(node, remap);
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder_.AddNode(node.name, node.target, std::move(args),
                                        std::move(kwargs)));
      Record(ref, i);
      mapped_[i] = {Arg::Value(ref)};
      return absl::OkStatus();
    }
    case NodeKind::kOutput: {
      std::vector<Arg> outputs;
      for (const Arg& a : node.args) outputs.push_back(Remap(a));
      return builder_.SetOutputs(std::move(outputs));
    }
  }
  return absl::InternalError("graph rewrite: a node of an unknown kind");
}

void GraphRewriter::Map(int i, std::vector<Arg> outputs, bool copy_of_node) {
  if (copy_of_node && !outputs.empty() && outputs[0].is_value()) {
    copies_.emplace_back(outputs[0].as_value().node, i);
  }
  mapped_[i] = std::move(outputs);
}

absl::StatusOr<std::unique_ptr<Graph>> GraphRewriter::Finish() {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, builder_.Finish());
  source_node_.assign(graph->nodes().size(), -1);
  for (const auto& [to, from] : copies_) source_node_[to] = from;
  if (!source_node_.empty()) {
    source_node_.back() = static_cast<int>(source_.nodes().size()) - 1;
  }
  return graph;
}

}  // namespace guardjit
