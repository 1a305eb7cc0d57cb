#include "core/graph_builder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/graph_breaks.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

std::string NodeLabel(const Node& node) {
  if (node.kind == NodeKind::kCallFunction || node.kind == NodeKind::kGetItem) {
    return absl::StrCat("node '", node.name, "' (", node.target, ")");
  }
  return absl::StrCat(NodeKindName(node.kind), " '", node.name, "'");
}

absl::Status NodeError(absl::StatusCode code, const Node& node,
                       absl::string_view what) {
  return absl::Status(code, absl::StrCat(NodeLabel(node), ": ", what));
}

absl::Status ArgError(const Node& node, absl::string_view arg,
                      absl::string_view what) {
  return NodeError(absl::StatusCode::kInvalidArgument, node,
                   absl::StrCat("argument '", arg, "': ", what));
}

// Whether shape inference stopped at or after the graph's first break (a
// cond over tensor values, an op whose output size depends on values): every
// node before it checked out, and what follows is checked when a call
// reaches it. `failed_node` is InferShapes' report of the node that failed.
bool StopsAtGraphBreak(const Graph& graph, const absl::Status& status,
                       int failed_node) {
  if (status.code() != absl::StatusCode::kUnimplemented) return false;
  const std::optional<GraphBreak> at = FindGraphBreak(graph);
  return at.has_value() && failed_node >= at->node;
}

bool IsGetItemTarget(absl::string_view target) {
  return target == "getitem" || target == "operator.getitem" ||
         target == "<built-in function getitem>";
}

// Whether a written argument names node `name` (a NameRef, in lists too).
bool NamesNode(const Arg& arg, absl::string_view name) {
  if (arg.is_name_ref()) return arg.as_name_ref() == name;
  if (arg.is_list()) {
    for (const Arg& item : arg.as_list()) {
      if (NamesNode(item, name)) return true;
    }
  }
  return false;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string name, const OpRegistry& registry)
    : registry_(registry), graph_(std::make_unique<Graph>()) {
  graph_->name_ = std::move(name);
}

absl::Status GraphBuilder::CheckNewName(const std::string& name) const {
  if (name.empty())
    return absl::InvalidArgumentError("a node has an empty name");
  if (outputs_set_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot add '", name, "' after the outputs were set"));
  }
  if (graph_->index_.contains(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("duplicate node name '", name, "'"));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::RenameNode(int node, std::string name) {
  if (node < 0 || node >= static_cast<int>(graph_->nodes_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("node #", node, " does not exist"));
  }
  Node& n = graph_->nodes_[node];
  if (n.kind == NodeKind::kPlaceholder || n.kind == NodeKind::kOutput) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", n.name, "' is an input or the output node; not renamed"));
  }
  if (n.name == name) return absl::OkStatus();
  RETURN_IF_ERROR(CheckNewName(name));
  for (size_t i = node + 1; i < graph_->nodes_.size(); ++i) {
    const Node& later = graph_->nodes_[i];
    bool named = false;
    for (const Arg& a : later.written_args) named |= NamesNode(a, n.name);
    for (const auto& [key, a] : later.written_kwargs) {
      named |= NamesNode(a, n.name);
    }
    if (named) {
      return absl::FailedPreconditionError(
          absl::StrCat("node '", later.name, "' refers to '", n.name,
                       "' by name; it cannot be renamed"));
    }
  }
  graph_->index_.erase(n.name);
  n.name = std::move(name);
  graph_->index_[n.name] = node;
  return absl::OkStatus();
}

absl::StatusOr<ValueRef> GraphBuilder::AddPlaceholder(
    std::string name, std::optional<TensorMeta> meta) {
  RETURN_IF_ERROR(CheckNewName(name));
  Node node;
  node.name = std::move(name);
  node.kind = NodeKind::kPlaceholder;
  node.target = node.name;
  node.meta = std::move(meta);
  int index = static_cast<int>(graph_->nodes_.size());
  graph_->inputs_.push_back(index);
  graph_->index_[node.name] = index;
  graph_->nodes_.push_back(std::move(node));
  return ValueRef{index, 0};
}

absl::Status GraphBuilder::MarkValueSpecialized(const std::string& name) {
  auto it = graph_->index_.find(name);
  if (it == graph_->index_.end() ||
      graph_->nodes_[it->second].kind != NodeKind::kPlaceholder) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph '", graph_->name_, "': no input named '", name, "'"));
  }
  Node& node = graph_->nodes_[it->second];
  if (node.meta.has_value()) {
    const TensorMeta& meta = *node.meta;
    const std::string what = absl::StrCat(
        "graph '", graph_->name_, "': value-specialized input '", name, "' ");
    if (!IsValueInputDType(meta.dtype)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, "must be an integer, bool, float32 or float64 tensor, not ",
          DTypeName(meta.dtype)));
    }
    int64_t n = 1;
    for (const SymInt& s : meta.sizes) {
      if (!s.is_symbolic()) n *= s.hint();
    }
    if (n > kMaxSpecializedValues) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, "may have at most ", kMaxSpecializedValues,
                       " elements, and it is ", meta.ToString()));
    }
  }
  node.specialize_value = true;
  return absl::OkStatus();
}

