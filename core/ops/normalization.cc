// Shape and dtype rules of _softmax, _log_softmax, native_layer_norm,
// native_group_norm and the
// _native_batch_norm_legit family, with the checks of ATen's SoftMax.cpp,
// layer_norm.cpp and Normalization.cpp.

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

// Where the _native_batch_norm_legit overloads keep their arguments; -1
// when absent.
struct BatchNormLayout {
  int running_mean, running_var, training, eps;
};

// (input, weight?, bias?, [running_mean, running_var,] [training,] momentum,
// eps) -> (out, save_mean, save_invstd). input is (N, C, *); each parameter
// has C elements. save_mean and save_invstd are [C] in training and empty
// ([0]) in evaluation; they are float32 for a float16/bfloat16 input with
// float32 parameters (ATen's mixed type), else the input's dtype.
absl::StatusOr<std::vector<TensorMeta>> BatchNormMeta(
    const MetaArgs& args, const BatchNormLayout& at) {
  const TensorMeta input = args.tensor(0);
  if (!IsFloating(input.dtype)) {
    return ArgError(
        "input", absl::StrCat("batch_norm expects a floating point input, got ",
                              DTypeName(input.dtype)));
  }
  if (input.dim() < 2) {
    return ArgError("input",
                    absl::StrCat("batch_norm expects an input of at least 2 "
                                 "dims (N, C, ...), got ",
                                 ShapeToString(input.sizes)));
  }
  const bool training = at.training >= 0 && args.bool_arg(at.training);
  const bool has_stats = at.running_mean >= 0;
  if (!training && !has_stats) {
    return ArgError("training",
                    "running_mean and running_var must be defined in "
                    "evaluation mode");
  }
  std::vector<std::pair<const char*, std::optional<TensorMeta>>> params = {
      {"weight", args.optional_tensor(1)}, {"bias", args.optional_tensor(2)}};
  if (has_stats) {
    params.push_back({"running_mean", args.tensor(at.running_mean)});
    params.push_back({"running_var", args.tensor(at.running_var)});
  }
  const SymInt channels = input.sizes[1];
  bool mixed = false;
  for (const auto& [name, param] : params) {
    if (!param.has_value()) continue;
    SymInt numel = 1;
    for (const SymInt& s : param->sizes) numel *= s;
    if (param->dim() != 1 || numel != channels) {
      return ArgError(
          name, absl::StrCat(name, " should contain ", channels.ToString(),
                             " elements not ", numel.ToString()));
    }
    mixed = mixed ||
            (IsReducedFloat(input.dtype) && param->dtype == DType::kFloat32);
  }
  const TensorMeta stats{mixed ? DType::kFloat32 : input.dtype,
                         {training ? channels : SymInt(0)},
                         input.device};
  return std::vector<TensorMeta>{
      {input.dtype, input.sizes, input.device}, stats, stats};
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps) ->
// (out, mean, rstd): input holds N * C * HxW elements with C at dim 1,
// weight and bias have C elements, mean and rstd are (N, group) in the
// stats dtype of layer norm (float32 for a float16/bfloat16 input with
// float32 parameters).
absl::StatusOr<std::vector<TensorMeta>> GroupNormMeta(const MetaArgs& args) {
  const TensorMeta input = args.tensor(0);
  const std::optional<TensorMeta> weight = args.optional_tensor(1);
  const std::optional<TensorMeta> bias = args.optional_tensor(2);
  const SymInt n = args.sym_int(3);
  const SymInt c = args.sym_int(4);
  const SymInt hxw = args.sym_int(5);
  const int64_t group = args.int_arg(6);
  if (!IsFloating(input.dtype)) {
    return ArgError(
        "input", absl::StrCat("group_norm expects a floating point input, got ",
                              DTypeName(input.dtype)));
  }
  if (input.dim() < 2) {
    return ArgError("input",
                    absl::StrCat("expected at least 2 dims (N, C, *), got ",
                                 ShapeToString(input.sizes)));
  }
  if (group <= 0) {
    return ArgError("group", absl::StrCat("expected a positive number of "
                                          "groups, got ",
                                          group));
  }
  // Compared symbolically: a dynamic N (sym_size of the input) stays a
  // symbol, guarded only where the ranges do not prove the equality.
  if (input.sizes[0] != n || input.sizes[1] != c ||
      input.numel() != n * c * hxw) {
    return ArgError(
        "input", absl::StrCat("expected N=", n.ToString(), ", C=", c.ToString(),
                              ", HxW=", hxw.ToString(), ", got input of shape ",
                              ShapeToString(input.sizes)));
  }
  if (c.Specialize() % group != 0) {
    return ArgError(
        "group",
        absl::StrCat("Expected number of channels in input to be divisible "
                     "by num_groups, but got input of shape ",
                     ShapeToString(input.sizes), " and num_groups=", group));
  }
  for (const auto& [name, param] :
       {std::pair{"weight", &weight}, std::pair{"bias", &bias}}) {
    if (param->has_value() &&
        ((*param)->dim() != 1 || (*param)->sizes[0] != c)) {
      return ArgError(
          name,
          absl::StrCat("Expected ", name,
                       " to be a vector of size equal "
                       "to the number of channels in input, but got ",
                       name, " of shape ", ShapeToString((*param)->sizes),
                       " and input of shape ", ShapeToString(input.sizes)));
    }
  }
  ASSIGN_OR_RETURN(DType stats_dtype, LayerNormStatsDType(input, weight, bias));
  const SymShape stats = {n, SymInt(group)};
  return std::vector<TensorMeta>{{input.dtype, input.sizes, input.device},
                                 {stats_dtype, stats, input.device},
                                 {stats_dtype, stats, input.device}};
}

}  // namespace

absl::Status RegisterNormalizationOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt "
      "N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, "
      "Tensor)",
      GroupNormMeta));
  RETURN_IF_ERROR(registry.Register(
      "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, "
      "Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, "
      "float eps) -> (Tensor, Tensor, Tensor)",
      [](const MetaArgs& args) {
        return BatchNormMeta(args, {3, 4, -1, 6});
      }));
  RETURN_IF_ERROR(registry.Register(
      "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float "
      "momentum, float eps) -> (Tensor, Tensor, Tensor)",
      [](const MetaArgs& args) {
        return BatchNormMeta(args, {3, 4, 5, 7});
      }));
  RETURN_IF_ERROR(registry.Register(
      "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, "
      "Tensor? bias, bool training, float momentum, float eps) -> (Tensor, "
      "Tensor, Tensor)",
      [](const MetaArgs& args) {
        return BatchNormMeta(args, {-1, -1, 3, 5});
      }));
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
