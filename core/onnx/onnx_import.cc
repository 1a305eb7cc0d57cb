#include "core/onnx/onnx_import.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/onnx/onnx_attributes.h"
#include "core/onnx/onnx_io_spec.h"
#include "core/onnx/onnx_node_context.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_sym_data.h"
#include "core/onnx/onnx_sym_shape.h"
#include "core/onnx/onnx_tensor.h"
#include "core/onnx/onnx_value_inputs.h"
#include "core/protobuf_diagnostics.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "google/protobuf/io/coded_stream.h"

namespace guardjit {
namespace {

// Messages nest at most this deep (subgraphs in attributes add levels).
constexpr int kMaxOnnxDepth = 64;
// A dim_param's symbol is >= 2 (0/1 specialization); its hint only drives
// shape rules at load, and a size that follows a decision they take on it
// is not relied on (OnnxImportState::IsStaticDim).
constexpr int64_t kSymbolHint = 2;

absl::Status Prefixed(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

// The input's metadata from its declared type; dims without a value become
// symbols, one per dim_param name. Sets *is_static when every dim has one.
absl::StatusOr<TensorMeta> InputMeta(
    const onnx::ValueInfoProto& input, int index, ShapeEnv& env,
    absl::flat_hash_map<std::string, int>& symbols, bool* is_static) {
  const std::string what = absl::StrCat("graph input '", input.name(), "'");
  if (!input.type().has_tensor_type()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": only tensor inputs are supported"));
  }
  const onnx::TypeProto::Tensor& type = input.type().tensor_type();
  auto dtype = DTypeFromOnnx(type.elem_type());
  if (!dtype.ok()) return Prefixed(dtype.status(), what);
  if (!type.has_shape()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": has no shape (its rank is needed at load)"));
  }
  *is_static = true;
  SymShape sizes;
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": dim ", d, " is ", dim.dim_value()));
      }
      sizes.push_back(SymInt(dim.dim_value()));
      continue;
    }
    *is_static = false;
    const std::string source =
        dim.has_dim_param() && !dim.dim_param().empty()
            ? dim.dim_param()
            : absl::StrCat(input.name(), ".size()[", d, "]");
    auto [it, added] = symbols.emplace(source, 0);
    if (added) it->second = env.NewSymbol(kSymbolHint, source, index, d);
    sizes.push_back(SymInt(SymExpr::Symbol(it->second), kSymbolHint));
  }
  if (*is_static) {
    auto numel = CheckedNumel(ConcreteShape(sizes));
    if (!numel.ok()) return Prefixed(numel.status(), what);
  }
  return TensorMeta(*dtype, std::move(sizes));
}

std::string NodeLabel(const onnx::NodeProto& node, int index, int opset) {
  return absl::StrCat("ONNX node ", index, " '",
                      node.name().empty()
                          ? (node.output_size() ? node.output(0) : "")
                          : node.name(),
                      "' (", node.op_type(), ", domain '",
                      node.domain().empty() ? "ai.onnx" : node.domain(),
                      "', opset ", opset, ")");
}

absl::Status ImportIf(OnnxImportState& state, const onnx::NodeProto& node,
                      int opset,
                      const absl::flat_hash_map<std::string, int>& domains);

absl::Status ImportNode(OnnxImportState& state, const onnx::NodeProto& node,
                        int opset,
                        const absl::flat_hash_map<std::string, int>& domains) {
  if (!IsDefaultDomain(node.domain())) {
    return absl::UnimplementedError(
        domains.contains(node.domain())
            ? absl::StrCat("operators of domain '", node.domain(),
                           "' are not supported")
            : absl::StrCat("domain '", node.domain(),
                           "' is not imported by the model"));
  }
  if (node.op_type() == "If") return ImportIf(state, node, opset, domains);
  const OnnxOpMapper mapper = OnnxOpTable::Default().Find(node.op_type());
  if (mapper == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("operator ", node.op_type(), " is not supported"));
  }
  if (opset < kMinOnnxOpset &&
      opset < OnnxOpTable::OldestOpset(node.op_type())) {
    return absl::UnimplementedError(absl::StrCat(
        "opset ", opset, " of the default domain: the importer reads ",
        node.op_type(), " from opset ",
        OnnxOpTable::OldestOpset(node.op_type()),
        " (supported: ", kMinOnnxOpset, " to ", kMaxOnnxOpset,
        ", and older opsets for operators unchanged since)"));
  }
  ASSIGN_OR_RETURN(OnnxAttributes attrs, OnnxAttributes::Create(node));
  OnnxNodeContext ctx(state, node, opset, attrs);
  // Shape arithmetic on symbolic sizes and data ops on tensors of symbolic
  // sizes first; static shapes fold in the table's mappings.
  ASSIGN_OR_RETURN(bool mapped, MapOnSymbolicSizes(ctx));
  if (!mapped) {
    ASSIGN_OR_RETURN(mapped, MapSymbolicData(ctx));
  }
  if (!mapped) RETURN_IF_ERROR(mapper(ctx));
  RETURN_IF_ERROR(attrs.CheckAllRead());
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty() && state.Find(node.output(i)) == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "output ", i, " ('", node.output(i), "') is not supported"));
    }
  }
  return absl::OkStatus();
}

