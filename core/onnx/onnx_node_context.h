#ifndef GUARDJIT_CORE_ONNX_ONNX_NODE_CONTEXT_H_
#define GUARDJIT_CORE_ONNX_ONNX_NODE_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/graph_builder.h"
#include "core/onnx/onnx_attributes.h"
#include "core/shape_env.h"
#include "core/shape_inference.h"
#include "core/tensor_meta.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// What the importer knows of one ONNX value: its metadata, and its value
// when known at load (an initializer, a Constant node, shape arithmetic on
// static sizes). A known value enters the graph as a constant only when an
// op needs it as a tensor.
//
// A 0-d or 1-d integer value computed from symbolic sizes (a Shape of a
// tensor with a dim_param dim, and shape arithmetic on it) is kept as its
// elements' size expressions, `sizes`: each an Arg::Int or a graph node
// computing an integer (aten.sym_size.int, operator.mul, ...), as
// torch.export spells sizes. Shape operators consume them (a Reshape's
// shape becomes the view's SymInt[] sizes); anything that needs such a
// value as a tensor is refused (core/onnx/onnx_sym_shape.h).
struct OnnxValue {
  TensorMeta meta;
  std::optional<Tensor> constant;
  std::optional<Arg> graph_value;  // Arg::Value once in the graph
  std::optional<std::vector<Arg>> sizes;
};

// The import of one ONNX graph into a GraphBuilder: the table of ONNX
// values, node naming, and each added node's metadata (inferred by the
// registry's shape rules as nodes are added, so mappings can read ranks,
// dtypes and static sizes). Sizes of dim_param dims are symbols of a
// private ShapeEnv; a mapping that needs one as a number refuses.
class OnnxImportState {
 public:
  // `registry`: the one `builder` looks targets up in (nested graphs are
  // built with it too).
  OnnxImportState(GraphBuilder& builder, std::string external_data_dir,
                  const OpRegistry& registry = OpRegistry::Global());
  // The import of a graph nested in a node of `parent`'s (an If branch),
  // into `builder`: its sizes are symbols of `parent`'s ShapeEnv, so the
  // values it reads from `parent` keep theirs.
  OnnxImportState(GraphBuilder& builder, OnnxImportState& parent);
  // An import of a nested graph (the constructor above): its inputs are the
  // values it reads from its parent's scope, not the model's.
  bool nested() const { return nested_; }
  const OpRegistry& registry() const { return registry_; }

  GraphBuilder& builder() { return builder_; }
  ShapeEnv& shape_env() { return shape_env_; }
  const std::string& external_data_dir() const { return external_data_dir_; }

  // A graph input; `known`: its values, when the import is specialized to
  // them (a value-specialized input: core/value_inputs.h), seen by mappings
  // as a known value while the input stays a placeholder.
  absl::Status AddInput(const std::string& name, TensorMeta meta,
                        bool static_meta, std::optional<Tensor> known = {});
  // Mappings asking for the values of a graph input the import does not
  // know (InputConstant, ConstInts) note it here: the inputs a node needs
  // to be value-specialized. ClearWanted() before each node.
  // A value converted from a graph input (a Cast, CastLike or Identity of
  // it, or of such a value) stands for that input here: asking for its
  // values asks for the input's.
  void NoteWanted(const std::string& name) {
    auto it = converted_from_.find(name);
    const std::string& input = it == converted_from_.end() ? name : it->second;
    if (graph_inputs_.contains(input)) wanted_.insert(input);
  }
  // The values of `name` are needed to map the node, not merely looked for:
  // such a graph input may be value-specialized even as a float.
  void NoteNeeded(const std::string& name) {
    auto it = converted_from_.find(name);
    const std::string& input = it == converted_from_.end() ? name : it->second;
    if (graph_inputs_.contains(input)) needed_.insert(input);
  }
  const absl::flat_hash_set<std::string>& needed() const { return needed_; }
  // `value` is a conversion of `from` (a graph input or such a value).
  void NoteConversion(const std::string& value, const std::string& from) {
    auto it = converted_from_.find(from);
    const std::string& input = it == converted_from_.end() ? from : it->second;
    if (graph_inputs_.contains(input)) converted_from_[value] = input;
  }
  const absl::flat_hash_set<std::string>& wanted() const { return wanted_; }
  void ClearWanted() {
    wanted_.clear();
    needed_.clear();
  }
  absl::Status AddKnownValue(const std::string& name, Tensor value);
  const OnnxValue* Find(const std::string& name) const;
  absl::Status Define(const std::string& name, OnnxValue value);
  // The value as a graph node (a constant is added on first use).
  absl::StatusOr<Arg> GraphValue(const std::string& name);

