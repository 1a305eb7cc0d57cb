#include "runtime/eager_interpreter.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/shape_inference.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

void ForEachValueRef(const Arg& arg, const std::function<void(ValueRef)>& f) {
  if (arg.is_value()) f(arg.as_value());
  if (arg.is_list()) {
    for (const Arg& item : arg.as_list()) ForEachValueRef(item, f);
  }
}

// Whether `t`'s memory overlaps none of `inputs`'.
bool OverlapsNone(const Tensor& t, absl::Span<const Tensor> inputs) {
  const ByteRange range = MemoryRange(t);
  for (const Tensor& in : inputs) {
    if (range.Overlaps(MemoryRange(in))) return false;
  }
  return true;
}

std::string Label(const Node& node) {
  return absl::StrCat("node '", node.name, "' (", node.target, ")");
}

absl::Status CheckKernelOutputs(const Node& node,
                                const std::vector<TensorMeta>& expected,
                                const std::vector<Tensor>& got) {
  if (expected.size() != got.size()) {
    return absl::InternalError(absl::StrCat(Label(node), ": kernel returned ",
                                            got.size(), " outputs, shape rule ",
                                            expected.size()));
  }
  for (size_t i = 0; i < got.size(); ++i) {
    // Planned metadata is concrete: compare the values directly.
    const auto hint = [](const SymInt& s) { return s.hint(); };
    if (got[i].dtype() != expected[i].dtype ||
        !std::equal(got[i].sizes().begin(), got[i].sizes().end(),
                    expected[i].sizes.begin(), expected[i].sizes.end(),
                    [&](int64_t g, const SymInt& e) { return g == hint(e); })) {
      return absl::InternalError(absl::StrCat(
          Label(node), ": kernel output ", i, " is ", got[i].DebugString(),
          ", shape rule says ", expected[i].ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<EagerInterpreter>> EagerInterpreter::Create(
    std::shared_ptr<const Graph> graph, const KernelRegistry& registry) {
  if (graph == nullptr) return absl::InvalidArgumentError("graph is null");
  const int n = static_cast<int>(graph->nodes().size());
  std::vector<const KernelFn*> kernels(n, nullptr);
  std::vector<int> last_use(n, -1);
  std::vector<CondBranches> branches(n);
  for (int i = 0; i < n; ++i) {
    const Node& node = graph->node(i);
    if (node.target == kCondTarget) {
      // The branches share the parent graph's lifetime.
      auto branch = [&](int arg) {
        return std::shared_ptr<const Graph>(
            graph, graph->subgraph(node.args[arg].as_subgraph()));
      };
      ASSIGN_OR_RETURN(branches[i].if_true,
                       Create(branch(kCondTrue), registry));
      ASSIGN_OR_RETURN(branches[i].if_false,
                       Create(branch(kCondFalse), registry));
    }
    if (node.kind == NodeKind::kCallFunction) {
      kernels[i] = registry.Find(node.target);
      if (kernels[i] == nullptr) {
        return absl::UnimplementedError(
            absl::StrCat(Label(node), ": no reference kernel"));
      }
    }
    for (const Arg& a : node.args) {
      ForEachValueRef(a, [&](ValueRef v) { last_use[v.node] = i; });
    }
  }
  std::vector<std::vector<int>> release_after(n);
  for (int v = 0; v < n; ++v) {
    // Outputs are used by the output node; never release placeholders early
    // (they are borrowed anyway) or values nobody reads (released at the end).
    if (last_use[v] >= 0 && graph->node(v).kind != NodeKind::kPlaceholder) {
      release_after[last_use[v]].push_back(v);
    }
  }
  std::unique_ptr<EagerInterpreter> interpreter(
      new EagerInterpreter(graph, std::move(kernels), std::move(release_after),
                           std::move(branches)));
  interpreter->PlanOutputWrites(registry);
  return interpreter;
}

void EagerInterpreter::PlanOutputWrites(const KernelRegistry& registry) {
  const Graph& graph = *graph_;
  const int n = static_cast<int>(graph.nodes().size());
  int last = -1;
  for (int i = 0; i < n; ++i) {
    if (graph.node(i).kind == NodeKind::kCallFunction) last = i;
  }
  const bool last_writes =
      last >= 0 && branches_[last].if_true == nullptr &&
      registry.writes_destinations(graph.node(last).target);
  if (last_writes) in_place_node_ = last;
  const Node& out = graph.output_node();
  copy_reasons_.assign(out.args.size(), std::string());
  std::vector<ValueRef> produced;
  for (size_t k = 0; k < out.args.size(); ++k) {
    std::string& reason = copy_reasons_[k];
    if (!out.args[k].is_value()) continue;
    ValueRef v = out.args[k].as_value();
    // getitem(node, i) is output i of the node itself.
    while (graph.node(v.node).kind == NodeKind::kGetItem) {
      const Node& item = graph.node(v.node);
      v = ValueRef{item.args[0].as_value().node,
                   static_cast<int>(item.args[1].as_int())};
    }
    produced.push_back(v);
    const Node& node = graph.node(v.node);
    bool repeated = false;
    for (size_t j = 0; j + 1 < produced.size(); ++j) {
      if (produced[j].node == v.node && produced[j].index == v.index) {
        reason = absl::StrCat("the same memory as output ", j);
        if (copy_reasons_[j].empty()) {
          copy_reasons_[j] = absl::StrCat("the same memory as output ", k);
        }
        repeated = true;
        break;
      }
    }
    if (repeated) continue;
    if (node.kind == NodeKind::kPlaceholder) {
      const auto& inputs = graph.inputs();
      const int input = static_cast<int>(
          std::find(inputs.begin(), inputs.end(), v.node) - inputs.begin());
      reason = absl::StrCat("a view of input ", input, " ('", node.name, "')");
    } else if (node.kind == NodeKind::kConstant) {
      reason = absl::StrCat("a view of constant '", node.name, "'");
    } else if (v.node != last) {
      reason = absl::StrCat("computed before ", Label(graph.node(last)),
                            ", which can still fail");
    } else if (!last_writes) {
      reason = absl::StrCat("the reference kernel of ", Label(node),
                            " allocates its results");
    } else {
      in_place_.emplace_back(static_cast<int>(k), v.index);
    }
  }
  // An output repeated later is not written in place either.
  std::erase_if(in_place_, [&](const std::pair<int, int>& w) {
    return !copy_reasons_[w.first].empty();
  });
}

std::string EagerInterpreter::DescribeOutputCopies() const {
  std::string copies;
  const Node& out = graph_->output_node();
  for (size_t k = 0; k < copy_reasons_.size(); ++k) {
    if (copy_reasons_[k].empty()) continue;
    std::string name;
    if (out.args[k].is_value()) {
      name = absl::StrCat(" '", graph_->node(out.args[k].as_value().node).name,
                          "'");
    }
    absl::StrAppend(&copies, copies.empty() ? "outputs copied: " : ", ", k,
                    name, " (", copy_reasons_[k], ")");
  }
  return copies;
}

absl::StatusOr<std::vector<Tensor>> EagerInterpreter::RunCond(
    const Node& node, int index,
    const std::vector<std::vector<Tensor>>& values) const {
  const Arg& pred = node.args[kCondPred];
  bool taken;
  if (pred.is_value()) {
    const Tensor& t = values[pred.as_value().node][pred.as_value().index];
    if (t.numel() != 1 || IsFloating(t.dtype())) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(node),
                       ": the predicate must be one bool or "
                       "integer, got ",
                       t.DebugString()));
    }
    taken = t.ItemAsInt64() != 0;
  } else {
    taken = pred.is_bool() ? pred.as_bool() : pred.as_int() != 0;
  }
  std::vector<Tensor> operands;
  for (const Arg& a : node.args[kCondOperands].as_list()) {
    operands.push_back(values[a.as_value().node][a.as_value().index]);
  }
  const CondBranches& b = branches_[index];
  auto out = (taken ? b.if_true : b.if_false)->Run(operands);
  if (!out.ok()) {
    return absl::Status(
        out.status().code(),
        absl::StrCat(Label(node), ", branch '",
                     (taken ? b.if_true : b.if_false)->graph().name(),
                     "': ", out.status().message()));
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> EagerInterpreter::Run(
    absl::Span<const Tensor> inputs, const GraphMeta* planned,
    const RunContext& ctx) const {
  const Graph& graph = *graph_;
  RETURN_IF_ERROR(CheckInputCount(graph, inputs.size()));
  const int n = static_cast<int>(graph.nodes().size());
  if (planned != nullptr && !ctx.destinations.empty()) {
    const Node& out = graph.node(n - 1);
    for (size_t k = 0; k < out.args.size(); ++k) {
      const ValueRef v = out.args[k].as_value();
      const TensorMeta& meta = (*planned)[v.node][v.index];
      RETURN_IF_ERROR(CheckDestination(ctx, k, meta.dtype, meta.shape()));
    }
  }
  const bool stoppable = ctx.stoppable();
  std::vector<std::vector<Tensor>> values(n);
  GraphMeta inferred(planned ? 0 : n);
  const GraphMeta& metas = planned ? *planned : inferred;
  size_t next_input = 0;
  std::vector<Tensor> outputs;
  for (int i = 0; i < n; ++i) {
    const Node& node = graph.node(i);
    if (stoppable && node.kind == NodeKind::kCallFunction) {
      if (absl::Status stop = ctx.CheckStop(); !stop.ok()) {
        return absl::Status(
            stop.code(), absl::StrCat(stop.message(), " before ", Label(node)));
      }
    }
    switch (node.kind) {
      case NodeKind::kPlaceholder: {
        const Tensor& t = inputs[next_input++];
        if (!t.device().is_cpu()) {
          return absl::UnimplementedError(absl::StrCat(
              "input '", node.name, "' is on ", t.device().ToString(),
              "; the eager interpreter runs on cpu"));
        }
        values[i] = {t};
        if (!planned) inferred[i] = {TensorMeta::Of(t)};
        break;
      }
      case NodeKind::kConstant:
        values[i] = {node.constant};
        if (!planned) inferred[i] = {TensorMeta::Of(node.constant)};
        break;
      case NodeKind::kCallFunction: {
        if (branches_[i].if_true != nullptr) {
          ASSIGN_OR_RETURN(values[i], RunCond(node, i, values));
          if (!planned) {
            for (const Tensor& t : values[i])
              inferred[i].push_back(TensorMeta::Of(t));
          }
          break;
        }
        // No shape rule sizes a data-dependent op's outputs: its kernel does,
        // and its metadata is read off the results. Planned metadata cannot
        // include it (shape inference stops there: a graph break).
        const bool data_dependent =
            node.op != nullptr && node.op->data_dependent_output;
        if (data_dependent && planned) {
          return absl::FailedPreconditionError(absl::StrCat(
              Label(node),
              ": its output size depends on input values (a graph break); "
              "it runs only without planned metadata"));
        }
        if (!planned && !data_dependent) {
          ASSIGN_OR_RETURN(inferred[i], InferNode(node, inferred));
        }
        KernelArgs args(
            node, [&](ValueRef v) { return values[v.node][v.index]; },
            [](const Scalar& s) { return Tensor::WrappedNumber(s); });
        // The last node writes its outputs into their destinations: nothing
        // that can fail runs after it (planned, so no shape rule either).
        absl::InlinedVector<const Tensor*, 4> dests;
        if (i == in_place_node_ && planned != nullptr && !stoppable) {
          dests.assign(metas[i].size(), nullptr);
          for (const auto& [k, index] : in_place_) {
            const Tensor* dest = ctx.destination(k);
            if (dest == nullptr || !OverlapsNone(*dest, inputs)) continue;
            dests[index] = dest;
          }
          args.set_destinations(dests);
        }
        auto result = (*kernels_[i])(
            args, data_dependent ? absl::Span<const TensorMeta>() : metas[i]);
        if (!result.ok()) {
          return absl::Status(
              result.status().code(),
              absl::StrCat(Label(node), ": ", result.status().message()));
        }
        if (data_dependent) {
          for (const Tensor& t : *result) {
            inferred[i].push_back(TensorMeta::Of(t));
          }
        } else {
          RETURN_IF_ERROR(CheckKernelOutputs(node, metas[i], *result));
        }
        values[i] = *std::move(result);
        break;
      }
      case NodeKind::kGetItem: {
        ValueRef source = node.args[0].as_value();
        int64_t index = node.args[1].as_int();
        if (index >= static_cast<int64_t>(values[source.node].size())) {
          return absl::InvalidArgumentError(absl::StrCat(
              Label(node), ": index ", index, " out of range for a list of ",
              values[source.node].size()));
        }
        values[i] = {values[source.node][index]};
        if (!planned) inferred[i] = {inferred[source.node][index]};
        break;
      }
      case NodeKind::kOutput:
        for (const Arg& a : node.args) {
          ValueRef v = a.as_value();
          outputs.push_back(values[v.node][v.index]);
        }
        break;
    }
    for (int v : release_after_[i]) values[v].clear();
  }
  return outputs;
}

}  // namespace guardjit
