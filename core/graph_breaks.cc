#include "core/graph_breaks.h"

#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// A size computation (aten.sym_size.int, operator.mul, ...): recomputed
// after a break instead of crossing it.
bool IsSizeNode(const Node& node) {
  return node.kind == NodeKind::kCallFunction && node.op != nullptr &&
         node.op->schema.returns_int;
}

// A value crossing a break: `node`'s output, or for a node with several
// outputs (read through getitem) element `index`.
using Crossing = ValueRef;

uint64_t Key(const ValueRef& v) {
  return (static_cast<uint64_t>(v.node) << 32) | static_cast<uint32_t>(v.index);
}

// Copies nodes of graphs into one GraphBuilder: nested cond branches are
// cloned under fresh names, a graph can be inlined with its placeholders
// bound to arguments.
class Copier {
 public:
  explicit Copier(GraphBuilder& builder) : builder_(builder) {}

  // Adds call node `node` of `graph` under `name` with `map` applied to its
  // arguments.
  template <typename MapFn>
  absl::StatusOr<ValueRef> CopyCall(const Graph& graph, const Node& node,
                                    const std::string& name, MapFn&& map) {
    if (node.target == kCondTarget) {
      std::vector<Arg> args;
      // A cond the specializer decides on sizes: keep it, with its branches.
      args.push_back(map(node.args[kCondPred]));
      for (int k : {kCondTrue, kCondFalse}) {
        const Graph* branch = graph.subgraph(node.args[k].as_subgraph());
        ASSIGN_OR_RETURN(std::unique_ptr<Graph> clone, Clone(*branch));
        std::string sub = absl::StrCat(name, ".", branch->name());
        while (!subgraph_names_.insert(sub).second) sub += "_";
        RETURN_IF_ERROR(builder_.AddSubgraph(sub, std::move(clone)));
        args.push_back(Arg::Subgraph(sub));
      }
      args.push_back(map(node.args[kCondOperands]));
      return builder_.AddNode(name, node.target, std::move(args));
    }
    auto [positional, keywords] = UnbindArgs(node, map);
    return builder_.AddNode(name, node.target, std::move(positional),
                            std::move(keywords));
  }

  // Copies constant, call or getitem node `i` of `graph` under `name`;
  // mapped[i] becomes its output.
  template <typename MapFn>
  absl::Status CopyNode(const Graph& graph, int i, const std::string& name,
                        MapFn&& map, std::vector<std::vector<Arg>>& mapped) {
    const Node& node = graph.node(i);
    absl::StatusOr<ValueRef> ref;
    switch (node.kind) {
      case NodeKind::kConstant:
        ref = builder_.AddConstant(name, node.constant);
        break;
      case NodeKind::kCallFunction:
        ref = CopyCall(graph, node, name, map);
        break;
      case NodeKind::kGetItem:
        ref = builder_.AddNode(name, "getitem",
                               {map(node.args[0]), node.args[1]});
        break;
      default:
        return absl::InternalError(
            absl::StrCat("node '", node.name, "' (", NodeKindName(node.kind),
                         ") is not copied as a body node"));
    }
    if (!ref.ok()) return ref.status();
    mapped[i] = {Arg::Value(*ref)};
    return absl::OkStatus();
  }

  // Copies `graph`'s nodes with placeholder k bound to inputs[k], names
  // prefixed; returns the Args of its outputs.
  absl::StatusOr<std::vector<Arg>> Inline(const Graph& graph,
                                          const std::vector<Arg>& inputs,
                                          const std::string& prefix) {
    std::vector<std::vector<Arg>> mapped(graph.nodes().size());
    auto map = [&](const Arg& a) { return RemapArg(mapped, a); };
    size_t next_input = 0;
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      const Node& node = graph.node(static_cast<int>(i));
      const std::string name = prefix + node.name;
      switch (node.kind) {
        case NodeKind::kPlaceholder:
          if (next_input >= inputs.size()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "graph '", graph.name(), "' takes more inputs than given"));
          }
          mapped[i] = {inputs[next_input++]};
          break;
        case NodeKind::kConstant:
        case NodeKind::kCallFunction:
        case NodeKind::kGetItem:
          RETURN_IF_ERROR(
              CopyNode(graph, static_cast<int>(i), name, map, mapped));
          break;
        case NodeKind::kOutput: {
          std::vector<Arg> out;
          for (const Arg& a : node.args) out.push_back(map(a));
          return out;
        }
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph.name(), "' has no output node"));
  }

 private:
  // A copy of `graph` (a cond branch), nested branches included.
  static absl::StatusOr<std::unique_ptr<Graph>> Clone(const Graph& graph) {
    GraphBuilder builder(graph.name());
    std::vector<Arg> inputs;
    for (int i : graph.inputs()) {
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder.AddPlaceholder(graph.node(i).name));
      inputs.push_back(Arg::Value(ref));
    }
    Copier copier(builder);
    ASSIGN_OR_RETURN(std::vector<Arg> outputs,
                     copier.Inline(graph, inputs, ""));
    RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
    return builder.Finish();
  }

  GraphBuilder& builder_;
  absl::flat_hash_set<std::string> subgraph_names_;
};

