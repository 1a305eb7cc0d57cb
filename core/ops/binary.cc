// Shape and dtype rules of the binary and ternary pointwise ops: arithmetic,
// comparisons, logical and bitwise ops, where and clamp. Type promotion is
// torch.result_type over the tensor operands (Scalar arguments count as
// wrapped numbers); every operand broadcasts to the output shape.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using Metas = std::vector<TensorMeta>;

// A tensor operand and the schema name errors call it by.
struct Operand {
  absl::string_view name;
  TensorMeta meta;
};

absl::Status ArgError(absl::string_view arg, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", message));
}

DType ResultTypeOf(const std::vector<Operand>& operands) {
  std::vector<TensorMeta> metas;
  for (const Operand& op : operands) metas.push_back(op.meta);
  return ResultType(metas);
}

// TensorIterator's device rule: 0-dim CPU tensors (and wrapped numbers) go
// with tensors on any device; all other operands must share one device.
absl::StatusOr<Device> CommonDevice(const std::vector<Operand>& operands) {
  std::optional<Device> device;
  for (const Operand& op : operands) {
    if (op.meta.sizes.empty() && op.meta.device.is_cpu()) continue;
    if (!device.has_value()) {
      device = op.meta.device;
    } else if (!(*device == op.meta.device)) {
      return ArgError(
          op.name,
          absl::StrCat("expected all tensors on the same device, "
                       "found ",
                       device->ToString(), " and ", op.meta.device.ToString()));
    }
  }
  return device.value_or(Device::Cpu());
}

// The output of a pointwise op over `operands`: their broadcast shape (the
// error names the first operand that does not broadcast) and common device.
absl::StatusOr<Metas> PointwiseOutput(const std::vector<Operand>& operands,
                                      DType dtype) {
  SymShape shape;
  for (const Operand& op : operands) {
    auto broadcast = BroadcastShapes(shape, op.meta.sizes);
    if (!broadcast.ok()) return ArgError(op.name, broadcast.status().message());
    shape = *std::move(broadcast);
  }
  ASSIGN_OR_RETURN(Device device, CommonDevice(operands));
  return Metas{TensorMeta{dtype, std::move(shape), device}};
}

// Operands `self` and `other`, the first two arguments of most ops here.
std::vector<Operand> SelfOther(const MetaArgs& args) {
  return {{"self", args.tensor(0)}, {"other", args.tensor(1)}};
}

