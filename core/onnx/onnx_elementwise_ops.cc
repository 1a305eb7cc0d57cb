// ONNX elementwise operators: unary math, binary arithmetic with numpy
// broadcasting, comparisons, logic, and the variadic Sum/Mean/Max/Min.
// ONNX requires both operands of a binary op to have one type, so ATen's
// promotion never changes a result's dtype; a mapping whose ATen result
// would have another dtype than ONNX's refuses rather than convert.

#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_fold.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// The ATen target of a one-to-one unary or binary op.
const std::string* DirectTarget(absl::string_view op_type) {
  static const auto* targets =
      new absl::flat_hash_map<std::string, std::string>{
          {"Abs", "aten.abs.default"},
          {"Neg", "aten.neg.default"},
          {"Exp", "aten.exp.default"},
          {"Log", "aten.log.default"},
          {"Sqrt", "aten.sqrt.default"},
          {"Reciprocal", "aten.reciprocal.default"},
          {"Floor", "aten.floor.default"},
          {"Ceil", "aten.ceil.default"},
          {"Round", "aten.round.default"},
          {"Sin", "aten.sin.default"},
          {"Cos", "aten.cos.default"},
          {"Tan", "aten.tan.default"},
          {"Asin", "aten.asin.default"},
          {"Acos", "aten.acos.default"},
          {"Atan", "aten.atan.default"},
          {"Sinh", "aten.sinh.default"},
          {"Cosh", "aten.cosh.default"},
          {"Asinh", "aten.asinh.default"},
          {"Acosh", "aten.acosh.default"},
          {"Atanh", "aten.atanh.default"},
          {"Tanh", "aten.tanh.default"},
          {"Sigmoid", "aten.sigmoid.default"},
          {"Relu", "aten.relu.default"},
          {"Erf", "aten.erf.default"},
          {"Sign", "aten.sign.default"},
          {"IsNaN", "aten.isnan.default"},
          {"Not", "aten.logical_not.default"},
          {"Add", "aten.add.Tensor"},
          {"Sub", "aten.sub.Tensor"},
          {"Mul", "aten.mul.Tensor"},
          {"Equal", "aten.eq.Tensor"},
          {"Less", "aten.lt.Tensor"},
          {"Greater", "aten.gt.Tensor"},
          {"LessOrEqual", "aten.le.Tensor"},
          {"GreaterOrEqual", "aten.ge.Tensor"},
          {"And", "aten.logical_and.default"},
          {"Or", "aten.logical_or.default"},
          {"Xor", "aten.logical_xor.default"},
      };
  auto it = targets->find(op_type);
  return it == targets->end() ? nullptr : &it->second;
}

// Ops whose result is bool whatever the operands'.
bool ReturnsBool(absl::string_view op_type) {
  return op_type == "Equal" || op_type == "Less" || op_type == "Greater" ||
         op_type == "LessOrEqual" || op_type == "GreaterOrEqual" ||
         op_type == "IsNaN";
}

// The ONNX result dtype check: same as input 0, or bool.
absl::Status CheckResultType(OnnxNodeContext& ctx, const Arg& result,
                             DType expected) {
  const DType got = ctx.Meta(result).dtype;
  if (got == expected) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "the ATen mapping computes ", DTypeName(got), " where ONNX gives ",
      DTypeName(expected), " (operands of different dtypes?)"));
}