// The names graph `g` reads from the scopes around it (ONNX subgraphs read
// outer values by name): inputs of its nodes, of the graphs nested in their
// attributes, and its outputs, that neither `defined` nor `g` itself
// defines, in order of first use, each once (`seen`).
void CollectOuterNames(const onnx::GraphProto& g,
                       absl::flat_hash_set<std::string> defined,
                       std::vector<std::string>& outer,
                       absl::flat_hash_set<std::string>& seen) {
  for (const onnx::TensorProto& init : g.initializer()) {
    defined.insert(init.name());
  }
  for (const onnx::ValueInfoProto& input : g.input()) {
    defined.insert(input.name());
  }
  const auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second) {
      outer.push_back(name);
    }
  };
  for (const onnx::NodeProto& node : g.node()) {
    for (const std::string& input : node.input()) use(input);
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CollectOuterNames(attr.g(), defined, outer, seen);
      for (const onnx::GraphProto& sub : attr.graphs()) {
        CollectOuterNames(sub, defined, outer, seen);
      }
    }
    for (const std::string& output : node.output()) defined.insert(output);
  }
  for (const onnx::ValueInfoProto& output : g.output()) use(output.name());
}

// An If branch takes no inputs and has one output per output of the node.
absl::Status CheckBranch(const onnx::GraphProto& branch, const char* which,
                         const onnx::NodeProto& node) {
  if (branch.input_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(which, " has inputs (an If branch takes none)"));
  }
  if (branch.output_size() != node.output_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(which, " has ", branch.output_size(),
                     " outputs and the node ", node.output_size()));
  }
  return absl::OkStatus();
}

// Imports `branch`'s initializers and nodes into `state` (the If's own
// state for a branch taken at load, or a branch graph's), naming a node
// that fails inside `which`.
absl::Status ImportBranchNodes(
    OnnxImportState& state, const onnx::GraphProto& branch, const char* which,
    int opset, const absl::flat_hash_map<std::string, int>& domains) {
  if (branch.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(
        absl::StrCat(which, ": sparse initializers are not supported"));
  }
  for (const onnx::TensorProto& init : branch.initializer()) {
    const std::string what =
        absl::StrCat(which, " initializer '", init.name(), "'");
    ASSIGN_OR_RETURN(Tensor value,
                     TensorFromOnnx(init, state.external_data_dir(), what));
    RETURN_IF_ERROR(state.AddKnownValue(init.name(), std::move(value)));
  }
  for (int i = 0; i < branch.node_size(); ++i) {
    const onnx::NodeProto& inner = branch.node(i);
    state.ClearWanted();
    absl::Status s = ImportNode(state, inner, opset, domains);
    if (!s.ok()) {
      return Prefixed(s,
                      absl::StrCat(which, " node ", i, " '",
                                   inner.name().empty() && inner.output_size()
                                       ? inner.output(0)
                                       : inner.name(),
                                   "' (", inner.op_type(), ")"));
    }
  }
  return absl::OkStatus();
}

// What a branch graph of a cond reads from the If's scope: the values known
// at load (constants there too), and the operands (placeholders there, in
// order), each with its metadata.
struct BranchScope {
  std::vector<std::pair<std::string, Tensor>> known;
  std::vector<std::string> operands;
  std::vector<TensorMeta> operand_metas;
  std::vector<bool> operand_static;
};

