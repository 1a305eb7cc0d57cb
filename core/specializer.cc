#include "core/specializer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/ops/control_flow.h"
#include "core/status_macros.h"
#include "core/symbol_messages.h"

namespace guardjit {
namespace {

// Whether specializing rewrites the graph: it has a cond to inline or size
// nodes to fold.
bool NeedsRewrite(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.target == kCondTarget) return true;
    if (node.op != nullptr && node.op->schema.returns_int) return true;
  }
  return false;
}

// Nodes the graph's output names (kept as nodes even when foldable).
std::vector<bool> OutputNodes(const Graph& graph) {
  std::vector<bool> out(graph.nodes().size());
  for (const Node& node : graph.nodes()) {
    if (node.kind != NodeKind::kOutput) continue;
    for (const Arg& a : node.args) {
      if (a.is_value()) out[a.as_value().node] = true;
    }
  }
  return out;
}

// Copies `graph`'s nodes into `builder` with placeholder k bound to
// inputs[k], inlining conds; returns the Args of the graph's outputs and
// their metadata.
class Inliner {
 public:
  explicit Inliner(GraphBuilder& builder) : builder_(builder) {}

  absl::StatusOr<std::vector<std::pair<Arg, TensorMeta>>> Inline(
      const Graph& graph, const std::vector<Arg>& input_args,
      const std::vector<TensorMeta>& input_metas, const std::string& prefix) {
    const int n = static_cast<int>(graph.nodes().size());
    const std::vector<bool> is_output = OutputNodes(graph);
    std::vector<std::vector<Arg>> mapped(n);
    GraphMeta values(n);
    size_t next_input = 0;
    for (int i = 0; i < n; ++i) {
      const Node& node = graph.node(i);
      const std::string name = prefix + node.name;
      switch (node.kind) {
        case NodeKind::kPlaceholder:
          mapped[i] = {input_args[next_input]};
          values[i] = {input_metas[next_input]};
          ++next_input;
          break;
        case NodeKind::kConstant: {
          ASSIGN_OR_RETURN(ValueRef ref,
                           builder_.AddConstant(name, node.constant));
          mapped[i] = {Arg::Value(ref)};
          values[i] = {TensorMeta::Of(node.constant)};
          values[i][0].device = ConstantsDevice(input_metas);
          break;
        }
        case NodeKind::kCallFunction: {
          if (node.target == kCondTarget) {
            ASSIGN_OR_RETURN(bool taken, CondBranch(node, values));
            const Graph* branch = graph.subgraph(
                node.args[taken ? kCondTrue : kCondFalse].as_subgraph());
            std::vector<Arg> args;
            std::vector<TensorMeta> metas;
            for (const Arg& a : node.args[kCondOperands].as_list()) {
              args.push_back(RemapArg(mapped, a));
              metas.push_back(values[a.as_value().node][a.as_value().index]);
            }
            ASSIGN_OR_RETURN(
                auto outs,
                Inline(*branch, args, metas,
                       absl::StrCat(name, ".", branch->name(), ".")));
            for (auto& [arg, meta] : outs) {
              mapped[i].push_back(std::move(arg));
              values[i].push_back(std::move(meta));
            }
            ++inlined_;
            break;
          }
          if (node.op->schema.returns_int && !is_output[i]) {
            // A size whose value this specialization fixes becomes a
            // literal in its users (int, int[] and Scalar slots, or a
            // wrapped number), as torch bakes specialized sizes in.
            ASSIGN_OR_RETURN(values[i], InferNode(node, values));
            const std::optional<SymInt>& v = values[i][0].sym_value;
            if (v.has_value() && !v->is_symbolic()) {
              mapped[i] = {values[i][0].dtype == DType::kBool
                               ? Arg::Bool(v->hint() != 0)
                               : Arg::Int(v->hint())};
              ++folded_;
              break;
            }
          }
          auto [args, kwargs] = UnbindArgs(
              node, [&](const Arg& a) { return RemapArg(mapped, a); });
          ASSIGN_OR_RETURN(ValueRef ref,
                           builder_.AddNode(name, node.target, std::move(args),
                                            std::move(kwargs)));
          ASSIGN_OR_RETURN(values[i], InferNode(node, values));
          mapped[i] = {Arg::Value(ref)};
          break;
        }
        case NodeKind::kGetItem: {
          const ValueRef source = node.args[0].as_value();
          const int64_t index = node.args[1].as_int();
          if (index < 0 ||
              index >= static_cast<int64_t>(values[source.node].size())) {
            return absl::InvalidArgumentError(absl::StrCat(
                "node '", node.name, "' (getitem): index ", index,
                " out of range for a list of ", values[source.node].size()));
          }
          values[i] = {values[source.node][index]};
          if (graph.node(source.node).target == kCondTarget) {
            mapped[i] = {mapped[source.node][index]};
          } else {
            ASSIGN_OR_RETURN(
                ValueRef ref,
                builder_.AddNode(name, "getitem",
                                 {mapped[source.node][0], Arg::Int(index)}));
            mapped[i] = {Arg::Value(ref)};
          }
          break;
        }
        case NodeKind::kOutput: {
          std::vector<std::pair<Arg, TensorMeta>> outs;
          for (const Arg& a : node.args) {
            outs.emplace_back(RemapArg(mapped, a),
                              values[a.as_value().node][a.as_value().index]);
          }
          return outs;
        }
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph.name(), "' has no output node"));
  }

