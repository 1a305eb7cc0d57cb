#include "core/onnx/onnx_node_context.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ops/control_flow.h"
#include "core/status_macros.h"

namespace guardjit {

OnnxImportState::OnnxImportState(GraphBuilder& builder,
                                 std::string external_data_dir,
                                 const OpRegistry& registry)
    : builder_(builder),
      external_data_dir_(std::move(external_data_dir)),
      shape_env_(own_shape_env_),
      nested_(false),
      registry_(registry) {}

OnnxImportState::OnnxImportState(GraphBuilder& builder, OnnxImportState& parent)
    : builder_(builder),
      external_data_dir_(parent.external_data_dir_),
      shape_env_(parent.shape_env_),
      nested_(true),
      registry_(parent.registry_) {}

std::string OnnxImportState::UniqueName(absl::string_view hint) {
  std::string name(hint.empty() ? "v" : hint);
  if (names_.insert(name).second) return name;
  for (int k = 1;; ++k) {
    std::string candidate = absl::StrCat(name, ".", k);
    if (names_.insert(candidate).second) return candidate;
  }
}

absl::Status OnnxImportState::RecordMeta(const Arg& value,
                                         std::vector<TensorMeta> meta) {
  const size_t node = static_cast<size_t>(value.as_value().node);
  if (metas_.size() <= node) metas_.resize(node + 1);
  if (decided_.size() <= node) decided_.resize(node + 1, false);
  metas_[node] = std::move(meta);
  return absl::OkStatus();
}

namespace {

// Whether any graph value among `args` (and lists of them) is `decided`.
bool AnyDecided(const std::vector<Arg>& args,
                const std::vector<bool>& decided) {
  for (const Arg& a : args) {
    if (a.is_list() && AnyDecided(a.as_list(), decided)) return true;
    if (a.is_value()) {
      const size_t node = static_cast<size_t>(a.as_value().node);
      if (node < decided.size() && decided[node]) return true;
    }
  }
  return false;
}

}  // namespace

absl::Status OnnxImportState::AddInput(const std::string& name, TensorMeta meta,
                                       bool static_meta,
                                       std::optional<Tensor> known) {
  names_.insert(name);
  if (!known.has_value()) graph_inputs_.insert(name);
  std::optional<TensorMeta> declared;
  if (static_meta) declared = meta;
  ASSIGN_OR_RETURN(ValueRef ref,
                   builder_.AddPlaceholder(name, std::move(declared)));
  RETURN_IF_ERROR(RecordMeta(Arg::Value(ref), {meta}));
  return Define(name, OnnxValue{meta, std::move(known), Arg::Value(ref)});
}

absl::Status OnnxImportState::AddKnownValue(const std::string& name,
                                            Tensor value) {
  OnnxValue v{TensorMeta::Of(value), std::move(value), std::nullopt};
  v.meta.wrapped_number = false;
  v.meta.sym_value.reset();
  return Define(name, std::move(v));
}

const OnnxValue* OnnxImportState::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

absl::Status OnnxImportState::Define(const std::string& name, OnnxValue value) {
  // ONNX graphs are SSA: a second definition is a malformed model.
  if (!values_.emplace(name, std::move(value)).second) {
    return absl::InvalidArgumentError(
        absl::StrCat("value '", name, "' is defined twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Arg> OnnxImportState::GraphValue(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("value '", name, "' is not defined before its use"));
  }
  OnnxValue& v = it->second;
  if (v.sizes.has_value()) {
    std::vector<std::string> parts;
    for (const Arg& a : *v.sizes) {
      parts.push_back(a.is_int() ? absl::StrCat(a.as_int())
                      : MetaOf(a).sym_value.has_value()
                          ? MetaOf(a).sym_value->ToString()
                          : "?");
    }
    return absl::UnimplementedError(absl::StrCat(
        "value '", name, "' holds sizes computed at run time ([",
        absl::StrJoin(parts, ", "),
        "]); only shape operators (Gather, Slice, Concat, Unsqueeze, Squeeze, "
        "Cast, Add, Sub, Mul, Div on them; Reshape, Expand, ConstantOfShape, "
        "Tile, Range; Slice's bounds, Split's sizes, Pad's pads) take it, not "
        "a tensor operand"));
  }
  if (!v.graph_value.has_value()) {
    ASSIGN_OR_RETURN(ValueRef ref,
                     builder_.AddConstant(UniqueName(name), *v.constant));
    v.graph_value = Arg::Value(ref);
    RETURN_IF_ERROR(RecordMeta(*v.graph_value, {v.meta}));
  }
  return *v.graph_value;
}

absl::StatusOr<Arg> OnnxImportState::AddNode(absl::string_view hint,
                                             std::string target,
                                             std::vector<Arg> args,
                                             Kwargs kwargs) {
  ASSIGN_OR_RETURN(ValueRef ref,
                   builder_.AddNode(UniqueName(hint), std::move(target),
                                    std::move(args), std::move(kwargs)));
  const Graph& graph = builder_.partial_graph();
  if (metas_.size() < graph.nodes().size()) metas_.resize(graph.nodes().size());
  const size_t guards = shape_env_.guards().size();
  ASSIGN_OR_RETURN(std::vector<TensorMeta> meta,
                   InferNode(graph.node(ref.node), metas_));
  const Arg value = Arg::Value(ref);
  RETURN_IF_ERROR(RecordMeta(value, std::move(meta)));
  const Node& node = graph.node(ref.node);
  decided_[ref.node] =
      shape_env_.guards().size() != guards || AnyDecided(node.args, decided_);
  return value;
}

absl::StatusOr<Arg> OnnxImportState::AddGetItem(absl::string_view hint,
                                                const Arg& value, int index) {
  const ValueRef source = value.as_value();
  if (index >= static_cast<int>(metas_[source.node].size())) {
    return absl::InternalError(
        absl::StrCat("output ", index, " of a node with ",
                     metas_[source.node].size(), " outputs"));
  }
  ASSIGN_OR_RETURN(ValueRef ref, builder_.AddNode(UniqueName(hint), "getitem",
                                                  {value, Arg::Int(index)}));
  const Arg item = Arg::Value(ref);
  RETURN_IF_ERROR(RecordMeta(item, {metas_[source.node][index]}));
  decided_[ref.node] = decided_[source.node];
  return item;
}

absl::StatusOr<Arg> OnnxImportState::AddCond(absl::string_view hint,
                                             std::vector<Arg> args,
                                             std::vector<TensorMeta> metas) {
  ASSIGN_OR_RETURN(ValueRef ref, builder_.AddNode(UniqueName(hint), kCondTarget,
                                                  std::move(args)));
  const Arg value = Arg::Value(ref);
  RETURN_IF_ERROR(RecordMeta(value, std::move(metas)));
  decided_[ref.node] = true;
  return value;
}

const TensorMeta& OnnxImportState::MetaOf(const Arg& value) const {
  const ValueRef ref = value.as_value();
  return metas_[ref.node][ref.index];
}

bool OnnxImportState::IsStaticDim(const Arg& value, int64_t d) const {
  const TensorMeta& meta = MetaOf(value);
  if (d < 0 || d >= meta.dim() || meta.sizes[d].is_symbolic() ||
      decided_[value.as_value().node]) {
    return false;
  }
  for (int s = 0; s < shape_env_.num_symbols(); ++s) {
    if (shape_env_.IsPinned(s)) return false;
  }
  return true;
}

bool OnnxImportState::IsStaticValue(const Arg& value) const {
  for (int64_t d = 0; d < MetaOf(value).dim(); ++d) {
    if (!IsStaticDim(value, d)) return false;
  }
  if (decided_[value.as_value().node]) return false;
  for (int s = 0; s < shape_env_.num_symbols(); ++s) {
    if (shape_env_.IsPinned(s)) return false;
  }
  return true;
}

absl::StatusOr<Arg> OnnxNodeContext::Input(int i) {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  }
  return state_.GraphValue(node_.input(i));
}

absl::StatusOr<TensorMeta> OnnxNodeContext::InputMeta(int i) const {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
  }
  const OnnxValue* v = state_.Find(node_.input(i));
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value '", node_.input(i), "' is not defined before its use"));
  }
  return v->meta;
}