absl::StatusOr<ValueRef> GraphBuilder::AddConstant(std::string name,
                                                   Tensor value) {
  RETURN_IF_ERROR(CheckNewName(name));
  Node node;
  node.name = std::move(name);
  node.kind = NodeKind::kConstant;
  node.target = node.name;
  node.constant = std::move(value);
  int index = static_cast<int>(graph_->nodes_.size());
  graph_->index_[node.name] = index;
  graph_->nodes_.push_back(std::move(node));
  return ValueRef{index, 0};
}

absl::StatusOr<Arg> GraphBuilder::Resolve(const Node& node,
                                          absl::string_view what,
                                          const Arg& arg) const {
  if (arg.is_name_ref()) {
    auto it = graph_->index_.find(arg.as_name_ref());
    if (it == graph_->index_.end()) {
      return NodeError(absl::StatusCode::kInvalidArgument, node,
                       absl::StrCat(what, " refers to '", arg.as_name_ref(),
                                    "', which is not defined before it"));
    }
    return Arg::Value(ValueRef{it->second, 0});
  }
  if (arg.is_value()) {
    ValueRef v = arg.as_value();
    if (v.node < 0 || v.node >= static_cast<int>(graph_->nodes_.size())) {
      return NodeError(absl::StatusCode::kInvalidArgument, node,
                       absl::StrCat(what, " refers to node #", v.node,
                                    ", which is not defined before it"));
    }
  }
  if (arg.is_list()) {
    Arg::List items;
    for (size_t i = 0; i < arg.as_list().size(); ++i) {
      ASSIGN_OR_RETURN(Arg item, Resolve(node, absl::StrCat(what, "[", i, "]"),
                                         arg.as_list()[i]));
      items.push_back(std::move(item));
    }
    return Arg::OfList(std::move(items));
  }
  if (arg.is_subgraph() && !graph_->subgraphs_.contains(arg.as_subgraph())) {
    return NodeError(absl::StatusCode::kInvalidArgument, node,
                     absl::StrCat(what, " names subgraph '", arg.as_subgraph(),
                                  "', which the graph does not have"));
  }
  return arg;
}

absl::Status GraphBuilder::CheckTensorRef(const Node& node,
                                          absl::string_view what,
                                          const Arg& arg) const {
  const Node& producer = graph_->nodes_[arg.as_value().node];
  if (producer.num_outputs != 1) {
    return ArgError(node, what,
                    absl::StrCat("'", producer.name,
                                 "' returns several values; select one with a "
                                 "getitem node"));
  }
  return absl::OkStatus();
}

bool GraphBuilder::IsIntValue(const Arg& arg) const {
  if (!arg.is_value()) return false;
  const Node& producer = graph_->nodes_[arg.as_value().node];
  return producer.op != nullptr && producer.op->schema.returns_int;
}