  int inlined() const { return inlined_; }
  int folded() const { return folded_; }

 private:
  GraphBuilder& builder_;
  int inlined_ = 0;
  int folded_ = 0;
};

}  // namespace

absl::StatusOr<SpecializedGraph> SpecializeGraph(
    std::shared_ptr<const Graph> graph, absl::Span<const TensorMeta> inputs,
    absl::Span<const InputValues> values) {
  RETURN_IF_ERROR(CheckInputCount(*graph, inputs.size()));
  SpecializedGraph out;
  if (values.empty() && !NeedsRewrite(*graph)) {
    ASSIGN_OR_RETURN(out.meta, InferShapes(*graph, inputs));
    out.graph = std::move(graph);
    return out;
  }
  GraphBuilder builder(graph->name());
  std::vector<Arg> input_args;
  std::vector<TensorMeta> input_metas(inputs.begin(), inputs.end());
  for (int i : graph->inputs()) {
    ASSIGN_OR_RETURN(ValueRef ref, builder.AddPlaceholder(graph->node(i).name));
    input_args.push_back(Arg::Value(ref));
  }
  // A value-specialized input's uses read a constant of its values.
  for (const InputValues& v : values) {
    if (v.input < 0 || v.input >= static_cast<int>(input_args.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("values given for input ", v.input, " of a graph with ",
                       input_args.size(), " inputs"));
    }
    ASSIGN_OR_RETURN(Tensor constant, ValuesTensor(v));
    const std::string& name = graph->node(graph->inputs()[v.input]).name;
    TensorMeta meta = TensorMeta::Of(constant);
    meta.device = ConstantsDevice(input_metas);
    ASSIGN_OR_RETURN(ValueRef ref,
                     builder.AddConstant(absl::StrCat("#", name, ".value"),
                                         std::move(constant)));
    input_args[v.input] = Arg::Value(ref);
    input_metas[v.input] = std::move(meta);
  }
  Inliner inliner(builder);
  ASSIGN_OR_RETURN(auto outs,
                   inliner.Inline(*graph, input_args, input_metas, ""));
  std::vector<Arg> output_args;
  for (auto& [arg, meta] : outs) output_args.push_back(arg);
  RETURN_IF_ERROR(builder.SetOutputs(std::move(output_args)));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> flat, builder.Finish());
  out.inlined_conds = inliner.inlined();
  out.folded_sizes = inliner.folded();
  ASSIGN_OR_RETURN(out.meta, InferShapes(*flat, inputs));
  out.graph = std::move(flat);
  return out;
}

absl::StatusOr<SpecializedCall> SpecializeCall(
    std::shared_ptr<const Graph> graph,
    const std::vector<std::string>& input_names, const CallSignature& call,
    std::vector<DynamicDim> dynamic, absl::Span<const InputValues> values) {
  SpecializedCall out;
  auto& [env, symbolic, specialized] = out;
  for (bool again = true; again;) {
    env = ShapeEnv();
    {
      ShapeEnv::Scope scope(&env);
      symbolic = MakeSymbolicInputs(input_names, call, dynamic, env);
      auto result = SpecializeGraph(graph, symbolic.metas, values);
      if (!result.ok()) return WithSymbolSources(result.status(), env);
      specialized = *std::move(result);
    }
    again = false;
    for (const SymbolicGuards::DimBinding& b : symbolic.symbolic.dims) {
      if (!env.IsPinned(b.symbol)) continue;
      std::erase_if(dynamic, [&](const DynamicDim& d) {
        return d.input == b.input && d.dim == b.dim;
      });
      again = true;
    }
  }
  return out;
}

}  // namespace guardjit
