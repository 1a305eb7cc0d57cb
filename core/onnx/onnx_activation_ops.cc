// ONNX activations and normalizing maps: Elu/Selu/Celu, LeakyRelu, PRelu,
// HardSigmoid/HardSwish, ThresholdedRelu, Softplus/Softsign, Shrink, Clip,
// Gelu (opset 20), Softmax/LogSoftmax (with opset < 13's flatten-to-2D
// semantics).

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::StatusOr<Arg> FloatInput(OnnxNodeContext& ctx, int i) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(i));
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "input"));
  return x;
}

absl::Status MapElu(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  double alpha = 1, scale = 1, input_scale = 1;
  if (op == "Selu") {
    ASSIGN_OR_RETURN(float a,
                     ctx.attrs().Float("alpha", 1.67326319217681884765625f));
    ASSIGN_OR_RETURN(float g,
                     ctx.attrs().Float("gamma", 1.05070102214813232421875f));
    alpha = a, scale = g;
  } else {
    ASSIGN_OR_RETURN(float a, ctx.attrs().Float("alpha", 1.0f));
    alpha = a;
    // Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
    if (op == "Celu") input_scale = 1.0 / a;
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.elu.default",
                                     {x, Arg::Float(alpha), Arg::Float(scale),
                                      Arg::Float(input_scale)}));
  return ctx.SetOutput(0, out);
}

absl::Status MapLeakyRelu(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float alpha, ctx.attrs().Float("alpha", 0.01f));
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit("aten.leaky_relu.default", {x, Arg::Float(alpha)}));
  return ctx.SetOutput(0, out);
}

absl::Status MapPRelu(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg slope, ctx.Input(1));
  if (ctx.Meta(x).dtype != ctx.Meta(slope).dtype) {
    return absl::InvalidArgumentError("x and slope have different dtypes");
  }
  ASSIGN_OR_RETURN(Arg neg, ctx.Emit("aten.lt.Scalar", {x, Arg::Int(0)}));
  ASSIGN_OR_RETURN(Arg scaled, ctx.Emit("aten.mul.Tensor", {x, slope}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {neg, scaled, x}));
  if (ctx.Meta(out).sizes.size() != ctx.Meta(x).sizes.size()) {
    return absl::InvalidArgumentError(
        "slope does not broadcast to the input (unidirectionally)");
  }
  return ctx.SetOutput(0, out);
}

// alpha * x + beta clamped to [0, 1]; HardSwish multiplies x by it.
absl::Status MapHardSigmoid(OnnxNodeContext& ctx) {
  const bool swish = ctx.node().op_type() == "HardSwish";
  float alpha = 1.0f / 6, beta = 0.5f;
  if (!swish) {
    ASSIGN_OR_RETURN(alpha, ctx.attrs().Float("alpha", 0.2f));
    ASSIGN_OR_RETURN(beta, ctx.attrs().Float("beta", 0.5f));
  }
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(Arg ax, ctx.Emit("aten.mul.Scalar", {x, Arg::Float(alpha)}));
  ASSIGN_OR_RETURN(Arg axb, ctx.Emit("aten.add.Scalar",
                                     {ax, Arg::Float(beta), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.hardtanh.default",
                                     {axb, Arg::Float(0), Arg::Float(1)}));
  if (swish) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mul.Tensor", {x, out}));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapThresholdedRelu(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float alpha, ctx.attrs().Float("alpha", 1.0f));
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(Arg keep,
                   ctx.Emit("aten.gt.Scalar", {x, Arg::Float(alpha)}));
  ASSIGN_OR_RETURN(Arg zero, ScalarConstant(ctx, 0, ctx.Meta(x).dtype));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {keep, x, zero}));
  return ctx.SetOutput(0, out);
}

