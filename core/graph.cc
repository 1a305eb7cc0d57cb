#include "core/graph.h"

#include "absl/strings/string_view.h"
#include "core/op_registry.h"

namespace guardjit {

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kPlaceholder:
      return "placeholder";
    case NodeKind::kConstant:
      return "get_attr";
    case NodeKind::kCallFunction:
      return "call_function";
    case NodeKind::kGetItem:
      return "call_function";
    case NodeKind::kOutput:
      return "output";
  }
  return "?";
}

const Graph* Graph::subgraph(const std::string& name) const {
  auto it = subgraphs_.find(name);
  return it == subgraphs_.end() ? nullptr : it->second.get();
}

int Graph::FindNode(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int Graph::num_ops() const {
  int n = 0;
  for (const Node& node : nodes_) n += node.kind == NodeKind::kCallFunction;
  return n;
}

}  // namespace guardjit