// Shape arithmetic on values known at load stays known (FoldIntBinary).
absl::StatusOr<bool> FoldKnown(OnnxNodeContext& ctx) {
  const Tensor* a = ctx.InputConstant(0);
  if (ctx.node().op_type() == "Neg" && ctx.num_inputs() == 1 && a != nullptr &&
      a->dtype() == DType::kInt64 && a->numel() <= 64) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, a->sizes()));
    for (int64_t k = 0; k < a->numel(); ++k) {
      const int64_t v = a->data_as<int64_t>()[k];
      if (v == std::numeric_limits<int64_t>::min()) return false;
      t.data_as<int64_t>()[k] = -v;
    }
    RETURN_IF_ERROR(ctx.SetOutputConstant(0, t));
    return true;
  }
  const Tensor* b = ctx.InputConstant(1);
  if (ctx.num_inputs() != 2 || a == nullptr || b == nullptr) return false;
  ASSIGN_OR_RETURN(std::optional<Tensor> folded,
                   FoldIntBinary(ctx.node().op_type(), *a, *b));
  if (!folded.has_value()) return false;
  RETURN_IF_ERROR(ctx.SetOutputConstant(0, *std::move(folded)));
  return true;
}

absl::Status MapDirect(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(bool folded, FoldKnown(ctx));
  if (folded) return absl::OkStatus();
  const std::string& target = *DirectTarget(ctx.node().op_type());
  std::vector<Arg> args;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(Arg a, ctx.Input(i));
    args.push_back(std::move(a));
  }
  ASSIGN_OR_RETURN(TensorMeta first, ctx.InputMeta(0));
  if (args.size() == 2) {
    ASSIGN_OR_RETURN(TensorMeta second, ctx.InputMeta(1));
    if (second.dtype != first.dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat("operands are ", DTypeName(first.dtype), " and ",
                       DTypeName(second.dtype), "; ONNX requires one type"));
    }
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit(target, std::move(args)));
  RETURN_IF_ERROR(CheckResultType(
      ctx, out,
      ReturnsBool(ctx.node().op_type()) ? DType::kBool : first.dtype));
  return ctx.SetOutput(0, out);
}

absl::Status MapIdentity(OnnxNodeContext& ctx) {
  if (const Tensor* c = ctx.InputConstant(0)) {
    return ctx.SetOutputConstant(0, *c);
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  return ctx.SetOutput(0, x);
}

absl::Status MapDiv(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(bool folded, FoldKnown(ctx));
  if (folded) return absl::OkStatus();
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  const DType dtype = ctx.Meta(a).dtype;
  if (ctx.Meta(b).dtype != dtype) {
    return absl::InvalidArgumentError("operands have different dtypes");
  }
  // Integer division truncates toward zero in ONNX.
  absl::StatusOr<Arg> out =
      IsFloating(dtype) ? ctx.Emit("aten.div.Tensor", {a, b})
                        : ctx.Emit("aten.div.Tensor_mode", {a, b},
                                   {{"rounding_mode", Arg::String("trunc")}});
  RETURN_IF_ERROR(out.status());
  RETURN_IF_ERROR(CheckResultType(ctx, *out, dtype));
  return ctx.SetOutput(0, *out);
}

absl::Status MapMod(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t fmod, ctx.attrs().Int("fmod", 0));
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  const DType dtype = ctx.Meta(a).dtype;
  if (fmod == 0 && IsFloating(dtype)) {
    return absl::InvalidArgumentError("fmod=0 on floating-point operands");
  }
  // fmod=0: the remainder has the divisor's sign (Python's %).
  ASSIGN_OR_RETURN(
      Arg out,
      ctx.Emit(fmod ? "aten.fmod.Tensor" : "aten.remainder.Tensor", {a, b}));
  RETURN_IF_ERROR(CheckResultType(ctx, out, dtype));
  return ctx.SetOutput(0, out);
}

