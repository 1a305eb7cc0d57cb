// ONNX pooling: MaxPool and AveragePool (1-D to 3-D, on ATen's 2-D and 3-D
// pools; uneven or large pads as an explicit pad of the input, averages
// over it divided by the pooled count of input elements), and the
// global pools as reductions.

#include <algorithm>
#include <limits>
#include <optional>
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
  int64_t count_include_pad = 0, storage_order = 0;
  if (max) {
    ASSIGN_OR_RETURN(storage_order, ctx.attrs().Int("storage_order", 0));
    if (ctx.has_output(1) && storage_order != 0 && xs.size() > 4) {
      return absl::UnimplementedError(
          "the Indices output of a 3-D pool in column-major storage_order");
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
  std::optional<Arg> count_mask;  // set for uneven pads of an average
  // ATen pads evenly and at most half the kernel.
  bool explicit_pad = !w.symmetric();
  for (size_t d = 0; d < spatial; ++d) {
    if (w.pad_begin[d] > w.kernel[d] / 2) explicit_pad = true;
  }
  if (explicit_pad) {
    if (max && ctx.has_output(1)) {
      // ATen's indices would count the padded input's positions.
      return absl::UnimplementedError(
          "the Indices output with uneven or large pads");
    }
    if (ceil_mode) {
      return absl::UnimplementedError("ceil_mode with uneven or large pads");
    }
    if (max && !IsFloating(dtype)) {
      return absl::UnimplementedError("uneven pads of an integer max pool");
    }
    if (!max && !count_include_pad) {
      // Windows count only the input's elements: the same pool of a mask
      // of ones, zero in the padding, divides by that count.
      RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "AveragePool input"));
      ASSIGN_OR_RETURN(Arg ones,
                       ctx.Emit("aten.full_like.default", {x, Arg::Int(1)}));
      Window mask_window = w;
      ASSIGN_OR_RETURN(count_mask, PadUneven(ctx, ones, mask_window, 0.0));
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
    if (count_mask.has_value()) {
      ASSIGN_OR_RETURN(count_mask, ctx.Emit("aten.unsqueeze.default",
                                            {*count_mask, Arg::Int(2)}));
    }
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
    if (ctx.has_output(1)) {
      // ATen's index is within each (n, c) plane; ONNX's counts the whole
      // row-major input: plus (n * C + c) * the plane's size.
      ASSIGN_OR_RETURN(Arg indices, ctx.Item(pooled, 1));
      if (one_d) {
        ASSIGN_OR_RETURN(indices,
                         ctx.Emit("aten.squeeze.dim", {indices, Arg::Int(2)}));
      }
      if (storage_order != 0 && xs.size() == 4) {
        // Column-major within the plane: h * W + w becomes w * H + h.
        ASSIGN_OR_RETURN(Arg width, ScalarConstant(ctx, xs[3], DType::kInt64));
        ASSIGN_OR_RETURN(Arg height, ScalarConstant(ctx, xs[2], DType::kInt64));
        ASSIGN_OR_RETURN(Arg row,
                         ctx.Emit("aten.div.Tensor_mode", {indices, width},
                                  {{"rounding_mode", Arg::String("floor")}}));
        ASSIGN_OR_RETURN(Arg start, ctx.Emit("aten.mul.Tensor", {row, width}));
        ASSIGN_OR_RETURN(Arg col,
                         ctx.Emit("aten.sub.Tensor", {indices, start}));
        ASSIGN_OR_RETURN(col, ctx.Emit("aten.mul.Tensor", {col, height}));
        ASSIGN_OR_RETURN(indices, ctx.Emit("aten.add.Tensor", {col, row}));
      }
      int64_t plane = 1;
      for (size_t d = 2; d < xs.size(); ++d) plane *= xs[d];
      Shape offset_shape(xs.size(), 1);
      offset_shape[0] = xs[0];
      offset_shape[1] = xs[1];
      ASSIGN_OR_RETURN(Tensor offsets,
                       Tensor::Empty(DType::kInt64, offset_shape));
      for (int64_t k = 0; k < xs[0] * xs[1]; ++k) {
        offsets.data_as<int64_t>()[k] = k * plane;
      }
      const std::string name = ctx.InternalName("plane_offsets");
      RETURN_IF_ERROR(ctx.state().AddKnownValue(name, offsets));
      ASSIGN_OR_RETURN(Arg offset, ctx.state().GraphValue(name));
      ASSIGN_OR_RETURN(indices, ctx.Emit("aten.add.Tensor", {indices, offset}));
      RETURN_IF_ERROR(ctx.SetOutput(1, indices));
    }
  } else {
    auto average = [&](const Arg& v) {
      return ctx.Emit(
          three_d ? "aten.avg_pool3d.default" : "aten.avg_pool2d.default",
          {v, IntList(w.kernel), IntList(w.strides), IntList(w.pad_begin),
           Arg::Bool(ceil_mode != 0),
           Arg::Bool(count_include_pad != 0 || explicit_pad), Arg::None()});
    };
    ASSIGN_OR_RETURN(out, average(x));
    if (count_mask.has_value()) {
      // (sum / k) / (count / k): the mean over the window's input elements.
      ASSIGN_OR_RETURN(Arg fraction, average(*count_mask));
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.div.Tensor", {out, fraction}));
    }
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

// LRN: y = x / (bias + alpha / size * square_sum)^beta, square_sum over
// the channel window [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
// (clipped to the channels): the squares, viewed as [N, 1, C, rest],
// padded with zeros on C and averaged by a [size, 1] window, which
// divides the window's sum by size as the formula does.
absl::Status MapLrn(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float alpha, ctx.attrs().Float("alpha", 1e-4f));
  ASSIGN_OR_RETURN(float beta, ctx.attrs().Float("beta", 0.75f));
  ASSIGN_OR_RETURN(float bias, ctx.attrs().Float("bias", 1.0f));
  ASSIGN_OR_RETURN(int64_t size, ctx.attrs().Int("size", 0));
  if (size < 1) return absl::InvalidArgumentError("size must be positive");
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape xs, ctx.StaticShape(0));
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "LRN input"));
  if (xs.size() < 3) return absl::InvalidArgumentError("input rank below 3");
  int64_t rest = 1;
  for (size_t d = 2; d < xs.size(); ++d) rest *= xs[d];
  ASSIGN_OR_RETURN(Arg sq, ctx.Emit("aten.mul.Tensor", {x, x}));
  ASSIGN_OR_RETURN(sq, ReshapeTo(ctx, sq, {xs[0], 1, xs[1], rest}));
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  ASSIGN_OR_RETURN(
      sq, ctx.Emit("aten.constant_pad_nd.default",
                   {sq, IntList({0, 0, before, after}), Arg::Float(0.0)}));
  ASSIGN_OR_RETURN(Arg mean, ctx.Emit("aten.avg_pool2d.default",
                                      {sq, IntList({size, 1}), IntList({1, 1}),
                                       IntList({0, 0}), Arg::Bool(false),
                                       Arg::Bool(true), Arg::None()}));
  ASSIGN_OR_RETURN(
      mean, ReshapeTo(ctx, mean, std::vector<int64_t>(xs.begin(), xs.end())));
  ASSIGN_OR_RETURN(Arg scaled,
                   ctx.Emit("aten.mul.Scalar", {mean, Arg::Float(alpha)}));
  ASSIGN_OR_RETURN(Arg base, ctx.Emit("aten.add.Scalar",
                                      {scaled, Arg::Float(bias), Arg::Int(1)}));
  ASSIGN_OR_RETURN(
      Arg denom, ctx.Emit("aten.pow.Tensor_Scalar", {base, Arg::Float(beta)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.div.Tensor", {x, denom}));
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddPoolOnnxOps(OnnxOpTable& table) {
  table.Add("MaxPool", MapPool);
  table.Add("AveragePool", MapPool);
  table.Add("GlobalMaxPool", MapGlobalPool);
  table.Add("GlobalAveragePool", MapGlobalPool);
  table.Add("LRN", MapLrn);
}

}  // namespace guardjit