  // Keeps `name` from the names added nodes get: a graph output's, given to
  // the node computing it once the import knows which that is.
  void ReserveName(const std::string& name) { names_.insert(name); }
  // Adds a call node named after `hint` and records its outputs' metadata.
  absl::StatusOr<Arg> AddNode(absl::string_view hint, std::string target,
                              std::vector<Arg> args, Kwargs kwargs);
  absl::StatusOr<Arg> AddGetItem(absl::string_view hint, const Arg& value,
                                 int index);
  // Adds a higher_order.cond node named after `hint` (args: predicate,
  // branches, operands) whose outputs have `metas`: cond has no node shape
  // rule (graph shape inference decides the branch per call). Its outputs
  // count as following a decision (IsStaticDim).
  absl::StatusOr<Arg> AddCond(absl::string_view hint, std::vector<Arg> args,
                              std::vector<TensorMeta> metas);
  // Metadata of a graph value (Arg::Value) of this import.
  const TensorMeta& MetaOf(const Arg& value) const;
  // Whether size d of graph value `value` is a number the import may rely
  // on for every size of the symbols: it is not symbolic, no shape rule
  // decided anything about a symbol on the way to it (a guard recorded
  // while inferring it or a value it was computed from: a slice of a
  // static dim by a symbolic end guards `end <= dim`, and a size picked by
  // such a decision holds for the symbols' hints only), and no guard pinned
  // a symbol to a number.
  bool IsStaticDim(const Arg& value, int64_t d) const;
  // IsStaticDim for every dim of `value`.
  bool IsStaticValue(const Arg& value) const;

 private:
  std::string UniqueName(absl::string_view hint);
  absl::Status RecordMeta(const Arg& value, std::vector<TensorMeta> meta);

  GraphBuilder& builder_;
  std::string external_data_dir_;
  ShapeEnv own_shape_env_;
  ShapeEnv& shape_env_;  // own_shape_env_, or a parent import's
  const bool nested_;
  const OpRegistry& registry_;
  absl::flat_hash_map<std::string, OnnxValue> values_;
  absl::flat_hash_set<std::string> names_;
  absl::flat_hash_set<std::string> graph_inputs_;  // unknown at load
  absl::flat_hash_set<std::string> wanted_;
  absl::flat_hash_set<std::string> needed_;
  absl::flat_hash_map<std::string, std::string> converted_from_;
  GraphMeta metas_;  // by node index of builder_.partial_graph()
  // By node index: the node's metadata followed a shape decision
  // (IsStaticDim).
  std::vector<bool> decided_;
};

// What a mapping sees of one ONNX node: its inputs, attributes and opset,
// and how to add ATen nodes for it. Errors it returns are prefixed with the
// node, op, domain and opset by the importer.
class OnnxNodeContext {
 public:
  OnnxNodeContext(OnnxImportState& state, const onnx::NodeProto& node,
                  int opset, OnnxAttributes& attrs)
      : state_(state), node_(node), opset_(opset), attrs_(attrs) {}

  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  OnnxAttributes& attrs() { return attrs_; }
  OnnxImportState& state() { return state_; }

  int num_inputs() const { return node_.input_size(); }
  // Input i is given (optional inputs may be absent or named "").
  bool has_input(int i) const {
    return i < node_.input_size() && !node_.input(i).empty();
  }
  absl::StatusOr<Arg> Input(int i);
  absl::StatusOr<TensorMeta> InputMeta(int i) const;
  // Input i's value when known at load, else null.
  const Tensor* InputConstant(int i) const;
  // The same for an input the mapping cannot do without (a Resize's scales,
  // a Dropout's ratio): a float graph input there is value-specialized,
  // where InputConstant's (looking for a value to fold) is taken as data.
  const Tensor* NeededConstant(int i) const;
  // Input i as integers known at load; UNIMPLEMENTED when computed at run
  // time (`what` names it).
  absl::StatusOr<std::vector<int64_t>> ConstInts(int i,
                                                 absl::string_view what) const;
  // Static sizes of input i; UNIMPLEMENTED when they are symbolic.
  absl::StatusOr<Shape> StaticShape(int i) const;
  // Whether input i's sizes are all static (a value known at load, one of
  // size expressions, or a graph value whose sizes IsStaticValue).
  bool IsStaticInput(int i) const;
  absl::StatusOr<Shape> StaticShapeOf(const Arg& value) const;

  absl::StatusOr<Arg> Emit(std::string target, std::vector<Arg> args,
                           Kwargs kwargs = {});
  absl::StatusOr<Arg> Item(const Arg& value, int index);
  const TensorMeta& Meta(const Arg& value) const {
    return state_.MetaOf(value);
  }

  // A name for a value the mapping makes itself (a mask, an arange), unique
  // to this node and `what`; '#' keeps it apart from the model's names.
  std::string InternalName(absl::string_view what) const {
    return absl::StrCat("#", OutputHint(), ".", what);
  }

  int num_outputs() const { return node_.output_size(); }
  bool has_output(int i) const {
    return i < node_.output_size() && !node_.output(i).empty();
  }
  absl::Status SetOutput(int i, const Arg& value);
  absl::Status SetOutputConstant(int i, Tensor value);
  // Input i's size expressions when it is a value computed from symbolic
  // sizes (OnnxValue::sizes), else null.
  const std::vector<Arg>* InputSizes(int i) const;
  // Defines output i as the integer values `sizes` (a 0-d value when
  // `scalar`, else 1-d) of `dtype`: a value known at load when every
  // element is an Arg::Int, else one of size expressions.
  absl::Status SetOutputSizes(int i, std::vector<Arg> sizes, bool scalar,
                              DType dtype = DType::kInt64);

 private:
  std::string OutputHint() const;

  OnnxImportState& state_;
  const onnx::NodeProto& node_;
  int opset_;
  OnnxAttributes& attrs_;
};

// Normalizes ONNX axis `axis` (may be negative) for rank `rank`;
// INVALID_ARGUMENT naming `what` when out of range.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank,
                                      absl::string_view what);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_NODE_CONTEXT_H_
