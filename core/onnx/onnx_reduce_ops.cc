// ONNX reductions: ReduceSum/Mean/Max/Min/Prod, the composite ones
// (SumSquare, L1, L2, LogSum, LogSumExp, as ONNX defines them), and
// ArgMax/ArgMin (select_last_index on a flipped input).

#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status MapReduce(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  ASSIGN_OR_RETURN(int64_t keepdims, ctx.attrs().Int("keepdims", 1));
  // ReduceSum takes axes as an input (and noop_with_empty_axes) from opset
  // 13, the others from 18.
  const int axes_input_since = op == "ReduceSum" ? 13 : 18;
  ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, axes_input_since, 1));
  int64_t noop = 0;
  if (ctx.opset() >= axes_input_since) {
    ASSIGN_OR_RETURN(noop, ctx.attrs().Int("noop_with_empty_axes", 0));
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int rank = ctx.Meta(x).dim();
  const DType dtype = ctx.Meta(x).dtype;
  if ((!axes.has_value() || axes->empty()) && noop) {
    ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {x}));
    return ctx.SetOutput(0, out);
  }
  std::vector<int64_t> dims;
  if (axes.has_value() && !axes->empty()) {
    ASSIGN_OR_RETURN(dims, NormalizeAxes(*axes, rank));
  } else {
    for (int d = 0; d < rank; ++d) dims.push_back(d);
  }
  const Arg keep = Arg::Bool(keepdims != 0);
  auto sum = [&](const Arg& v) {
    return ctx.Emit("aten.sum.dim_IntList", {v, IntList(dims), keep});
  };
  Arg out;
  if (op == "ReduceSum") {
    ASSIGN_OR_RETURN(out, sum(x));
  } else if (op == "ReduceMean") {
    RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "ReduceMean input"));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mean.dim", {x, IntList(dims), keep}));
  } else if (op == "ReduceMax" || op == "ReduceMin") {
    if (rank == 0) {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.clone.default", {x}));
    } else {
      ASSIGN_OR_RETURN(out, ctx.Emit(op == "ReduceMax" ? "aten.amax.default"
                                                       : "aten.amin.default",
                                     {x, IntList(dims), keep}));
    }
  } else if (op == "ReduceProd") {
    // prod reduces one dim at a time; from the last so indices stay valid.
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.rbegin(), sorted.rend());
    out = x;
    for (int64_t d : sorted) {
      ASSIGN_OR_RETURN(out,
                       ctx.Emit("aten.prod.dim_int", {out, Arg::Int(d), keep}));
    }
    if (sorted.empty()) {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.clone.default", {x}));
    }
  } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
    ASSIGN_OR_RETURN(Arg sq, ctx.Emit("aten.mul.Tensor", {x, x}));
    ASSIGN_OR_RETURN(out, sum(sq));
    if (op == "ReduceL2") {
      if (!IsFloating(dtype)) {
        return absl::UnimplementedError("ReduceL2 of an integer input");
      }
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.sqrt.default", {out}));
    }
  } else if (op == "ReduceL1") {
    ASSIGN_OR_RETURN(Arg a, ctx.Emit("aten.abs.default", {x}));
    ASSIGN_OR_RETURN(out, sum(a));
  } else if (op == "ReduceLogSum" || op == "ReduceLogSumExp") {
    RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), absl::StrCat(op, " input")));
    Arg terms = x;
    if (op == "ReduceLogSumExp") {
      ASSIGN_OR_RETURN(terms, ctx.Emit("aten.exp.default", {x}));
    }
    ASSIGN_OR_RETURN(out, sum(terms));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.log.default", {out}));
  }
  if (ctx.Meta(out).dtype != dtype) {
    return absl::UnimplementedError(absl::StrCat(
        "the ATen reduction gives ", DTypeName(ctx.Meta(out).dtype), " for a ",
        DTypeName(dtype), " input"));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapArgReduce(OnnxNodeContext& ctx) {
  const bool max = ctx.node().op_type() == "ArgMax";
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(int64_t keepdims, ctx.attrs().Int("keepdims", 1));
  ASSIGN_OR_RETURN(int64_t last, ctx.attrs().Int("select_last_index", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, in.size(), "axis"));
  if (last) {
    ASSIGN_OR_RETURN(x, ctx.Emit("aten.flip.default", {x, IntList({axis})}));
  }
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit(max ? "aten.argmax.default" : "aten.argmin.default",
                            {x, Arg::Int(axis), Arg::Bool(keepdims != 0)}));
  if (last) {
    // Index i of the flipped input is n - 1 - i of the original.
    ASSIGN_OR_RETURN(Arg neg, ctx.Emit("aten.neg.default", {out}));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.add.Scalar",
                                   {neg, Arg::Int(in[axis] - 1), Arg::Int(1)}));
  }
  return ctx.SetOutput(0, out);
}

// TopK onto aten.topk: K an attribute before opset 10, then an int64 [1]
// input; largest and sorted from 11. The reference kernel orders ties by
// index, lower first, as ONNX asks; it always sorts (ONNX leaves
// sorted=0's order to the implementation).
absl::Status MapTopK(OnnxNodeContext& ctx) {
  int64_t k = 0;
  if (ctx.opset() < 10) {
    ASSIGN_OR_RETURN(k, ctx.attrs().Int("k", -1));
  } else {
    ASSIGN_OR_RETURN(std::vector<int64_t> ks, ctx.ConstInts(1, "K"));
    if (ks.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("K must hold one value, got ", ks.size()));
    }
    k = ks[0];
  }
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", -1));
  int64_t largest = 1, sorted = 1;
  if (ctx.opset() >= 11) {
    ASSIGN_OR_RETURN(largest, ctx.attrs().Int("largest", 1));
    ASSIGN_OR_RETURN(sorted, ctx.attrs().Int("sorted", 1));
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  if (in.empty()) return absl::InvalidArgumentError("TopK of a scalar");
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, in.size(), "axis"));
  if (k < 0 || k > in[axis]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "K ", k, " is out of range for axis ", axis, " of size ", in[axis]));
  }
  ASSIGN_OR_RETURN(Arg topk,
                   ctx.Emit("aten.topk.default",
                            {x, Arg::Int(k), Arg::Int(axis),
                             Arg::Bool(largest != 0), Arg::Bool(sorted != 0)}));
  ASSIGN_OR_RETURN(Arg values, ctx.Item(topk, 0));
  ASSIGN_OR_RETURN(Arg indices, ctx.Item(topk, 1));
  RETURN_IF_ERROR(ctx.SetOutput(0, values));
  return ctx.SetOutput(1, indices);
}

}  // namespace

void AddReduceOnnxOps(OnnxOpTable& table) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                         "ReduceProd", "ReduceSumSquare", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
    table.Add(op, MapReduce);
  }
  table.Add("ArgMax", MapArgReduce);
  table.Add("ArgMin", MapArgReduce);
  table.Add("TopK", MapTopK);
}

}  // namespace guardjit