// The values before the break (node index < `at`) that the nodes from
// `first` on read: tensors that must cross, in first-read order. Size nodes
// are looked through (the reader recomputes them) and constants are copied.
class CrossingFinder {
 public:
  CrossingFinder(const Graph& graph, int at) : graph_(graph), at_(at) {}

  void Visit(const Arg& a) {
    if (a.is_list()) {
      for (const Arg& item : a.as_list()) Visit(item);
      return;
    }
    if (a.is_value()) Add(a.as_value());
  }
  // A getitem of a node before the break reads element `index` of it.
  void VisitGetItem(const Node& getitem) {
    const ValueRef source = getitem.args[0].as_value();
    if (source.node >= at_) return;
    Add({source.node, static_cast<int>(getitem.args[1].as_int())});
  }

  const std::vector<Crossing>& crossing() const { return crossing_; }

 private:
  void Add(const ValueRef& v) {
    if (v.node >= at_) return;
    const Node& node = graph_.node(v.node);
    if (node.kind == NodeKind::kConstant) return;
    if (IsSizeNode(node)) {
      if (!looked_through_.insert(v.node).second) return;
      for (const Arg& a : node.args) Visit(a);
      return;
    }
    if (seen_.insert(Key(v)).second) crossing_.push_back(v);
  }

  const Graph& graph_;
  const int at_;
  std::vector<Crossing> crossing_;
  absl::flat_hash_set<uint64_t> seen_;
  absl::flat_hash_set<int> looked_through_;
};

// Name of a value in messages and as a placeholder: the node's name, with
// "_<index>" for an element of a node with several outputs.
std::string ValueName(const Graph& graph, const Crossing& v) {
  const Node& node = graph.node(v.node);
  if (node.num_outputs == 1 || node.kind != NodeKind::kCallFunction) {
    return node.name;
  }
  return absl::StrCat(node.name, "_", v.index);
}

bool HasSeveralOutputs(const Graph& graph, const Crossing& v) {
  const Node& node = graph.node(v.node);
  return node.kind == NodeKind::kCallFunction && node.num_outputs != 1;
}

// The head: every node before the break, returning `outputs`.
absl::StatusOr<std::shared_ptr<const Graph>> HeadGraph(
    const Graph& graph, int at, const std::vector<Crossing>& outputs,
    std::vector<int>& head_inputs) {
  GraphBuilder builder(absl::StrCat(graph.name(), ".head"));
  Copier copier(builder);
  // Placeholders the head's nodes (or outputs) read.
  std::vector<bool> read(at, false);
  for (int i = 0; i < at; ++i) {
    const Node& node = graph.node(i);
    std::function<void(const Arg&)> mark = [&](const Arg& a) {
      if (a.is_list()) {
        for (const Arg& item : a.as_list()) mark(item);
      } else if (a.is_value()) {
        read[a.as_value().node] = true;
      }
    };
    if (node.kind == NodeKind::kCallFunction ||
        node.kind == NodeKind::kGetItem) {
      for (const Arg& a : node.args) mark(a);
    }
  }
  for (const Crossing& v : outputs) read[v.node] = true;
  std::vector<std::vector<Arg>> mapped(graph.nodes().size());
  auto map = [&](const Arg& a) { return RemapArg(mapped, a); };
  for (int i = 0; i < at; ++i) {
    const Node& node = graph.node(i);
    switch (node.kind) {
      case NodeKind::kPlaceholder:
        if (!read[i]) break;
        {
          ASSIGN_OR_RETURN(ValueRef ref, builder.AddPlaceholder(node.name));
          mapped[i] = {Arg::Value(ref)};
          for (size_t k = 0; k < graph.inputs().size(); ++k) {
            if (graph.inputs()[k] == i) {
              head_inputs.push_back(static_cast<int>(k));
            }
          }
        }
        break;
      case NodeKind::kConstant:
      case NodeKind::kCallFunction:
      case NodeKind::kGetItem:
        RETURN_IF_ERROR(copier.CopyNode(graph, i, node.name, map, mapped));
        break;
      case NodeKind::kOutput:
        break;
    }
  }
  std::vector<Arg> out;
  for (const Crossing& v : outputs) {
    if (HasSeveralOutputs(graph, v)) {
      std::string name = absl::StrCat(ValueName(graph, v), ".out");
      ASSIGN_OR_RETURN(ValueRef ref,
                       builder.AddNode(name, "getitem",
                                       {mapped[v.node][0], Arg::Int(v.index)}));
      out.push_back(Arg::Value(ref));
    } else {
      out.push_back(mapped[v.node][v.index]);
    }
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(out)));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> head, builder.Finish());
  return std::shared_ptr<const Graph>(std::move(head));
}