// The largest finite magnitude of a floating dtype.
double FloatingMax(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 65504.0;
    case DType::kBFloat16:
      return 3.3895313892515355e38;
    case DType::kFloat32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// Bounds of c10's checked conversion to an integral dtype. Unsigned types
// (and bool) also accept negatives down to -max, which wrap as in C.
std::pair<int64_t, int64_t> IntegralBounds(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return {-1, 1};
    case DType::kUInt8:
      return {-255, 255};
    case DType::kInt8:
      return {INT8_MIN, INT8_MAX};
    case DType::kInt16:
      return {INT16_MIN, INT16_MAX};
    case DType::kInt32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

// PyTorch reads alpha, integer exponents and clamp bounds with the checked
// Scalar::to<T>() of the computation dtype and raises when they overflow it.
absl::Status CheckScalarFits(absl::string_view arg, const Scalar& value,
                             DType dtype) {
  bool fits = true;
  if (IsFloating(dtype) || value.is_float()) {
    double v = value.to_double();
    double max = IsFloating(dtype)
                     ? FloatingMax(dtype)
                     : static_cast<double>(IntegralBounds(dtype).second);
    double min = IsFloating(dtype)
                     ? -max
                     : static_cast<double>(IntegralBounds(dtype).first);
    fits = std::isnan(v) || (IsFloating(dtype) && std::isinf(v)) ||
           (v >= min && v <= max);
  } else if (value.is_int()) {
    auto [min, max] = IntegralBounds(dtype);
    fits = value.to_int() >= min && value.to_int() <= max;
  }
  if (fits) return absl::OkStatus();
  return ArgError(arg, absl::StrCat("value ", value.ToString(),
                                    " cannot be converted to type ",
                                    DTypeName(dtype), " without overflow"));
}

// ATen's alpha_check plus the checked conversion of alpha to the result type.
absl::Status CheckAlpha(const Scalar& alpha, DType dtype) {
  if (alpha.is_bool() && dtype != DType::kBool) {
    return ArgError("alpha",
                    "boolean alpha is only supported for bool results");
  }
  if (alpha.is_float() && !IsFloating(dtype)) {
    return ArgError("alpha",
                    absl::StrCat("must not be a floating point number for ",
                                 DTypeName(dtype), " inputs"));
  }
  return CheckScalarFits("alpha", alpha, dtype);
}

// add.Tensor/add.Scalar and sub.*: self + alpha * other.
absl::StatusOr<Metas> AddSubMeta(const MetaArgs& args, bool subtract) {
  std::vector<Operand> operands = SelfOther(args);
  if (subtract) {
    for (const Operand& op : operands) {
      if (op.meta.dtype == DType::kBool) {
        return ArgError(op.name,
                        "subtraction with a bool tensor is not supported; use "
                        "logical_xor() for two masks or logical_not() to "
                        "invert one");
      }
    }
  }
  DType dtype = ResultTypeOf(operands);
  RETURN_IF_ERROR(CheckAlpha(args.scalar(2), dtype));
  return PointwiseOutput(operands, dtype);
}

// Ops defined for every dtype, computing in and returning the promoted type.
absl::StatusOr<Metas> PromotingMeta(const MetaArgs& args) {
  std::vector<Operand> operands = SelfOther(args);
  return PointwiseOutput(operands, ResultTypeOf(operands));
}

// remainder and fmod: PyTorch has no bool kernels for them.
absl::StatusOr<Metas> NumericMeta(const MetaArgs& args, absl::string_view op) {
  std::vector<Operand> operands = SelfOther(args);
  DType dtype = ResultTypeOf(operands);
  if (dtype == DType::kBool) {
    return ArgError("self", absl::StrCat(op,
                                         " is not supported for bool "
                                         "inputs (self and other are bool)"));
  }
  return PointwiseOutput(operands, dtype);
}

absl::StatusOr<std::optional<std::string>> RoundingMode(const MetaArgs& args) {
  std::optional<absl::string_view> mode = args.optional_string(2);
  if (!mode.has_value()) return std::nullopt;
  if (*mode != "trunc" && *mode != "floor") {
    return ArgError("rounding_mode",
                    absl::StrCat("expected one of None, 'trunc' or 'floor', "
                                 "got '",
                                 *mode, "'"));
  }
  return std::string(*mode);
}

// div.Tensor/div.Scalar (true division: integers give the default float) and
// the *_mode overloads (rounding keeps the promoted type).
absl::StatusOr<Metas> DivMeta(const MetaArgs& args, bool has_mode) {
  std::vector<Operand> operands = SelfOther(args);
  DType dtype = ResultTypeOf(operands);
  std::optional<std::string> mode;
  if (has_mode) {
    ASSIGN_OR_RETURN(mode, RoundingMode(args));
  }
  if (!mode.has_value()) {
    if (!IsFloating(dtype)) dtype = kDefaultFloat;
  } else if (dtype == DType::kBool) {
    return ArgError("rounding_mode",
                    absl::StrCat("'", *mode,
                                 "' division is not supported for "
                                 "bool inputs"));
  }
  return PointwiseOutput(operands, dtype);
}

enum class PowOverload { kTensorTensor, kTensorScalar, kScalar };

absl::StatusOr<Metas> PowMeta(const MetaArgs& args, PowOverload overload) {
  std::vector<Operand> operands = {{"self", args.tensor(0)},
                                   {"exponent", args.tensor(1)}};
  DType dtype = ResultTypeOf(operands);
  if (overload == PowOverload::kTensorScalar) {
    Scalar exponent = args.scalar(1);
    if (IsIntegral(args.tensor(0).dtype, /*include_bool=*/true) &&
        !exponent.is_float() && exponent.to_int() < 0) {
      return ArgError("exponent",
                      "integers to negative integer powers are not allowed");
    }
    // float32 and float64 kernels read the exponent as a double; the others
    // convert it to the computation type, checked.
    if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
      RETURN_IF_ERROR(CheckScalarFits("exponent", exponent, dtype));
    }
  } else if (dtype == DType::kBool) {
    // Only pow.Tensor_Scalar has bool results (x**False = 1, x**True = x, as
    // PyTorch's fill and copy shortcuts give); bool pow has no kernel.
    return ArgError("exponent", "pow is not supported for bool inputs");
  }
  return PointwiseOutput(operands, dtype);
}

// Comparisons and logical ops: bool output (comparisons compute in the
// promoted type, which the kernel derives from its inputs).
absl::StatusOr<Metas> BoolOutputMeta(const MetaArgs& args) {
  return PointwiseOutput(SelfOther(args), DType::kBool);
}

absl::StatusOr<Metas> BitwiseMeta(const MetaArgs& args) {
  std::vector<Operand> operands = SelfOther(args);
  DType dtype = ResultTypeOf(operands);
  if (IsFloating(dtype)) {
    for (const Operand& op : operands) {
      if (IsFloating(op.meta.dtype)) {
        return ArgError(op.name,
                        absl::StrCat("bitwise ops need integral or bool "
                                     "tensors, got ",
                                     DTypeName(op.meta.dtype)));
      }
    }
  }
  return PointwiseOutput(operands, dtype);
}

absl::StatusOr<Metas> WhereMeta(const MetaArgs& args) {
  Operand condition = {"condition", args.tensor(0)};
  if (condition.meta.dtype != DType::kBool) {
    return ArgError("condition", absl::StrCat("expected a bool tensor, got ",
                                              DTypeName(condition.meta.dtype)));
  }
  std::vector<Operand> values = {{"self", args.tensor(1)},
                                 {"other", args.tensor(2)}};
  DType dtype = ResultTypeOf(values);
  values.insert(values.begin(), condition);
  return PointwiseOutput(values, dtype);
}

absl::Status CheckClampBounds(bool has_min, bool has_max) {
  if (has_min || has_max) return absl::OkStatus();
  return ArgError("min", "at least one of 'min' or 'max' must not be None");
}

// clamp (Scalar bounds): the bounds take part in type promotion as wrapped
// numbers and must fit the result type.
absl::StatusOr<Metas> ClampScalarMeta(const MetaArgs& args) {
  std::optional<Scalar> min = args.optional_scalar(1);
  std::optional<Scalar> max = args.optional_scalar(2);
  RETURN_IF_ERROR(CheckClampBounds(min.has_value(), max.has_value()));
  std::vector<Operand> operands = {{"self", args.tensor(0)}};
  if (min.has_value()) operands.push_back({"min", args.tensor(1)});
  if (max.has_value()) operands.push_back({"max", args.tensor(2)});
  DType dtype = ResultTypeOf(operands);
  if (dtype == DType::kBool) {
    return ArgError("self", "clamp is not supported for bool tensors");
  }
  if (min.has_value()) RETURN_IF_ERROR(CheckScalarFits("min", *min, dtype));
  if (max.has_value()) RETURN_IF_ERROR(CheckScalarFits("max", *max, dtype));
  return PointwiseOutput({operands[0]}, dtype);
}

// clamp.Tensor: all three broadcast together. With a single bound PyTorch
// runs maximum/minimum, which accept bool; with both, bool has no kernel.
absl::StatusOr<Metas> ClampTensorMeta(const MetaArgs& args) {
  bool has_min = !args.is_none(1);
  bool has_max = !args.is_none(2);
  RETURN_IF_ERROR(CheckClampBounds(has_min, has_max));
  std::vector<Operand> operands = {{"self", args.tensor(0)}};
  if (has_min) operands.push_back({"min", args.tensor(1)});
  if (has_max) operands.push_back({"max", args.tensor(2)});
  DType dtype = ResultTypeOf(operands);
  if (dtype == DType::kBool && has_min && has_max) {
    return ArgError("self",
                    "clamp with both bounds is not supported for bool "
                    "tensors");
  }
  return PointwiseOutput(operands, dtype);
}

}  // namespace

