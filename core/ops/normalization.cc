// Shape and dtype rules of _softmax, _log_softmax and native_layer_norm,
// with the checks of ATen's SoftMax.cpp and layer_norm.cpp.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", message));
}

bool IsReducedFloat(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16;
}

// _softmax and _log_softmax share a schema shape:
// (Tensor self, int dim, bool half_to_float).
absl::StatusOr<std::vector<TensorMeta>> SoftmaxMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  // "_softmax" -> "softmax", as ATen's messages spell it.
  const std::string name = args.node().op->schema.name.substr(1);
  if (!IsFloating(self.dtype)) {
    return ArgError("self",
                    absl::StrCat(name, " expects a floating point input, got ",
                                 DTypeName(self.dtype)));
  }
  auto dim = NormalizeDim(args.int_arg(1), self.dim());
  if (!dim.ok()) return ArgError("dim", dim.status().message());
  DType dtype = self.dtype;
  if (args.bool_arg(2)) {
    if (self.dtype != DType::kFloat16) {
      return ArgError("half_to_float",
                      "conversion is supported for Half type only");
    }
    if (self.device.is_cpu()) {
      return ArgError("half_to_float",
                      absl::StrCat(name,
                                   " with half to float conversion is "
                                   "not supported on CPU"));
    }
    dtype = DType::kFloat32;
  }
  return std::vector<TensorMeta>{{dtype, self.sizes, self.device}};
}

// native_layer_norm's weight and bias must have the input's dtype, or all be
// float32 for a float16/bfloat16 input (ATen's "mixed dtype" path, which
// also keeps mean and rstd in float32). Returns the dtype of mean and rstd.
absl::StatusOr<DType> LayerNormStatsDType(
    const TensorMeta& input, const std::optional<TensorMeta>& weight,
    const std::optional<TensorMeta>& bias) {
  const bool mixed =
      IsReducedFloat(input.dtype) &&
      ((weight.has_value() && weight->dtype == DType::kFloat32) ||
       (bias.has_value() && bias->dtype == DType::kFloat32));
  const DType expected = mixed ? DType::kFloat32 : input.dtype;
  for (const auto& [name, param] :
       {std::pair{"weight", &weight}, std::pair{"bias", &bias}}) {
    if (param->has_value() && (*param)->dtype != expected) {
      return ArgError(
          name, absl::StrCat("expected dtype ", DTypeName(expected),
                             mixed ? " (float16/bfloat16 input with a float32 "
                                     "parameter: all parameters float32)"
                                   : " (the input's dtype)",
                             ", got ", DTypeName((*param)->dtype)));
    }
  }
  return expected;
}

// native_layer_norm(input, normalized_shape, weight, bias, eps) ->
// (out, mean, rstd); mean and rstd keep the input's leading dims and have
// size 1 in the normalized ones.
absl::StatusOr<std::vector<TensorMeta>> LayerNormMeta(const MetaArgs& args) {
  const TensorMeta input = args.tensor(0);
  const std::vector<int64_t> normalized_shape = args.int_list(1);
  const std::optional<TensorMeta> weight = args.optional_tensor(2);
  const std::optional<TensorMeta> bias = args.optional_tensor(3);
  const std::string shape_text = ShapeToString(normalized_shape);
  if (!IsFloating(input.dtype)) {
    return ArgError(
        "input", absl::StrCat("layer_norm expects a floating point input, got ",
                              DTypeName(input.dtype)));
  }
  if (normalized_shape.empty()) {
    return ArgError("normalized_shape",
                    "Expected normalized_shape to be at least 1-dimensional, "
                    "i.e., containing at least one element, but got "
                    "normalized_shape = []");
  }
  for (const auto& [name, param] :
       {std::pair{"weight", &weight}, std::pair{"bias", &bias}}) {
    if (param->has_value() &&
        !std::equal((*param)->sizes.begin(), (*param)->sizes.end(),
                    normalized_shape.begin(), normalized_shape.end())) {
      return ArgError(
          name,
          absl::StrCat("Expected ", name,
                       " to be of same shape as normalized_shape, but got ",
                       name, " of shape ", ShapeToString((*param)->sizes),
                       " and normalized_shape = ", shape_text));
    }
  }
  const int axis = input.dim() - static_cast<int>(normalized_shape.size());
  if (axis < 0 ||
      !std::equal(input.sizes.begin() + axis, input.sizes.end(),
                  normalized_shape.begin(), normalized_shape.end())) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) absl::StrAppend(&expected, ", ", s);
    return ArgError(
        "normalized_shape",
        absl::StrCat("Given normalized_shape=", shape_text,
                     ", expected input with shape ", expected,
                     "], but got input of size", ShapeToString(input.sizes)));
  }
  ASSIGN_OR_RETURN(DType stats_dtype, LayerNormStatsDType(input, weight, bias));
  SymShape stats_shape(input.sizes.begin(), input.sizes.begin() + axis);
  stats_shape.resize(input.sizes.size(), SymInt(1));
  const TensorMeta stats{stats_dtype, stats_shape, input.device};
  return std::vector<TensorMeta>{
      {input.dtype, input.sizes, input.device}, stats, stats};
}

}  // namespace

absl::Status RegisterNormalizationOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
      SoftmaxMeta));
  RETURN_IF_ERROR(registry.Register(
      "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
      SoftmaxMeta));
  RETURN_IF_ERROR(
      registry.Register("native_layer_norm(Tensor input, SymInt[] "
                        "normalized_shape, Tensor? weight, "
                        "Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                        LayerNormMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