// An argument map that can fail, as StepGraph's recomputation of size
// arguments can.
using FallibleArgMap = std::function<absl::StatusOr<Arg>(const Arg&)>;

// Copier::CopyCall of call node `node` under its own name, with a map that
// can fail: CopyCall takes a plain map, so an error is held aside and
// returned once the copy is done.
absl::StatusOr<ValueRef> CopyCallMapped(Copier& copier, const Graph& graph,
                                        const Node& node,
                                        const FallibleArgMap& map) {
  absl::Status error;
  auto plain = [&](const Arg& arg) {
    absl::StatusOr<Arg> m = map(arg);
    if (!m.ok()) {
      error = m.status();
      return Arg();
    }
    return *std::move(m);
  };
  ASSIGN_OR_RETURN(ValueRef ref,
                   copier.CopyCall(graph, node, node.name, plain));
  RETURN_IF_ERROR(error);
  return ref;
}

// The breaking node alone, its tensor arguments as placeholders.
absl::StatusOr<std::shared_ptr<const Graph>> StepGraph(
    const Graph& graph, const Node& node, std::vector<Crossing>& inputs) {
  GraphBuilder builder(absl::StrCat(graph.name(), ".", node.name));
  CrossingFinder finder(graph, graph.FindNode(node.name));
  for (const Arg& a : node.args) finder.Visit(a);
  inputs = finder.crossing();
  absl::flat_hash_map<uint64_t, Arg> placeholder;
  for (const Crossing& v : inputs) {
    ASSIGN_OR_RETURN(ValueRef ref, builder.AddPlaceholder(ValueName(graph, v)));
    placeholder[Key(v)] = Arg::Value(ref);
  }
  // Size arguments are recomputed from the placeholders; constants copied.
  Copier copier(builder);
  absl::flat_hash_map<int, Arg> copied;
  FallibleArgMap map = [&](const Arg& a) -> absl::StatusOr<Arg> {
    if (a.is_list()) {
      Arg::List items;
      for (const Arg& item : a.as_list()) {
        ASSIGN_OR_RETURN(Arg m, map(item));
        items.push_back(std::move(m));
      }
      return Arg::OfList(std::move(items));
    }
    if (!a.is_value()) return a;
    const ValueRef v = a.as_value();
    if (auto it = placeholder.find(Key(v)); it != placeholder.end()) {
      return it->second;
    }
    if (auto it = copied.find(v.node); it != copied.end()) return it->second;
    const Node& source = graph.node(v.node);
    ValueRef ref;
    if (source.kind == NodeKind::kConstant) {
      ASSIGN_OR_RETURN(ref, builder.AddConstant(source.name, source.constant));
    } else {
      ASSIGN_OR_RETURN(ref, CopyCallMapped(copier, graph, source, map));
    }
    return copied[v.node] = Arg::Value(ref);
  };
  ASSIGN_OR_RETURN(ValueRef ref, CopyCallMapped(copier, graph, node, map));
  std::vector<Arg> outputs;
  if (node.num_outputs == 1) {
    outputs.push_back(Arg::Value(ref));
  } else {
    for (int k = 0; k < node.num_outputs; ++k) {
      ASSIGN_OR_RETURN(
          ValueRef item,
          builder.AddNode(absl::StrCat(node.name, "_", k), "getitem",
                          {Arg::Value(ref), Arg::Int(k)}));
      outputs.push_back(Arg::Value(item));
    }
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> step, builder.Finish());
  return std::shared_ptr<const Graph>(std::move(step));
}

}  // namespace

