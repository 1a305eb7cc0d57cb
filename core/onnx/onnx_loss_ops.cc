// ONNX losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the
// latter a log_softmax over the class axis, then the former), with class
// weights, ignore_index and none/sum/mean reductions as ONNX defines them.

#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// NLL of `log_prob` ([N, C, d...]) at `target` ([N, d...]); `weight` [C] or
// None. Defines output 0.
absl::Status NllLoss(OnnxNodeContext& ctx, const Arg& log_prob,
                     const Arg& target_in, const Arg& weight) {
  ASSIGN_OR_RETURN(std::string reduction,
                   ctx.attrs().String("reduction", "mean"));
  ASSIGN_OR_RETURN(std::optional<int64_t> ignore,
                   ctx.attrs().OptionalInt("ignore_index"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return absl::InvalidArgumentError(
        absl::StrCat("reduction '", reduction, "'"));
  }
  const TensorMeta& lp = ctx.Meta(log_prob);
  RETURN_IF_ERROR(RequireFloat(lp, "input"));
  if (lp.dim() < 2 || ctx.Meta(target_in).dim() != lp.dim() - 1) {
    return absl::InvalidArgumentError(
        "input must be [N, C, d...] and target [N, d...]");
  }
  if (IsFloating(ctx.Meta(target_in).dtype)) {
    return absl::InvalidArgumentError("target is not an integer tensor");
  }
  ASSIGN_OR_RETURN(Arg target, CastTo(ctx, target_in, DType::kInt64));
  Arg ignored;
  if (ignore.has_value()) {
    ASSIGN_OR_RETURN(ignored,
                     ctx.Emit("aten.eq.Scalar", {target, Arg::Int(*ignore)}));
    ASSIGN_OR_RETURN(Arg zero, ScalarConstant(ctx, 0, DType::kInt64));
    ASSIGN_OR_RETURN(target,
                     ctx.Emit("aten.where.self", {ignored, zero, target}));
  }
  ASSIGN_OR_RETURN(Arg index,
                   ctx.Emit("aten.unsqueeze.default", {target, Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg picked, ctx.Emit("aten.gather.default",
                                        {log_prob, Arg::Int(1), index}));
  ASSIGN_OR_RETURN(picked, ctx.Emit("aten.squeeze.dim", {picked, Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg loss, ctx.Emit("aten.neg.default", {picked}));
  Arg w;  // the weight of each element, when not all 1
  if (!weight.is_none()) {
    // weight[target] as an embedding lookup of [C, 1] rows.
    ASSIGN_OR_RETURN(Arg rows,
                     ctx.Emit("aten.unsqueeze.default", {weight, Arg::Int(1)}));
    ASSIGN_OR_RETURN(w, ctx.Emit("aten.embedding.default", {rows, target}));
    ASSIGN_OR_RETURN(w, ctx.Emit("aten.squeeze.dim", {w, Arg::Int(-1)}));
    ASSIGN_OR_RETURN(loss, ctx.Emit("aten.mul.Tensor", {loss, w}));
  }
  if (!ignored.is_none()) {
    ASSIGN_OR_RETURN(Arg zero, ScalarConstant(ctx, 0, lp.dtype));
    ASSIGN_OR_RETURN(loss, ctx.Emit("aten.where.self", {ignored, zero, loss}));
    if (w.is_none()) {
      ASSIGN_OR_RETURN(w,
                       ctx.Emit("aten.full_like.default", {loss, Arg::Int(1)}));
    }
    ASSIGN_OR_RETURN(w, ctx.Emit("aten.where.self", {ignored, zero, w}));
  }
  Arg out = loss;
  if (reduction == "sum") {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.sum.default", {loss}));
  } else if (reduction == "mean") {
    if (w.is_none()) {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.mean.default", {loss}));
    } else {
      ASSIGN_OR_RETURN(Arg total, ctx.Emit("aten.sum.default", {loss}));
      ASSIGN_OR_RETURN(Arg norm, ctx.Emit("aten.sum.default", {w}));
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.div.Tensor", {total, norm}));
    }
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapNll(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg input, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg target, ctx.Input(1));
  Arg weight;
  if (ctx.has_input(2)) {
    ASSIGN_OR_RETURN(weight, ctx.Input(2));
  }
  return NllLoss(ctx, input, target, weight);
}

absl::Status MapSoftmaxCrossEntropy(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg scores, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg labels, ctx.Input(1));
  Arg weight;
  if (ctx.has_input(2)) {
    ASSIGN_OR_RETURN(weight, ctx.Input(2));
  }
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(scores), "scores"));
  if (ctx.Meta(scores).dim() < 2) {
    return absl::InvalidArgumentError("scores must be [N, C, d...]");
  }
  ASSIGN_OR_RETURN(Arg log_prob,
                   ctx.Emit("aten._log_softmax.default",
                            {scores, Arg::Int(1), Arg::Bool(false)}));
  RETURN_IF_ERROR(NllLoss(ctx, log_prob, labels, weight));
  return ctx.SetOutput(1, log_prob);
}

}  // namespace

void AddLossOnnxOps(OnnxOpTable& table) {
  table.Add("NegativeLogLikelihoodLoss", MapNll);
  table.Add("SoftmaxCrossEntropyLoss", MapSoftmaxCrossEntropy);
}

}  // namespace guardjit