absl::Status MapPow(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  const DType dtype = ctx.Meta(a).dtype;
  // The exponent may have another type; the result has the base's. An
  // integer base to a floating-point exponent is computed in float64 and
  // truncated, as ONNX's reference (numpy's power) does.
  if (!IsFloating(dtype) && IsFloating(ctx.Meta(b).dtype)) {
    ASSIGN_OR_RETURN(a, CastTo(ctx, a, DType::kFloat64));
    ASSIGN_OR_RETURN(b, CastTo(ctx, b, DType::kFloat64));
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.pow.Tensor_Tensor", {a, b}));
  ASSIGN_OR_RETURN(out, CastTo(ctx, out, dtype));
  return ctx.SetOutput(0, out);
}

// Sum, Mean, Max, Min over any number of inputs, broadcasting.
absl::Status MapVariadic(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  if (ctx.num_inputs() == 0) {
    return absl::InvalidArgumentError("needs at least one input");
  }
  ASSIGN_OR_RETURN(Arg acc, ctx.Input(0));
  const DType dtype = ctx.Meta(acc).dtype;
  const char* target = op == "Max"   ? "aten.maximum.default"
                       : op == "Min" ? "aten.minimum.default"
                                     : "aten.add.Tensor";
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(Arg next, ctx.Input(i));
    if (ctx.Meta(next).dtype != dtype) {
      return absl::InvalidArgumentError("inputs have different dtypes");
    }
    ASSIGN_OR_RETURN(acc, ctx.Emit(target, {acc, next}));
  }
  if (op == "Mean") {
    if (!IsFloating(dtype)) {
      return absl::InvalidArgumentError("Mean of integer inputs");
    }
    ASSIGN_OR_RETURN(
        acc, ctx.Emit("aten.div.Scalar", {acc, Arg::Int(ctx.num_inputs())}));
  }
  if (ctx.num_inputs() == 1) {
    // One input: the output is a copy of it.
    ASSIGN_OR_RETURN(acc, ctx.Emit("aten.clone.default", {acc}));
  }
  RETURN_IF_ERROR(CheckResultType(ctx, acc, dtype));
  return ctx.SetOutput(0, acc);
}

absl::Status MapWhere(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg cond, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(1));
  ASSIGN_OR_RETURN(Arg y, ctx.Input(2));
  if (ctx.Meta(cond).dtype != DType::kBool) {
    return absl::InvalidArgumentError("condition is not bool");
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {cond, x, y}));
  RETURN_IF_ERROR(CheckResultType(ctx, out, ctx.Meta(x).dtype));
  return ctx.SetOutput(0, out);
}

absl::Status MapIsInf(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t positive, ctx.attrs().Int("detect_positive", 1));
  ASSIGN_OR_RETURN(int64_t negative, ctx.attrs().Int("detect_negative", 1));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg inf, ctx.Emit("aten.isinf.default", {x}));
  if (positive != negative) {
    ASSIGN_OR_RETURN(Arg sign,
                     ctx.Emit(positive ? "aten.gt.Scalar" : "aten.lt.Scalar",
                              {x, Arg::Int(0)}));
    ASSIGN_OR_RETURN(inf, ctx.Emit("aten.logical_and.default", {inf, sign}));
  } else if (!positive) {
    ASSIGN_OR_RETURN(
        inf, ctx.Emit("aten.logical_and.default", {inf, Arg::Bool(false)}));
  }
  return ctx.SetOutput(0, inf);
}

}  // namespace

void AddElementwiseOnnxOps(OnnxOpTable& table) {
  for (const char* op :
       {"Abs",        "Neg",     "Exp",     "Log",         "Sqrt",
        "Reciprocal", "Floor",   "Ceil",    "Round",       "Sin",
        "Cos",        "Tan",     "Asin",    "Acos",        "Atan",
        "Sinh",       "Cosh",    "Asinh",   "Acosh",       "Atanh",
        "Tanh",       "Sigmoid", "Relu",    "Erf",         "Sign",
        "IsNaN",      "Not",     "Add",     "Sub",         "Mul",
        "Equal",      "Less",    "Greater", "LessOrEqual", "GreaterOrEqual",
        "And",        "Or",      "Xor"}) {
    table.Add(op, MapDirect);
  }
  table.Add("Identity", MapIdentity);
  table.Add("Div", MapDiv);
  table.Add("Mod", MapMod);
  table.Add("Pow", MapPow);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    table.Add(op, MapVariadic);
  }
  table.Add("Where", MapWhere);
  table.Add("IsInf", MapIsInf);
}

}  // namespace guardjit