absl::Status RegisterBinaryOps(OpRegistry& registry) {
  auto add = [](const MetaArgs& a) { return AddSubMeta(a, false); };
  auto sub = [](const MetaArgs& a) { return AddSubMeta(a, true); };
  RETURN_IF_ERROR(registry.Register(
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      add));
  RETURN_IF_ERROR(registry.Register(
      "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", add));
  RETURN_IF_ERROR(registry.Register(
      "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      sub));
  RETURN_IF_ERROR(registry.Register(
      "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", sub));
  RETURN_IF_ERROR(registry.Register(
      "mul.Tensor(Tensor self, Tensor other) -> Tensor", PromotingMeta));
  RETURN_IF_ERROR(registry.Register(
      "mul.Scalar(Tensor self, Scalar other) -> Tensor", PromotingMeta));

  auto div = [](const MetaArgs& a) { return DivMeta(a, false); };
  auto div_mode = [](const MetaArgs& a) { return DivMeta(a, true); };
  RETURN_IF_ERROR(registry.Register(
      "div.Tensor(Tensor self, Tensor other) -> Tensor", div));
  RETURN_IF_ERROR(registry.Register(
      "div.Scalar(Tensor self, Scalar other) -> Tensor", div));
  RETURN_IF_ERROR(
      registry.Register("div.Tensor_mode(Tensor self, Tensor other, *, str? "
                        "rounding_mode) -> Tensor",
                        div_mode));
  RETURN_IF_ERROR(
      registry.Register("div.Scalar_mode(Tensor self, Scalar other, *, str? "
                        "rounding_mode) -> Tensor",
                        div_mode));

  // atan2 promotes like true division: integral and bool inputs give float.
  RETURN_IF_ERROR(
      registry.Register("atan2(Tensor self, Tensor other) -> Tensor", div));

  RETURN_IF_ERROR(registry.Register(
      "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
      [](const MetaArgs& a) {
        return PowMeta(a, PowOverload::kTensorTensor);
      }));
  RETURN_IF_ERROR(registry.Register(
      "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
      [](const MetaArgs& a) {
        return PowMeta(a, PowOverload::kTensorScalar);
      }));
  RETURN_IF_ERROR(registry.Register(
      "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
      [](const MetaArgs& a) { return PowMeta(a, PowOverload::kScalar); }));

  RETURN_IF_ERROR(registry.Register(
      "maximum(Tensor self, Tensor other) -> Tensor", PromotingMeta));
  RETURN_IF_ERROR(registry.Register(
      "minimum(Tensor self, Tensor other) -> Tensor", PromotingMeta));

  for (const char* op : {"remainder", "fmod"}) {
    auto meta = [op](const MetaArgs& a) { return NumericMeta(a, op); };
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Tensor(Tensor self, Tensor other) -> Tensor"),
        meta));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Scalar(Tensor self, Scalar other) -> Tensor"),
        meta));
  }
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Tensor(Tensor self, Tensor other) -> Tensor"),
        BoolOutputMeta));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Scalar(Tensor self, Scalar other) -> Tensor"),
        BoolOutputMeta));
  }
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, "(Tensor self, Tensor other) -> Tensor"),
        BoolOutputMeta));
  }
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Tensor(Tensor self, Tensor other) -> Tensor"),
        BitwiseMeta));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat(op, ".Scalar(Tensor self, Scalar other) -> Tensor"),
        BitwiseMeta));
  }
  RETURN_IF_ERROR(registry.Register(
      "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
      WhereMeta));
  RETURN_IF_ERROR(registry.Register(
      "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
      ClampScalarMeta));
  RETURN_IF_ERROR(registry.Register(
      "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
      ClampTensorMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
