#include "core/onnx/onnx_value_inputs.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/onnx/onnx_io_spec.h"
#include "core/onnx/onnx_tensor.h"
#include "core/status_macros.h"
#include "core/value_inputs.h"

namespace guardjit {
namespace {

// Re-imports the model with the value-specialized inputs known.
class OnnxRebuilder : public GraphRebuilder {
 public:
  OnnxRebuilder(std::shared_ptr<const onnx::ModelProto> model,
                GraphLoadOptions options)
      : model_(std::move(model)), options_(std::move(options)) {}

  absl::StatusOr<std::shared_ptr<const Graph>> Rebuild(
      const Graph& graph, absl::Span<const InputValues> values) const override {
    absl::flat_hash_map<std::string, Tensor> bound;
    for (const InputValues& v : values) {
      ASSIGN_OR_RETURN(Tensor t, ValuesTensor(v));
      bound.emplace(graph.node(graph.inputs()[v.input]).name, std::move(t));
    }
    OnnxImportFailure failure;
    auto rebuilt = ImportOnnxGraph(*model_, options_, bound, &failure);
    if (!rebuilt.ok()) return rebuilt.status();
    return std::shared_ptr<const Graph>(*std::move(rebuilt));
  }

 private:
  std::shared_ptr<const onnx::ModelProto> model_;
  GraphLoadOptions options_;
};

// A graph input whose values may be specialized: an integer, bool, float32
// or float64 tensor of static shape with at most kMaxSpecializedValues
// elements. `integral`: only an integer or bool one.
bool Specializable(const onnx::ValueInfoProto& input, bool integral) {
  if (!input.type().has_tensor_type()) return false;
  const auto& type = input.type().tensor_type();
  auto dtype = DTypeFromOnnx(type.elem_type());
  if (!dtype.ok() || !IsValueInputDType(*dtype) ||
      (integral && !IsIntegral(*dtype, /*include_bool=*/true))) {
    return false;
  }
  if (!type.has_shape()) return false;
  int64_t n = 1;
  for (const auto& dim : type.shape().dim()) {
    if (!dim.has_dim_value()) return false;
    n *= dim.dim_value();
    if (n > kMaxSpecializedValues) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ValueSpecializedOnnxGraph(
    const onnx::ModelProto& model, const GraphLoadOptions& options,
    const OnnxImportFailure& failure, const absl::Status& error) {
  const onnx::GraphProto& graph = model.graph();
  if (failure.wanted.empty() || failure.node < 0 ||
      failure.node >= graph.node_size() ||
      error.code() != absl::StatusCode::kUnimplemented) {
    return error;
  }
  absl::flat_hash_set<std::string> initialized;
  for (const onnx::TensorProto& init : graph.initializer()) {
    initialized.insert(init.name());
  }
  absl::flat_hash_map<std::string, const onnx::ValueInfoProto*> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!initialized.contains(input.name())) inputs[input.name()] = &input;
  }
  absl::flat_hash_set<std::string> specialized;
  absl::flat_hash_set<std::string> needed(failure.needed.begin(),
                                          failure.needed.end());
  for (const std::string& name : failure.wanted) {
    auto it = inputs.find(name);
    if (it == inputs.end() ||
        !Specializable(*it->second, /*integral=*/!needed.contains(name))) {
      return error;
    }
    specialized.insert(name);
  }
  for (const std::string& name : graph.node(failure.node).input()) {
    auto it = inputs.find(name);
    if (it != inputs.end() && Specializable(*it->second, true)) {
      specialized.insert(name);
    }
  }
  // What the plain import did not reach is checked as far as it can be
  // without the values: every later node's op is one the importer has.
  RETURN_IF_ERROR(CheckOnnxOps(model, failure.node + 1));

  GraphBuilder builder(
      graph.name().empty() ? "onnx" : graph.name(),
      options.registry ? *options.registry : OpRegistry::Global());
  Arg::List operands;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initialized.contains(input.name())) continue;
    const std::string what = absl::StrCat("graph input '", input.name(), "'");
    ASSIGN_OR_RETURN(ValueRef ref, builder.AddPlaceholder(input.name()));
    ASSIGN_OR_RETURN(IoSpec spec, IoSpecFromOnnx(input, what));
    RETURN_IF_ERROR(builder.SetInputSpec(input.name(), std::move(spec)));
    if (specialized.contains(input.name())) {
      RETURN_IF_ERROR(builder.MarkValueSpecialized(input.name()));
    }
    operands.push_back(Arg::Value(ref));
  }
  ASSIGN_OR_RETURN(
      ValueRef node,
      builder.AddNode("#value_specialized", kValueSpecializedTarget,
                      {Arg::OfList(std::move(operands))}));
  std::vector<Arg> outputs;
  for (int i = 0; i < graph.output_size(); ++i) {
    const std::string& name = graph.output(i).name();
    std::string node_name = name;
    if (name.empty() || builder.partial_graph().FindNode(name) >= 0) {
      node_name = absl::StrCat("#output.", i);
    }
    ASSIGN_OR_RETURN(
        ValueRef item,
        builder.AddNode(node_name, "getitem", {Arg::Value(node), Arg::Int(i)}));
    outputs.push_back(Arg::Value(item));
  }
  if (outputs.empty()) {
    return absl::InvalidArgumentError("ONNX graph has no outputs");
  }
  RETURN_IF_ERROR(builder.SetOutputs(std::move(outputs)));
  for (int i = 0; i < graph.output_size(); ++i) {
    const onnx::ValueInfoProto& output = graph.output(i);
    ASSIGN_OR_RETURN(IoSpec spec,
                     IoSpecFromOnnx(output, absl::StrCat("graph output '",
                                                         output.name(), "'")));
    RETURN_IF_ERROR(builder.SetOutputSpec(i, std::move(spec)));
  }
  builder.SetRebuilder(std::make_shared<OnnxRebuilder>(
      std::make_shared<const onnx::ModelProto>(model), options));
  return builder.Finish();
}

}  // namespace guardjit