const Tensor* OnnxNodeContext::InputConstant(int i) const {
  if (!has_input(i)) return nullptr;
  const OnnxValue* v = state_.Find(node_.input(i));
  if (v != nullptr && v->constant.has_value()) return &*v->constant;
  state_.NoteWanted(node_.input(i));
  return nullptr;
}

const Tensor* OnnxNodeContext::NeededConstant(int i) const {
  const Tensor* t = InputConstant(i);
  if (t == nullptr && has_input(i)) state_.NoteNeeded(node_.input(i));
  return t;
}

absl::StatusOr<std::vector<int64_t>> OnnxNodeContext::ConstInts(
    int i, absl::string_view what) const {
  RETURN_IF_ERROR(InputMeta(i).status());
  const Tensor* t = NeededConstant(i);
  if (t == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        what, " (input ", i, ", '", node_.input(i),
        "') is computed at run time, and only values known at load are "
        "supported"));
  }
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " (input ", i, ") is ", DTypeName(t->dtype()), ", not int64"));
  }
  std::vector<int64_t> out(static_cast<size_t>(t->numel()));
  for (int64_t k = 0; k < t->numel(); ++k) {
    out[k] = t->dtype() == DType::kInt64 ? t->data_as<int64_t>()[k]
                                         : t->data_as<int32_t>()[k];
  }
  return out;
}