absl::Status GraphBuilder::CheckArg(const Node& node, const ArgSchema& schema,
                                    Arg& arg) const {
  const std::string& what = schema.name;
  auto expected = [&](absl::string_view kind) {
    return ArgError(node, what,
                    absl::StrCat("expected ", kind, ", got ", arg.kind_name()));
  };
  if (arg.is_none()) {
    if (schema.optional || schema.type == ArgType::kAny ||
        schema.type == ArgType::kLayout || schema.type == ArgType::kGenerator ||
        schema.type == ArgType::kMemoryFormat) {
      return absl::OkStatus();
    }
    return ArgError(
        node, what,
        absl::StrCat("expected ", ArgTypeName(schema.type), ", got None"));
  }
  switch (schema.type) {
    case ArgType::kTensor:
      if (arg.is_value()) return CheckTensorRef(node, what, arg);
      if (arg.is_number()) return absl::OkStatus();  // wrapped number
      return expected("Tensor");
    case ArgType::kTensorList:
      if (!arg.is_list()) return expected("Tensor[]");
      for (const Arg& item : arg.as_list()) {
        if (item.is_none() && schema.optional_elements) continue;
        if (!item.is_value()) {
          return ArgError(node, what,
                          absl::StrCat("expected Tensor[] elements, got ",
                                       item.kind_name()));
        }
        RETURN_IF_ERROR(CheckTensorRef(node, what, item));
      }
      return absl::OkStatus();
    case ArgType::kScalar:
      if (arg.is_number() || IsIntValue(arg)) return absl::OkStatus();
      return expected("Scalar");
    case ArgType::kInt:
      if (arg.is_int() || IsIntValue(arg)) return absl::OkStatus();
      return expected("int");
    case ArgType::kFloat:
      if (arg.is_float()) return absl::OkStatus();
      if (arg.is_int()) {
        arg = Arg::Float(static_cast<double>(arg.as_int()));
        return absl::OkStatus();
      }
      return expected("float");
    case ArgType::kBool:
      if (arg.is_bool()) return absl::OkStatus();
      return expected("bool");
    case ArgType::kString:
      if (arg.is_string()) return absl::OkStatus();
      return expected("str");
    case ArgType::kScalarType:
      if (arg.is_dtype()) return absl::OkStatus();
      if (arg.is_string()) {
        if (auto d = DTypeFromName(arg.as_string())) {
          arg = Arg::OfDType(*d);
          return absl::OkStatus();
        }
        return ArgError(node, what,
                        absl::StrCat("unknown dtype '", arg.as_string(), "'"));
      }
      return expected("dtype");
    case ArgType::kDevice:
      if (arg.is_device()) return absl::OkStatus();
      if (arg.is_string()) {
        if (auto d = Device::Parse(arg.as_string())) {
          arg = Arg::OfDevice(*d);
          return absl::OkStatus();
        }
        return ArgError(node, what,
                        absl::StrCat("unknown device '", arg.as_string(), "'"));
      }
      return expected("Device");
    case ArgType::kIntList:
    case ArgType::kFloatList:
    case ArgType::kBoolList: {
      if (arg.is_int() && schema.type == ArgType::kIntList) {
        // ATen accepts a single int for int[N] (and int[1] dims).
        arg = Arg::OfList(Arg::List(std::max(schema.fixed_list_size, 1), arg));
      } else if (schema.type == ArgType::kIntList && arg.is_list() &&
                 schema.expands_one_value && arg.as_list().size() == 1) {
        // And the pooling kernels expand a one-value window list
        // (avg_pool2d(..., padding=[1]) as torch exports it).
        const Arg one = arg.as_list()[0];
        arg = Arg::OfList(Arg::List(schema.fixed_list_size, one));
      }
      if (!arg.is_list()) return expected(ArgTypeName(schema.type));
      for (Arg& item : arg.mutable_list()) {
        bool ok = schema.type == ArgType::kIntList
                      ? item.is_int() || IsIntValue(item)
                  : schema.type == ArgType::kBoolList ? item.is_bool()
                                                      : item.is_number();
        if (!ok) {
          return ArgError(node, what,
                          absl::StrCat("expected ", ArgTypeName(schema.type),
                                       " elements, got ", item.kind_name()));
        }
      }
      // An empty list is ATen's "unset" for int[N] (max_pool2d's stride=[]);
      // the op's rule decides what it means.
      if (schema.fixed_list_size > 1 && !arg.as_list().empty() &&
          static_cast<int>(arg.as_list().size()) != schema.fixed_list_size) {
        return ArgError(node, what,
                        absl::StrCat("expected ", schema.fixed_list_size,
                                     " values, got ", arg.as_list().size()));
      }
      return absl::OkStatus();
    }
    case ArgType::kGraph:
      if (arg.is_subgraph()) return absl::OkStatus();
      return expected("subgraph");
    case ArgType::kLayout:
    case ArgType::kMemoryFormat:
    case ArgType::kGenerator:
      return absl::OkStatus();  // accepted and ignored: strided CPU/GPU only
    case ArgType::kAny:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::BindCall(Node& node, std::vector<Arg> args,
                                    Kwargs kwargs) const {
  const OpSchema& schema = node.op->schema;
  int max_positional = 0;
  for (const ArgSchema& a : schema.args) max_positional += a.kwarg_only ? 0 : 1;
  if (static_cast<int>(args.size()) > max_positional) {
    return NodeError(
        absl::StatusCode::kInvalidArgument, node,
        absl::StrCat("takes at most ", max_positional,
                     " positional arguments but ", args.size(),
                     " were given (schema: ", schema.ToString(), ")"));
  }
  std::vector<std::optional<Arg>> bound(schema.args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    ASSIGN_OR_RETURN(
        bound[i],
        Resolve(node, absl::StrCat("argument '", schema.args[i].name, "'"),
                args[i]));
  }
  for (auto& [name, value] : kwargs) {
    int index = schema.ArgIndex(name);
    if (index < 0) {
      return NodeError(absl::StatusCode::kInvalidArgument, node,
                       absl::StrCat("unexpected keyword argument '", name,
                                    "' (schema: ", schema.ToString(), ")"));
    }
    if (bound[index].has_value()) {
      return NodeError(
          absl::StatusCode::kInvalidArgument, node,
          absl::StrCat("got multiple values for argument '", name, "'"));
    }
    ASSIGN_OR_RETURN(
        bound[index],
        Resolve(node, absl::StrCat("argument '", name, "'"), value));
  }
  node.args.clear();
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const ArgSchema& a = schema.args[i];
    if (!bound[i].has_value()) {
      if (!a.default_value.has_value()) {
        return NodeError(absl::StatusCode::kInvalidArgument, node,
                         absl::StrCat("missing required argument '", a.name,
                                      "' (schema: ", schema.ToString(), ")"));
      }
      bound[i] = *a.default_value;
    }
    RETURN_IF_ERROR(CheckArg(node, a, *bound[i]));
    node.args.push_back(*std::move(bound[i]));
  }
  return absl::OkStatus();
}

absl::StatusOr<ValueRef> GraphBuilder::AddNode(std::string name,
                                               std::string target,
                                               std::vector<Arg> args,
                                               Kwargs kwargs) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", graph_->nodes_.size(), " (", target, ") has an empty name"));
  }
  RETURN_IF_ERROR(CheckNewName(name));
  Node node;
  node.name = std::move(name);
  node.target = std::move(target);
  node.written_args = args;
  node.written_kwargs = kwargs;
  if (IsGetItemTarget(node.target)) {
    node.kind = NodeKind::kGetItem;
    node.target = "getitem";
    if (args.size() != 2 || !kwargs.empty() || !args[1].is_int()) {
      return NodeError(absl::StatusCode::kInvalidArgument, node,
                       "expects (value, index: int)");
    }
    ASSIGN_OR_RETURN(Arg source, Resolve(node, "argument 0", args[0]));
    if (!source.is_value()) {
      return ArgError(
          node, "0", absl::StrCat("expected a node, got ", source.kind_name()));
    }
    const Node& producer = graph_->nodes_[source.as_value().node];
    int64_t index = args[1].as_int();
    int n = producer.num_outputs;
    if (n == 1 || index < 0 || (n > 0 && index >= n)) {
      return ArgError(
          node, "1",
          absl::StrCat("index ", index, " out of range for '", producer.name,
                       "', which returns ",
                       n < 0 ? "a list" : absl::StrCat(n, " value(s)")));
    }
    node.args = {source, args[1]};
  } else {
    node.kind = NodeKind::kCallFunction;
    node.op = registry_.Find(node.target);
    if (node.op == nullptr) {
      return NodeError(absl::StatusCode::kUnimplemented, node,
                       absl::StrCat("unknown target '", node.target, "'"));
    }
    RETURN_IF_ERROR(BindCall(node, std::move(args), std::move(kwargs)));
    node.num_outputs =
        node.op->schema.returns_list ? -1 : node.op->schema.num_returns;
  }
  int index = static_cast<int>(graph_->nodes_.size());
  graph_->index_[node.name] = index;
  graph_->nodes_.push_back(std::move(node));
  return ValueRef{index, 0};
}