// `branch` as a graph of its own named `name`, for a cond node: the scope's
// operands its placeholders, its outputs the branch's.
absl::StatusOr<std::unique_ptr<Graph>> ImportBranchGraph(
    OnnxImportState& parent, const onnx::GraphProto& branch, const char* which,
    const std::string& name, const BranchScope& scope, int opset,
    const absl::flat_hash_map<std::string, int>& domains) {
  GraphBuilder builder(name, parent.registry());
  OnnxImportState state(builder, parent);
  for (size_t k = 0; k < scope.operands.size(); ++k) {
    RETURN_IF_ERROR(state.AddInput(scope.operands[k], scope.operand_metas[k],
                                   scope.operand_static[k]));
  }
  for (const auto& [value_name, value] : scope.known) {
    RETURN_IF_ERROR(state.AddKnownValue(value_name, value));
  }
  RETURN_IF_ERROR(ImportBranchNodes(state, branch, which, opset, domains));
  std::vector<Arg> outputs;
  for (const onnx::ValueInfoProto& output : branch.output()) {
    auto value = state.GraphValue(output.name());
    if (!value.ok()) {
      return Prefixed(value.status(),
                      absl::StrCat(which, " output '", output.name(), "'"));
    }
    outputs.push_back(*value);
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
  return builder.Finish();
}

// The metadata of `branch`'s outputs for `operands`.
absl::StatusOr<std::vector<TensorMeta>> BranchOutputMetas(
    const Graph& branch, const std::vector<TensorMeta>& operands,
    const char* which) {
  auto values = InferShapes(branch, operands);
  if (!values.ok()) return Prefixed(values.status(), which);
  std::vector<TensorMeta> out;
  for (const Arg& a : branch.output_node().args) {
    out.push_back((*values)[a.as_value().node][a.as_value().index]);
  }
  return out;
}

// ONNX If whose condition is computed at run time, as a higher_order.cond
// (core/ops/control_flow.h): each branch a graph whose placeholders are the
// values it reads from the If's scope (values known at load stay constants
// in it). A condition over sizes (Shape, Gather, Greater, ...: size
// expressions) is the cond's predicate, which each specialization decides
// and guards; one over tensor values breaks the graph there (the host reads
// it and runs the branch it picks). The branches' outputs must agree in
// dtype and rank, which the nodes after the If are mapped for.
absl::Status ImportRuntimeIf(
    OnnxNodeContext& ctx, const onnx::GraphProto& then_branch,
    const onnx::GraphProto& else_branch, int opset,
    const absl::flat_hash_map<std::string, int>& domains) {
  OnnxImportState& state = ctx.state();
  const onnx::NodeProto& node = ctx.node();
  Arg pred;
  if (const std::vector<Arg>* sizes = ctx.InputSizes(0)) {
    if (sizes->size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("the condition '", node.input(0), "' has ",
                       sizes->size(), " elements, not 1"));
    }
    pred = (*sizes)[0];
  } else {
    ASSIGN_OR_RETURN(pred, ctx.Input(0));
    const TensorMeta& meta = ctx.Meta(pred);
    if (meta.dtype != DType::kBool) {
      return absl::InvalidArgumentError(
          absl::StrCat("the condition '", node.input(0), "' is ",
                       DTypeName(meta.dtype), ", not bool"));
    }
    if (ctx.IsStaticInput(0)) {
      ASSIGN_OR_RETURN(Shape shape, ctx.StaticShape(0));
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      if (n != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the condition '", node.input(0), "' has ", n, " elements, not 1"));
      }
    }
  }
  std::vector<std::string> names;
  absl::flat_hash_set<std::string> seen;
  CollectOuterNames(then_branch, {}, names, seen);
  CollectOuterNames(else_branch, {}, names, seen);
  BranchScope scope;
  std::vector<Arg> operands;
  for (const std::string& name : names) {
    const OnnxValue* v = state.Find(name);
    if (v == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a branch reads '", name, "', which no value before the If names"));
    }
    if (v->constant.has_value()) {
      scope.known.emplace_back(name, *v->constant);
      continue;
    }
    if (v->sizes.has_value() && !v->graph_value.has_value()) {
      // Its size expressions are nodes of this graph, which the branch
      // graph cannot name.
      return absl::UnimplementedError(absl::StrCat(
          "a branch reads '", name,
          "', sizes computed at run time before the If; branches of a "
          "condition computed at run time read tensors and values known at "
          "load (compute such sizes inside the branch)"));
    }
    ASSIGN_OR_RETURN(Arg value, state.GraphValue(name));
    operands.push_back(value);
    scope.operands.push_back(name);
    scope.operand_metas.push_back(state.MetaOf(value));
    scope.operand_static.push_back(state.IsStaticValue(value));
  }
  const std::string hint = absl::StrCat(
      node.output_size() > 0 && !node.output(0).empty() ? node.output(0) : "",
      ".if");
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::string> graph_names;
  for (const auto& [branch, which] :
       {std::pair<const onnx::GraphProto*, const char*>{&then_branch,
                                                        "then_branch"},
        {&else_branch, "else_branch"}}) {
    RETURN_IF_ERROR(CheckBranch(*branch, which, node));
    std::string name = absl::StrCat(hint, ".", which);
    while (state.builder().partial_graph().subgraph(name) != nullptr) {
      name += "_";
    }
    ASSIGN_OR_RETURN(
        std::unique_ptr<Graph> graph,
        ImportBranchGraph(state, *branch, which, name, scope, opset, domains));
    graphs.push_back(std::move(graph));
    graph_names.push_back(name);
  }
  ASSIGN_OR_RETURN(
      std::vector<TensorMeta> then_metas,
      BranchOutputMetas(*graphs[0], scope.operand_metas, "then_branch"));
  ASSIGN_OR_RETURN(
      std::vector<TensorMeta> else_metas,
      BranchOutputMetas(*graphs[1], scope.operand_metas, "else_branch"));
  for (size_t k = 0; k < then_metas.size(); ++k) {
    const TensorMeta& t = then_metas[k];
    const TensorMeta& e = else_metas[k];
    if (t.dtype != e.dtype || t.dim() != e.dim()) {
      return absl::UnimplementedError(absl::StrCat(
          "output ", k, ": then_branch computes ", DTypeName(t.dtype),
          " of rank ", t.dim(), " and else_branch ", DTypeName(e.dtype),
          " of rank ", e.dim(),
          "; a condition computed at run time needs branches that agree"));
    }
  }
  for (size_t k = 0; k < graphs.size(); ++k) {
    RETURN_IF_ERROR(
        state.builder().AddSubgraph(graph_names[k], std::move(graphs[k])));
  }
  ASSIGN_OR_RETURN(Arg cond, state.AddCond(hint,
                                           {pred, Arg::Subgraph(graph_names[0]),
                                            Arg::Subgraph(graph_names[1]),
                                            Arg::OfList(std::move(operands))},
                                           std::move(then_metas)));
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    ASSIGN_OR_RETURN(Arg item, state.AddGetItem(node.output(k), cond, k));
    RETURN_IF_ERROR(ctx.SetOutput(k, item));
  }
  return absl::OkStatus();
}