std::optional<GraphBreak> FindGraphBreak(const Graph& graph) {
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.kind != NodeKind::kCallFunction) continue;
    if (node.target == kCondTarget) {
      const Arg& pred = node.args[kCondPred];
      if (!pred.is_value()) continue;
      const Node& source = graph.node(pred.as_value().node);
      if (IsSizeNode(source)) continue;
      return GraphBreak{
          GraphBreak::Kind::kPredicate, static_cast<int>(i),
          absl::StrCat("data-dependent predicate: cond '", node.name,
                       "' reads the value of '", source.name, "'")};
    }
    if (node.op != nullptr && node.op->data_dependent_output) {
      return GraphBreak{
          GraphBreak::Kind::kOutputSize, static_cast<int>(i),
          absl::StrCat("data-dependent output size: '", node.name, "' (",
                       node.target, ") computes its size from values")};
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<SegmentPlan>> PlanGraphBreak(
    std::shared_ptr<const Graph> graph) {
  std::optional<GraphBreak> at = FindGraphBreak(*graph);
  if (!at.has_value()) return std::nullopt;
  SegmentPlan plan;
  plan.at = *at;
  const int b = at->node;
  const Node& brk = graph->node(b);
  // What the rest of the graph reads from before the break.
  CrossingFinder rest(*graph, b);
  if (at->kind == GraphBreak::Kind::kPredicate) {
    rest.Visit(brk.args[kCondOperands]);
  }
  for (size_t i = b + 1; i < graph->nodes().size(); ++i) {
    const Node& node = graph->node(static_cast<int>(i));
    if (node.kind == NodeKind::kGetItem) {
      rest.VisitGetItem(node);
    } else {
      for (const Arg& a : node.args) rest.Visit(a);
    }
  }
  // The head returns what the break and the rest read, except the graph's
  // own inputs, which pass straight through.
  std::vector<Crossing> head_outputs;
  absl::flat_hash_map<uint64_t, int> head_index;
  auto source_of = [&](const Crossing& v) -> SegmentSource {
    if (graph->node(v.node).kind == NodeKind::kPlaceholder) {
      for (size_t k = 0; k < graph->inputs().size(); ++k) {
        if (graph->inputs()[k] == v.node) {
          return {SegmentSource::Kind::kInput, static_cast<int>(k)};
        }
      }
    }
    auto [it, added] =
        head_index.try_emplace(Key(v), static_cast<int>(head_outputs.size()));
    if (added) head_outputs.push_back(v);
    return {SegmentSource::Kind::kHead, it->second};
  };
  std::vector<Crossing> step_inputs;
  if (at->kind == GraphBreak::Kind::kPredicate) {
    plan.predicate = source_of(brk.args[kCondPred].as_value());
  } else {
    ASSIGN_OR_RETURN(plan.step, StepGraph(*graph, brk, step_inputs));
    for (const Crossing& v : step_inputs) {
      plan.step_inputs.push_back(source_of(v));
    }
  }
  for (const Crossing& v : rest.crossing()) {
    plan.continuation_inputs.push_back(source_of(v));
  }
  if (at->kind == GraphBreak::Kind::kOutputSize) {
    // The step's outputs come after the values crossing from before it.
    for (int k = 0; k < brk.num_outputs; ++k) {
      plan.continuation_inputs.push_back({SegmentSource::Kind::kStep, k});
    }
  }
  if (!head_outputs.empty()) {
    ASSIGN_OR_RETURN(plan.head,
                     HeadGraph(*graph, b, head_outputs, plan.head_inputs));
  }
  return plan;
}

absl::StatusOr<std::shared_ptr<const Graph>> ContinuationGraph(
    const Graph& graph, const SegmentPlan& plan, bool taken) {
  const int b = plan.at.node;
  const Node& brk = graph.node(b);
  const bool predicate = plan.at.kind == GraphBreak::Kind::kPredicate;
  GraphBuilder builder(
      absl::StrCat(graph.name(), ".", brk.name,
                   predicate ? (taken ? ".true" : ".false") : ".rest"));
  Copier copier(builder);
  // Placeholders: the crossing values (recomputed in the same order as
  // PlanGraphBreak found them), then the step's outputs.
  CrossingFinder rest(graph, b);
  if (predicate) rest.Visit(brk.args[kCondOperands]);
  for (size_t i = b + 1; i < graph.nodes().size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.kind == NodeKind::kGetItem) {
      rest.VisitGetItem(node);
    } else {
      for (const Arg& a : node.args) rest.Visit(a);
    }
  }
  absl::flat_hash_map<uint64_t, Arg> crossing;
  absl::flat_hash_set<std::string> names;
  auto unique = [&](std::string name) {
    while (graph.FindNode(name) > b || !names.insert(name).second) name += "_";
    return name;
  };
  for (const Crossing& v : rest.crossing()) {
    ASSIGN_OR_RETURN(ValueRef ref,
                     builder.AddPlaceholder(unique(ValueName(graph, v))));
    crossing[Key(v)] = Arg::Value(ref);
  }
  std::vector<std::vector<Arg>> mapped(graph.nodes().size());
  if (!predicate) {
    for (int k = 0; k < brk.num_outputs; ++k) {
      ASSIGN_OR_RETURN(
          ValueRef ref,
          builder.AddPlaceholder(unique(brk.num_outputs == 1
                                            ? brk.name
                                            : absl::StrCat(brk.name, "_", k))));
      mapped[b].push_back(Arg::Value(ref));
    }
  }
  // Values from before the break: crossing placeholders, copied constants,
  // recomputed size nodes.
  absl::Status error;
  std::function<Arg(const Arg&)> map = [&](const Arg& a) -> Arg {
    if (a.is_list()) {
      Arg::List items;
      for (const Arg& item : a.as_list()) items.push_back(map(item));
      return Arg::OfList(std::move(items));
    }
    if (!a.is_value()) return a;
    const ValueRef v = a.as_value();
    if (v.node >= b) return mapped[v.node][v.index];
    if (auto it = crossing.find(Key(v)); it != crossing.end()) {
      return it->second;
    }
    if (!mapped[v.node].empty()) return mapped[v.node][v.index];
    const Node& source = graph.node(v.node);
    absl::StatusOr<ValueRef> ref;
    if (source.kind == NodeKind::kConstant) {
      ref = builder.AddConstant(unique(source.name), source.constant);
    } else if (IsSizeNode(source)) {
      ref = copier.CopyCall(graph, source, unique(source.name), map);
    } else {
      ref = absl::InternalError(
          absl::StrCat("graph break at '", brk.name, "': value '", source.name,
                       "' neither crosses the break nor can be recomputed"));
    }
    if (!ref.ok()) {
      if (error.ok()) error = ref.status();
      return Arg();
    }
    mapped[v.node] = {Arg::Value(*ref)};
    return mapped[v.node][0];
  };
  if (predicate) {
    const Graph* branch =
        graph.subgraph(brk.args[taken ? kCondTrue : kCondFalse].as_subgraph());
    std::vector<Arg> operands;
    for (const Arg& a : brk.args[kCondOperands].as_list()) {
      operands.push_back(map(a));
    }
    RETURN_IF_ERROR(error);
    ASSIGN_OR_RETURN(
        mapped[b],
        copier.Inline(*branch, operands,
                      absl::StrCat(brk.name, ".", branch->name(), ".")));
  }
  for (size_t i = b + 1; i < graph.nodes().size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    switch (node.kind) {
      case NodeKind::kPlaceholder:
        break;
      case NodeKind::kConstant:
      case NodeKind::kCallFunction:
        RETURN_IF_ERROR(copier.CopyNode(graph, static_cast<int>(i), node.name,
                                        map, mapped));
        RETURN_IF_ERROR(error);
        break;
      case NodeKind::kGetItem: {
        const ValueRef source = node.args[0].as_value();
        const int index = static_cast<int>(node.args[1].as_int());
        if (source.node == b) {
          // The cond's (inlined) outputs or the step's, directly.
          if (index < 0 || index >= static_cast<int>(mapped[b].size())) {
            return absl::InvalidArgumentError(
                absl::StrCat("node '", node.name, "' (getitem): index ", index,
                             " out of range for a list of ", mapped[b].size()));
          }
          mapped[i] = {mapped[b][index]};
        } else if (source.node < b) {
          mapped[i] = {crossing.at(Key({source.node, index}))};
        } else {
          RETURN_IF_ERROR(copier.CopyNode(graph, static_cast<int>(i), node.name,
                                          map, mapped));
        }
        break;
      }
      case NodeKind::kOutput: {
        std::vector<Arg> outputs;
        for (const Arg& a : node.args) outputs.push_back(map(a));
        RETURN_IF_ERROR(error);
        RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
        break;
      }
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> rest_graph, builder.Finish());
  return std::shared_ptr<const Graph>(std::move(rest_graph));
}

}  // namespace guardjit