bool OnnxNodeContext::IsStaticInput(int i) const {
  const OnnxValue* v = has_input(i) ? state_.Find(node_.input(i)) : nullptr;
  if (v == nullptr) return false;
  if (v->graph_value.has_value()) {
    return state_.IsStaticValue(*v->graph_value);
  }
  // A value known at load, or one of size expressions (1-d or 0-d).
  return !std::any_of(v->meta.sizes.begin(), v->meta.sizes.end(),
                      [](const SymInt& s) { return s.is_symbolic(); });
}

absl::StatusOr<Shape> OnnxNodeContext::StaticShape(int i) const {
  ASSIGN_OR_RETURN(TensorMeta meta, InputMeta(i));
  if (!IsStaticInput(i)) {
    return absl::UnimplementedError(
        absl::StrCat("needs the sizes of input ", i, " ('", node_.input(i),
                     "') at load, and they are symbolic (", meta.ToString(),
                     ") or follow a decision on symbolic sizes"));
  }
  return meta.shape();
}

absl::StatusOr<Shape> OnnxNodeContext::StaticShapeOf(const Arg& value) const {
  const TensorMeta& meta = Meta(value);
  if (!state_.IsStaticValue(value)) {
    return absl::UnimplementedError(absl::StrCat(
        "needs static sizes, and they are symbolic (", meta.ToString(), ")"));
  }
  return meta.shape();
}

std::string OnnxNodeContext::OutputHint() const {
  for (const std::string& out : node_.output()) {
    if (!out.empty()) return out;
  }
  return node_.name().empty() ? node_.op_type() : node_.name();
}

absl::StatusOr<Arg> OnnxNodeContext::Emit(std::string target,
                                          std::vector<Arg> args,
                                          Kwargs kwargs) {
  return state_.AddNode(OutputHint(), std::move(target), std::move(args),
                        std::move(kwargs));
}

absl::StatusOr<Arg> OnnxNodeContext::Item(const Arg& value, int index) {
  return state_.AddGetItem(OutputHint(), value, index);
}

absl::Status OnnxNodeContext::SetOutput(int i, const Arg& value) {
  if (!has_output(i)) return absl::OkStatus();
  return state_.Define(node_.output(i),
                       OnnxValue{Meta(value), std::nullopt, value});
}

absl::Status OnnxNodeContext::SetOutputConstant(int i, Tensor value) {
  if (!has_output(i)) return absl::OkStatus();
  return state_.AddKnownValue(node_.output(i), std::move(value));
}

const std::vector<Arg>* OnnxNodeContext::InputSizes(int i) const {
  if (!has_input(i)) return nullptr;
  const OnnxValue* v = state_.Find(node_.input(i));
  return v != nullptr && v->sizes.has_value() ? &*v->sizes : nullptr;
}

absl::Status OnnxNodeContext::SetOutputSizes(int i, std::vector<Arg> sizes,
                                             bool scalar, DType dtype) {
  if (!has_output(i)) return absl::OkStatus();
  if (scalar && sizes.size() != 1) {
    return absl::InternalError("a 0-d size value of more than one element");
  }
  const bool known = std::all_of(sizes.begin(), sizes.end(),
                                 [](const Arg& a) { return a.is_int(); });
  Shape shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(sizes.size()));
  if (known) {
    if (dtype != DType::kInt64 && dtype != DType::kInt32 &&
        dtype != DType::kBool) {
      return absl::InternalError(
          absl::StrCat("sizes as ", DTypeName(dtype), " values"));
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, shape));
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (dtype == DType::kBool) {
        t.data_as<bool>()[k] = sizes[k].as_int() != 0;
      } else if (dtype == DType::kInt64) {
        t.data_as<int64_t>()[k] = sizes[k].as_int();
      } else {
        t.data_as<int32_t>()[k] = static_cast<int32_t>(sizes[k].as_int());
      }
    }
    return SetOutputConstant(i, std::move(t));
  }
  return state_.Define(node_.output(i),
                       OnnxValue{TensorMeta(dtype, shape), std::nullopt,
                                 std::nullopt, std::move(sizes)});
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank,
                                      absl::string_view what) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  }
  return normalized;
}

}  // namespace guardjit