absl::Status GraphBuilder::AddSubgraph(std::string name,
                                       std::unique_ptr<Graph> graph) {
  if (graph == nullptr) return absl::InvalidArgumentError("subgraph is null");
  auto [it, inserted] =
      graph_->subgraphs_.try_emplace(std::move(name), std::move(graph));
  if (!inserted) {
    return absl::InvalidArgumentError(
        absl::StrCat("duplicate subgraph '", it->first, "'"));
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::SetOutputs(std::vector<Arg> outputs) {
  if (outputs_set_) return absl::FailedPreconditionError("outputs already set");
  Node node;
  node.name = "output";
  node.kind = NodeKind::kOutput;
  node.target = "output";
  node.written_args = outputs;
  if (outputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph_->name_, "' has no outputs"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string what = absl::StrCat("output ", i);
    ASSIGN_OR_RETURN(Arg out, Resolve(node, what, outputs[i]));
    if (!out.is_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph '", graph_->name_, "': ", what,
                       " must refer to a value, got ", out.kind_name()));
    }
    RETURN_IF_ERROR(CheckTensorRef(node, what, out));
    node.args.push_back(std::move(out));
  }
  graph_->nodes_.push_back(std::move(node));
  outputs_set_ = true;
  output_specs_.assign(outputs.size(), IoSpec());
  return absl::OkStatus();
}