absl::Status MapSoftplus(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(Arg e, ctx.Emit("aten.exp.default", {x}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.log1p.default", {e}));
  return ctx.SetOutput(0, out);
}

absl::Status MapSoftsign(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(Arg a, ctx.Emit("aten.abs.default", {x}));
  ASSIGN_OR_RETURN(Arg d,
                   ctx.Emit("aten.add.Scalar", {a, Arg::Int(1), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.div.Tensor", {x, d}));
  return ctx.SetOutput(0, out);
}

absl::Status MapShrink(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float lambd, ctx.attrs().Float("lambd", 0.5f));
  ASSIGN_OR_RETURN(float bias, ctx.attrs().Float("bias", 0.0f));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const DType dtype = ctx.Meta(x).dtype;
  if (!IsFloating(dtype) &&
      (lambd != std::floor(lambd) || bias != std::floor(bias))) {
    return absl::UnimplementedError(
        "fractional lambd or bias on an integer input");
  }
  auto number = [&](float v) {
    return IsFloating(dtype) ? Arg::Float(v)
                             : Arg::Int(static_cast<int64_t>(v));
  };
  ASSIGN_OR_RETURN(Arg low, ctx.Emit("aten.lt.Scalar", {x, number(-lambd)}));
  ASSIGN_OR_RETURN(Arg high, ctx.Emit("aten.gt.Scalar", {x, number(lambd)}));
  ASSIGN_OR_RETURN(Arg plus,
                   ctx.Emit("aten.add.Scalar", {x, number(bias), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg minus,
                   ctx.Emit("aten.sub.Scalar", {x, number(bias), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg zero, ScalarConstant(ctx, 0, dtype));
  ASSIGN_OR_RETURN(Arg upper, ctx.Emit("aten.where.self", {high, minus, zero}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {low, plus, upper}));
  ASSIGN_OR_RETURN(out, CastTo(ctx, out, dtype));
  return ctx.SetOutput(0, out);
}

absl::Status MapGelu(OnnxNodeContext& ctx) {
  if (ctx.opset() < 20) {
    return absl::UnimplementedError(
        "Gelu is an operator of opset 20 and later");
  }
  absl::StatusOr<std::string> approximate =
      ctx.attrs().String("approximate", "none");
  RETURN_IF_ERROR(approximate.status());
  const bool tanh = *approximate == "tanh";
  if (!tanh && *approximate != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("approximate '", *approximate, "'"));
  }
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  ASSIGN_OR_RETURN(
      Arg out,
      ctx.Emit("aten.gelu.default", {x},
               {{"approximate", Arg::String(tanh ? "tanh" : "none")}}));
  return ctx.SetOutput(0, out);
}

absl::Status MapClip(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const DType dtype = ctx.Meta(x).dtype;
  Arg out = x;
  if (ctx.opset() < 11) {
    ASSIGN_OR_RETURN(
        float lo, ctx.attrs().Float("min", -std::numeric_limits<float>::max()));
    ASSIGN_OR_RETURN(
        float hi, ctx.attrs().Float("max", std::numeric_limits<float>::max()));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.clamp.default",
                                   {x, Arg::Float(lo), Arg::Float(hi)}));
  } else {
    Arg lo, hi;
    for (int i : {1, 2}) {
      if (!ctx.has_input(i)) continue;
      ASSIGN_OR_RETURN(Arg bound, ctx.Input(i));
      if (ctx.Meta(bound).dtype != dtype || ctx.Meta(bound).dim() != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(i == 1 ? "min" : "max",
                         " is not a scalar of the "
                         "input's dtype"));
      }
      (i == 1 ? lo : hi) = bound;
    }
    if (lo.is_none() && hi.is_none()) {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.clone.default", {x}));
    } else {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.clamp.Tensor", {x, lo, hi}));
    }
  }
  ASSIGN_OR_RETURN(out, CastTo(ctx, out, dtype));
  return ctx.SetOutput(0, out);
}

absl::Status MapSoftmax(OnnxNodeContext& ctx) {
  const bool log = ctx.node().op_type() == "LogSoftmax";
  const char* target =
      log ? "aten._log_softmax.default" : "aten._softmax.default";
  ASSIGN_OR_RETURN(Arg x, FloatInput(ctx, 0));
  const int64_t rank = ctx.Meta(x).dim();
  ASSIGN_OR_RETURN(int64_t axis,
                   ctx.attrs().Int("axis", ctx.opset() < 13 ? 1 : -1));
  if (rank == 0) return absl::InvalidArgumentError("input is 0-dim");
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  if (ctx.opset() >= 13 || axis == rank - 1) {
    ASSIGN_OR_RETURN(Arg out,
                     ctx.Emit(target, {x, Arg::Int(axis), Arg::Bool(false)}));
    return ctx.SetOutput(0, out);
  }
  // Before opset 13 the input is viewed as 2-D [prod(:axis), prod(axis:)].
  ASSIGN_OR_RETURN(Shape shape, ctx.StaticShape(0));
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  ASSIGN_OR_RETURN(Arg flat, ReshapeTo(ctx, x, {outer, -1}));
  ASSIGN_OR_RETURN(Arg y,
                   ctx.Emit(target, {flat, Arg::Int(1), Arg::Bool(false)}));
  ASSIGN_OR_RETURN(
      Arg out,
      ReshapeTo(ctx, y, std::vector<int64_t>(shape.begin(), shape.end())));
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddActivationOnnxOps(OnnxOpTable& table) {
  for (const char* op : {"Elu", "Selu", "Celu"}) table.Add(op, MapElu);
  table.Add("LeakyRelu", MapLeakyRelu);
  table.Add("PRelu", MapPRelu);
  table.Add("HardSigmoid", MapHardSigmoid);
  table.Add("HardSwish", MapHardSigmoid);
  table.Add("ThresholdedRelu", MapThresholdedRelu);
  table.Add("Softplus", MapSoftplus);
  table.Add("Softsign", MapSoftsign);
  table.Add("Shrink", MapShrink);
  table.Add("Clip", MapClip);
  table.Add("Gelu", MapGelu);
  table.Add("Softmax", MapSoftmax);
  table.Add("LogSoftmax", MapSoftmax);
}

}  // namespace guardjit