// ONNX If. A condition known at load (a value known at load: shape
// arithmetic on static sizes folds to one) imports the branch it takes in
// place; a graph input makes the import value-specialize it (each call's
// condition its own guarded entry); any other becomes a cond
// (ImportRuntimeIf).
absl::Status ImportIf(OnnxImportState& state, const onnx::NodeProto& node,
                      int opset,
                      const absl::flat_hash_map<std::string, int>& domains) {
  ASSIGN_OR_RETURN(OnnxAttributes attrs, OnnxAttributes::Create(node));
  const onnx::AttributeProto* then_branch = attrs.Raw("then_branch");
  const onnx::AttributeProto* else_branch = attrs.Raw("else_branch");
  RETURN_IF_ERROR(attrs.CheckAllRead());
  if (then_branch == nullptr || else_branch == nullptr ||
      !then_branch->has_g() || !else_branch->has_g()) {
    return absl::InvalidArgumentError(
        "then_branch or else_branch is missing or not a graph");
  }
  OnnxNodeContext ctx(state, node, opset, attrs);
  if (!ctx.has_input(0)) {
    return absl::InvalidArgumentError("the condition (input 0) is missing");
  }
  RETURN_IF_ERROR(ctx.InputMeta(0).status());
  const Tensor* cond = ctx.NeededConstant(0);
  if (cond == nullptr) {
    // A graph input (or a conversion of one) is value-specialized: the
    // import fails asking for it (OnnxImportState::wanted).
    if (!state.nested() && !state.needed().empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "the condition '", node.input(0),
          "' is a graph input, whose value the import specializes"));
    }
    return ImportRuntimeIf(ctx, then_branch->g(), else_branch->g(), opset,
                           domains);
  }
  if (cond->numel() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the condition '", node.input(0), "' has ", cond->numel(),
                     " elements, not 1"));
  }
  const bool taken = cond->Item().to_bool();
  const onnx::GraphProto& branch = taken ? then_branch->g() : else_branch->g();
  const char* which = taken ? "then_branch" : "else_branch";
  RETURN_IF_ERROR(CheckBranch(branch, which, node));
  RETURN_IF_ERROR(ImportBranchNodes(state, branch, which, opset, domains));
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    const OnnxValue* out = state.Find(branch.output(k).name());
    if (out == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          which, " output '", branch.output(k).name(), "' is not defined"));
    }
    RETURN_IF_ERROR(state.Define(node.output(k), *out));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> DefaultOpset(const onnx::ModelProto& model) {
  int opset = -1;
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) {
      opset = static_cast<int>(import.version());
    }
  }
  return opset;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxGraph(
    const onnx::ModelProto& model, const GraphLoadOptions& options,
    const absl::flat_hash_map<std::string, Tensor>& bound,
    OnnxImportFailure* failure) {
  int opset = -1;
  absl::flat_hash_map<std::string, int> domains;
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) {
      opset = static_cast<int>(import.version());
    } else {
      domains[import.domain()] = static_cast<int>(import.version());
    }
  }
  if (opset < 0) {
    return absl::InvalidArgumentError(
        "ONNX model imports no opset of the default domain");
  }
  // Below 7, each node's operator must be one whose definition did not
  // change from the model's opset to 7 (ImportNode).
  if (opset < 1 || opset > kMaxOnnxOpset) {
    return absl::UnimplementedError(absl::StrCat(
        "ONNX model uses opset ", opset, " of the default domain; supported: ",
        kMinOnnxOpset, " to ", kMaxOnnxOpset));
  }
  const onnx::GraphProto& graph = model.graph();
  GraphBuilder builder(
      graph.name().empty() ? "onnx" : graph.name(),
      options.registry ? *options.registry : OpRegistry::Global());
  OnnxImportState state(
      builder, options.external_data_dir,
      options.registry ? *options.registry : OpRegistry::Global());
  ShapeEnv::Scope scope(&state.shape_env());

  if (graph.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        "sparse initializer '", graph.sparse_initializer(0).values().name(),
        "' is not supported"));
  }
  absl::flat_hash_set<std::string> initialized;
  for (const onnx::TensorProto& init : graph.initializer()) {
    const std::string what = absl::StrCat("initializer '", init.name(), "'");
    if (init.name().empty()) {
      return absl::InvalidArgumentError("an initializer has no name");
    }
    ASSIGN_OR_RETURN(Tensor value,
                     TensorFromOnnx(init, options.external_data_dir, what));
    RETURN_IF_ERROR(state.AddKnownValue(init.name(), std::move(value)));
    initialized.insert(init.name());
  }
  absl::flat_hash_map<std::string, int> symbols;
  int input_index = 0;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    // Before IR 4 initializers were listed as inputs too; they stay
    // constants.
    if (initialized.contains(input.name())) continue;
    bool is_static = false;
    ASSIGN_OR_RETURN(
        TensorMeta meta,
        InputMeta(input, input_index, state.shape_env(), symbols, &is_static));
    std::optional<Tensor> known;
    if (auto it = bound.find(input.name()); it != bound.end()) {
      // Specialized to the call's values, whose sizes the entry guards.
      if (it->second.dtype() != meta.dtype) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph input '", input.name(), "' is declared ",
                         DTypeName(meta.dtype), ", and the call passes ",
                         DTypeName(it->second.dtype())));
      }
      known = it->second;
      meta = TensorMeta::Of(*known);
      is_static = true;
    }
    RETURN_IF_ERROR(state.AddInput(input.name(), std::move(meta), is_static,
                                   std::move(known)));
    ASSIGN_OR_RETURN(IoSpec spec,
                     IoSpecFromOnnx(input, absl::StrCat("graph input '",
                                                        input.name(), "'")));
    RETURN_IF_ERROR(builder.SetInputSpec(input.name(), std::move(spec)));
    ++input_index;
  }
  // Graph outputs keep their ONNX names (gj_graph_output_name): nodes a
  // mapping adds get suffixed names, and the node computing an output is
  // renamed to it below.
  for (const onnx::ValueInfoProto& output : graph.output()) {
    state.ReserveName(output.name());
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    state.ClearWanted();
    absl::Status s = ImportNode(state, node, opset, domains);
    if (!s.ok()) {
      if (failure != nullptr) {
        failure->node = i;
        failure->wanted.assign(state.wanted().begin(), state.wanted().end());
        failure->needed.assign(state.needed().begin(), state.needed().end());
      }
      return Prefixed(s, NodeLabel(node, i, opset));
    }
    if ((node.op_type() == "Cast" || node.op_type() == "CastLike" ||
         node.op_type() == "Identity") &&
        node.input_size() > 0 && node.output_size() > 0) {
      state.NoteConversion(node.output(0), node.input(0));
    }
  }
  std::vector<Arg> outputs;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    auto value = state.GraphValue(output.name());
    if (!value.ok()) {
      return Prefixed(value.status(),
                      absl::StrCat("graph output '", output.name(), "'"));
    }
    outputs.push_back(*value);
  }
  if (outputs.empty()) {
    return absl::InvalidArgumentError("ONNX graph has no outputs");
  }
  for (int i = 0; i < graph.output_size(); ++i) {
    const std::string& name = graph.output(i).name();
    const Node& node = builder.partial_graph().node(outputs[i].as_value().node);
    if (node.kind == NodeKind::kPlaceholder || node.num_outputs != 1 ||
        name.empty() || builder.partial_graph().FindNode(name) >= 0) {
      continue;  // an input, a multi-output node, or named already
    }
    RETURN_IF_ERROR(builder.RenameNode(outputs[i].as_value().node, name));
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
  // Output value infos are the graph's output specs; Finish() checks them
  // against the inferred metadata where the inputs are static.
  for (int i = 0; i < graph.output_size(); ++i) {
    const onnx::ValueInfoProto& output = graph.output(i);
    ASSIGN_OR_RETURN(IoSpec spec,
                     IoSpecFromOnnx(output, absl::StrCat("graph output '",
                                                         output.name(), "'")));
    RETURN_IF_ERROR(builder.SetOutputSpec(i, std::move(spec)));
  }
  return builder.Finish();
}

