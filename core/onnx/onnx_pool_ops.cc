// ONNX pooling: MaxPool and AveragePool (1-D to 3-D, on ATen's 2-D and 3-D
// pools; uneven or large pads as an explicit pad of the input), and the
// global pools as reductions.

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_window.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// Output size of one spatial dim: ONNX's formula and ATen's (which drops a
// last window that would start in the right padding under ceil_mode).
int64_t OnnxPoolSize(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb,
                     int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - d * (k - 1) - 1;
  return (ceil ? (span + s - 1) / s : span / s) + 1;
}
int64_t AtenPoolSize(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p,
                     bool ceil) {
  int64_t out = (in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

absl::Status MapPool(OnnxNodeContext& ctx) {
  const bool max = ctx.node().op_type() == "MaxPool";
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape xs, ctx.StaticShape(0));
  if (xs.size() < 3 || xs.size() > 5) {
    return absl::UnimplementedError(absl::StrCat(
        "input of rank ", xs.size(), " (1 to 3 spatial dims are supported)"));
  }
  ASSIGN_OR_RETURN(Window w, ReadWindow(ctx, xs, {}));
  ASSIGN_OR_RETURN(int64_t ceil_mode, ctx.attrs().Int("ceil_mode", 0));
  int64_t count_include_pad = 0;
  if (max) {
    ASSIGN_OR_RETURN(int64_t storage_order,
                     ctx.attrs().Int("storage_order", 0));
    if (ctx.has_output(1) || storage_order != 0) {
      return absl::UnimplementedError("the Indices output is not supported");
    }
  } else {
    ASSIGN_OR_RETURN(count_include_pad,
                     ctx.attrs().Int("count_include_pad", 0));
    if (count_include_pad && ceil_mode) {
      // ATen and ONNX divide windows that overhang the padded input by
      // different counts.
      return absl::UnimplementedError("ceil_mode with count_include_pad");
    }
    for (int64_t d : w.dilations) {
      if (d != 1) {
        return absl::UnimplementedError("dilated average pooling");
      }
    }
  }
  const DType dtype = ctx.Meta(x).dtype;
  const size_t spatial = xs.size() - 2;
  // ATen pads evenly and at most half the kernel.
  bool explicit_pad = !w.symmetric();
  for (size_t d = 0; d < spatial; ++d) {
    if (w.pad_begin[d] > w.kernel[d] / 2) explicit_pad = true;
  }
  if (explicit_pad) {
    if (ceil_mode) {
      return absl::UnimplementedError("ceil_mode with uneven or large pads");
    }
    if (!max && !count_include_pad) {
      return absl::UnimplementedError(
          "uneven or large pads without count_include_pad");
    }
    if (max && !IsFloating(dtype)) {
      return absl::UnimplementedError("uneven pads of an integer max pool");
    }
    ASSIGN_OR_RETURN(
        x, PadUneven(ctx, x, w,
                     max ? -std::numeric_limits<double>::infinity() : 0.0));
  }
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t in = ctx.Meta(x).shape()[d + 2];
    if (OnnxPoolSize(in, w.kernel[d], w.strides[d], w.dilations[d],
                     w.pad_begin[d], w.pad_end[d], ceil_mode) !=
        AtenPoolSize(in, w.kernel[d], w.strides[d], w.dilations[d],
                     w.pad_begin[d], ceil_mode)) {
      return absl::UnimplementedError(
          "ceil_mode windows that start in the padding");
    }
  }
  const bool one_d = spatial == 1;
  if (one_d) {
    ASSIGN_OR_RETURN(x, ctx.Emit("aten.unsqueeze.default", {x, Arg::Int(2)}));
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    w.pad_begin.insert(w.pad_begin.begin(), 0);
  }
  const bool three_d = spatial == 3;
  Arg out;
  if (max) {
    ASSIGN_OR_RETURN(Arg pooled,
                     ctx.Emit(three_d ? "aten.max_pool3d_with_indices.default"
                                      : "aten.max_pool2d_with_indices.default",
                              {x, IntList(w.kernel), IntList(w.strides),
                               IntList(w.pad_begin), IntList(w.dilations),
                               Arg::Bool(ceil_mode != 0)}));
    ASSIGN_OR_RETURN(out, ctx.Item(pooled, 0));
  } else {
    ASSIGN_OR_RETURN(
        out,
        ctx.Emit(
            three_d ? "aten.avg_pool3d.default" : "aten.avg_pool2d.default",
            {x, IntList(w.kernel), IntList(w.strides), IntList(w.pad_begin),
             Arg::Bool(ceil_mode != 0),
             Arg::Bool(count_include_pad != 0 || explicit_pad), Arg::None()}));
  }
  if (one_d) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.squeeze.dim", {out, Arg::Int(2)}));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapGlobalPool(OnnxNodeContext& ctx) {
  const bool max = ctx.node().op_type() == "GlobalMaxPool";
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int rank = ctx.Meta(x).dim();
  if (rank < 3) return absl::InvalidArgumentError("input rank below 3");
  std::vector<int64_t> dims;
  for (int d = 2; d < rank; ++d) dims.push_back(d);
  ASSIGN_OR_RETURN(
      Arg out,
      max ? ctx.Emit("aten.amax.default", {x, IntList(dims), Arg::Bool(true)})
          : ctx.Emit("aten.mean.dim", {x, IntList(dims), Arg::Bool(true)}));
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddPoolOnnxOps(OnnxOpTable& table) {
  table.Add("MaxPool", MapPool);
  table.Add("AveragePool", MapPool);
  table.Add("GlobalMaxPool", MapGlobalPool);
  table.Add("GlobalAveragePool", MapGlobalPool);
}

}  // namespace guardjit