absl::Status GraphBuilder::SetInputSpec(const std::string& name, IoSpec spec) {
  auto it = graph_->index_.find(name);
  if (it == graph_->index_.end() ||
      graph_->nodes_[it->second].kind != NodeKind::kPlaceholder) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph '", graph_->name_, "': no input named '", name, "'"));
  }
  RETURN_IF_ERROR(ValidateIoSpec(
      spec, absl::StrCat("graph '", graph_->name_, "': input '", name, "'")));
  Node& node = graph_->nodes_[it->second];
  if (spec.IsFullyStatic()) {
    Shape sizes;
    for (const IoDim& d : *spec.dims) sizes.push_back(d.size);
    node.meta = TensorMeta(*spec.dtype, sizes);
  } else {
    node.meta.reset();
  }
  input_specs_[name] = std::move(spec);
  return absl::OkStatus();
}

absl::Status GraphBuilder::SetOutputSpec(int index, IoSpec spec) {
  if (!outputs_set_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "graph '", graph_->name_, "': output specs are set after the outputs"));
  }
  const int n = static_cast<int>(output_specs_.size());
  if (index < 0 || index >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph_->name_, "': output ", index,
                     " is out of range (the graph has ", n, " outputs)"));
  }
  RETURN_IF_ERROR(ValidateIoSpec(
      spec, absl::StrCat("graph '", graph_->name_, "': output ", index)));
  output_specs_[index] = std::move(spec);
  return absl::OkStatus();
}

absl::Status GraphBuilder::CheckOutputSpecs(const GraphMeta& inferred) const {
  const Node& out = graph_->output_node();
  for (size_t i = 0; i < output_specs_.size(); ++i) {
    const IoSpec& spec = output_specs_[i];
    const ValueRef v = out.args[i].as_value();
    if (v.node >= static_cast<int>(inferred.size()) ||
        v.index >= static_cast<int>(inferred[v.node].size())) {
      continue;  // past a graph break: checked when a call reaches it
    }
    const TensorMeta& meta = inferred[v.node][v.index];
    bool agrees = !spec.dtype || *spec.dtype == meta.dtype;
    if (spec.dims) {
      agrees &= spec.rank() == meta.dim();
      for (int k = 0; agrees && k < spec.rank(); ++k) {
        const IoDim& d = (*spec.dims)[k];
        agrees &= !d.is_static() || meta.sizes[k].is_symbolic() ||
                  meta.sizes[k].hint() == d.size;
      }
    }
    if (!agrees) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph '", graph_->name_, "': output ", i, " ('",
          graph_->nodes_[v.node].name, "') is declared ", spec.ToString(),
          " but the graph computes ", meta.ToString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Graph>> GraphBuilder::Finish() {
  if (!outputs_set_) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph_->name_, "' has no outputs"));
  }
  std::vector<TensorMeta> inputs;
  for (int i : graph_->inputs_) {
    const Node& p = graph_->nodes_[i];
    if (!p.meta.has_value()) break;
    inputs.push_back(*p.meta);
  }
  if (inputs.size() == graph_->inputs_.size() &&
      graph_->rebuilder_ == nullptr) {
    int failed_node = -1;
    absl::StatusOr<GraphMeta> inferred =
        InferShapes(*graph_, inputs, &failed_node);
    if (inferred.ok()) {
      RETURN_IF_ERROR(CheckOutputSpecs(*inferred));
    } else if (!StopsAtGraphBreak(*graph_, inferred.status(), failed_node)) {
      return inferred.status();
    }
  }
  for (size_t k = 0; k < graph_->inputs_.size(); ++k) {
    if (graph_->nodes_[graph_->inputs_[k]].specialize_value) {
      graph_->value_inputs_.push_back(static_cast<int>(k));
    }
  }
  for (int i : graph_->inputs_) {
    auto it = input_specs_.find(graph_->nodes_[i].name);
    graph_->input_specs_.push_back(it == input_specs_.end() ? IoSpec()
                                                            : it->second);
  }
  graph_->output_specs_ = output_specs_;
  return std::move(graph_);
}

Arg RemapArg(const std::vector<std::vector<Arg>>& mapped, const Arg& a) {
  if (a.is_value()) return mapped[a.as_value().node][a.as_value().index];
  if (a.is_list()) {
    Arg::List items;
    for (const Arg& item : a.as_list()) items.push_back(RemapArg(mapped, item));
    return Arg::OfList(std::move(items));
  }
  return a;
}

}  // namespace guardjit