absl::StatusOr<std::unique_ptr<Graph>> LoadOnnxModel(
    const onnx::ModelProto& model, const GraphLoadOptions& options) {
  OnnxImportFailure failure;
  auto graph = ImportOnnxGraph(model, options, {}, &failure);
  if (graph.ok() || failure.wanted.empty()) return graph;
  return ValueSpecializedOnnxGraph(model, options, failure, graph.status());
}

absl::StatusOr<std::unique_ptr<Graph>> LoadOnnxModelFromBinary(
    absl::string_view bytes, const GraphLoadOptions& options) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(
        "ONNX model larger than 2 GiB; use external data");
  }
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  input.SetRecursionLimit(kMaxOnnxDepth);
  ProtobufDiagnostics diagnostics;
  if (!model.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
    std::string detail = diagnostics.Take();
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed ONNX model (", bytes.size(), " bytes)",
        detail.empty() ? absl::StrCat(": truncated, not an onnx.ModelProto, "
                                      "or nested deeper than ",
                                      kMaxOnnxDepth, " levels")
                       : absl::StrCat(": ", detail)));
  }
  return LoadOnnxModel(model, options);
}

absl::Status CheckOnnxOps(const onnx::ModelProto& model, int from_node) {
  const int opset = DefaultOpset(model).value_or(-1);
  const onnx::GraphProto& graph = model.graph();
  for (int i = from_node; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!IsDefaultDomain(node.domain())) {
      return Prefixed(
          absl::UnimplementedError(absl::StrCat(
              "operators of domain '", node.domain(), "' are not supported")),
          NodeLabel(node, i, opset));
    }
    if (node.op_type() != "If" &&
        OnnxOpTable::Default().Find(node.op_type()) == nullptr) {
      return Prefixed(absl::UnimplementedError(absl::StrCat(
                          "operator ", node.op_type(), " is not supported")),
                      NodeLabel(node, i, opset));
    }
  }
  return absl::OkStatus();
}

}  // namespace guardjit
