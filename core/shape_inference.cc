#include "core/shape_inference.h"

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/status_macros.h"

namespace guardjit {

absl::Status CheckInputCount(const Graph& graph, size_t num_inputs) {
  if (num_inputs != graph.inputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph.name(), "' takes ", graph.inputs().size(),
                     " inputs, got ", num_inputs));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorMeta>> InferNode(const Node& node,
                                                  const GraphMeta& values) {
  MetaArgs args(
      node, [&](ValueRef v) { return values[v.node][v.index]; },
      [](const Scalar& s) {
        return TensorMeta{
            s.dtype(), {}, Device::Cpu(), /*wrapped_number=*/true};
      });
  auto out = node.op->meta(args);
  if (!out.ok()) {
    return absl::Status(out.status().code(),
                        absl::StrCat("node '", node.name, "' (", node.target,
                                     "): ", out.status().message()));
  }
  // A shape rule may compute sizes each of which fits while their product
  // does not (an outer product of two 2^32-element vectors): OUT_OF_RANGE
  // here, naming the node, rather than at the first allocation of it.
  for (size_t k = 0; k < out->size(); ++k) {
    const TensorMeta& meta = (*out)[k];
    bool concrete = true;
    for (const SymInt& size : meta.sizes) concrete &= !size.is_symbolic();
    if (!concrete) continue;
    const absl::StatusOr<int64_t> numel = CheckedNumel(meta.shape());
    if (!numel.ok()) {
      return absl::Status(
          numel.status().code(),
          absl::StrCat("node '", node.name, "' (", node.target, "): output ", k,
                       ": ", numel.status().message(),
                       " (its element count overflows int64)"));
    }
  }
  return out;
}

absl::StatusOr<bool> CondBranch(const Node& node, const GraphMeta& values) {
  const Arg& pred = node.args[kCondPred];
  if (pred.is_bool()) return pred.as_bool();
  if (pred.is_int()) return pred.as_int() != 0;
  if (pred.is_value()) {
    const TensorMeta& meta =
        values[pred.as_value().node][pred.as_value().index];
    if (meta.sym_value.has_value()) return *meta.sym_value != 0;
    return absl::UnimplementedError(absl::StrCat(
        "node '", node.name,
        "' (cond): the predicate is computed from tensor values "
        "(data-dependent control flow, a graph break); only predicates over "
        "sizes can be specialized"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name,
                   "' (cond): the predicate must be a "
                   "bool or a size comparison, got ",
                   pred.kind_name()));
}

namespace {

// The taken branch's outputs.
absl::StatusOr<std::vector<TensorMeta>> InferCond(const Graph& graph,
                                                  const Node& node,
                                                  const GraphMeta& values) {
  ASSIGN_OR_RETURN(bool taken, CondBranch(node, values));
  const Graph* branch =
      graph.subgraph(node.args[taken ? kCondTrue : kCondFalse].as_subgraph());
  std::vector<TensorMeta> operands;
  for (const Arg& a : node.args[kCondOperands].as_list()) {
    operands.push_back(values[a.as_value().node][a.as_value().index]);
  }
  auto branch_values = InferShapes(*branch, operands);
  if (!branch_values.ok()) {
    return absl::Status(
        branch_values.status().code(),
        absl::StrCat("node '", node.name, "' (cond), branch '", branch->name(),
                     "': ", branch_values.status().message()));
  }
  std::vector<TensorMeta> out;
  for (const Arg& a : branch->output_node().args) {
    out.push_back((*branch_values)[a.as_value().node][a.as_value().index]);
  }
  return out;
}

// A call or getitem node's outputs, the values before it known.
absl::StatusOr<std::vector<TensorMeta>> InferComputed(const Graph& graph,
                                                      const Node& node,
                                                      const GraphMeta& values) {
  if (node.kind == NodeKind::kGetItem) {
    const auto& source = values[node.args[0].as_value().node];
    int64_t index = node.args[1].as_int();
    if (index >= static_cast<int64_t>(source.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node.name, "' (getitem): index ", index,
                       " out of range for a list of ", source.size()));
    }
    return std::vector<TensorMeta>{source[index]};
  }
  if (node.target == kCondTarget) return InferCond(graph, node, values);
  return InferNode(node, values);
}

}  // namespace

absl::StatusOr<GraphMeta> InferShapes(const Graph& graph,
                                      absl::Span<const TensorMeta> inputs,
                                      int* failed_node) {
  if (failed_node != nullptr) *failed_node = -1;
  RETURN_IF_ERROR(CheckInputCount(graph, inputs.size()));
  GraphMeta values(graph.nodes().size());
  size_t next_input = 0;
  const Device constants_device = ConstantsDevice(inputs);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    switch (node.kind) {
      case NodeKind::kPlaceholder:
        values[i] = {inputs[next_input++]};
        break;
      case NodeKind::kConstant:
        values[i] = {TensorMeta::Of(node.constant)};
        values[i][0].device = constants_device;
        break;
      case NodeKind::kCallFunction:
      case NodeKind::kGetItem: {
        absl::StatusOr<std::vector<TensorMeta>> out =
            InferComputed(graph, node, values);
        if (!out.ok()) {
          if (failed_node != nullptr) *failed_node = static_cast<int>(i);
          return out.status();
        }
        values[i] = *std::move(out);
        break;
      }
      case NodeKind::kOutput:
        break;
    }
  }
  return values;
}

}  // namespace guardjit
