// ONNX operators defined by index patterns: Trilu, OneHot, Hardmax,
// DepthToSpace, SpaceToDepth, GatherND, ScatterND, Compress and
// ReverseSequence. Index masks and aranges
// are constants made at load from static sizes.

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// Masks and aranges the importer makes are bounded (a few bytes of model
// must not ask for gigabytes).
constexpr int64_t kMaxMaskElements = int64_t{1} << 24;

// 0, 1, ..., n - 1 as int64, shaped [n, 1, ..., 1] with `trailing` ones, in
// the graph.
absl::StatusOr<Arg> Arange(OnnxNodeContext& ctx, int64_t n, int trailing,
                           absl::string_view name) {
  if (n > kMaxMaskElements) {
    return absl::UnimplementedError(absl::StrCat("an index range of ", n));
  }
  Shape sizes = {n};
  for (int i = 0; i < trailing; ++i) sizes.push_back(1);
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, sizes));
  for (int64_t i = 0; i < n; ++i) t.data_as<int64_t>()[i] = i;
  const std::string value = ctx.InternalName(name);
  RETURN_IF_ERROR(ctx.state().AddKnownValue(value, t));
  return ctx.state().GraphValue(value);
}

absl::Status MapTrilu(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t upper, ctx.attrs().Int("upper", 1));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> kv, ctx.ConstInts(1, "k"));
    if (kv.size() != 1) return absl::InvalidArgumentError("k is not a scalar");
    k = kv[0];
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape s, ctx.StaticShape(0));
  if (s.size() < 2) return absl::InvalidArgumentError("input rank below 2");
  const int64_t rows = s[s.size() - 2], cols = s.back();
  if (rows * cols > kMaxMaskElements) {
    return absl::UnimplementedError("a mask of more than 2^24 elements");
  }
  ASSIGN_OR_RETURN(Tensor mask, Tensor::Empty(DType::kBool, {rows, cols}));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      // Saturating: k may be any int64.
      const bool keep = upper ? (j - i >= k) : (j - i <= k);
      mask.data_as<uint8_t>()[i * cols + j] = keep;
    }
  }
  const std::string name = ctx.InternalName("mask");
  RETURN_IF_ERROR(ctx.state().AddKnownValue(name, mask));
  ASSIGN_OR_RETURN(Arg m, ctx.state().GraphValue(name));
  ASSIGN_OR_RETURN(Arg zero, ScalarConstant(ctx, 0, ctx.Meta(x).dtype));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {m, x, zero}));
  return ctx.SetOutput(0, out);
}

absl::Status MapOneHot(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", -1));
  const Tensor* depth_value = ctx.NeededConstant(1);
  if (depth_value == nullptr || depth_value->numel() != 1) {
    return absl::UnimplementedError("depth must be a scalar known at load");
  }
  // A float depth (a graph input is value-specialized) must be whole: the
  // reference's arange of a fractional depth has one more element.
  const double depth_double = depth_value->Item().to_double();
  if (depth_double != std::floor(depth_double) ||
      !(std::abs(depth_double) < 1e15)) {
    return absl::UnimplementedError(
        absl::StrCat("depth ", depth_double, " is not a whole number"));
  }
  const int64_t depth = static_cast<int64_t>(depth_double);
  if (depth <= 0) return absl::InvalidArgumentError("depth is not positive");
  ASSIGN_OR_RETURN(Arg indices, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg values, ctx.Input(2));
  const int rank = ctx.Meta(indices).dim() + 1;
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  ASSIGN_OR_RETURN(Arg idx, CastTo(ctx, indices, DType::kInt64));
  // Negative indices count from depth.
  ASSIGN_OR_RETURN(Arg neg, ctx.Emit("aten.lt.Scalar", {idx, Arg::Int(0)}));
  ASSIGN_OR_RETURN(Arg wrapped, ctx.Emit("aten.add.Scalar",
                                         {idx, Arg::Int(depth), Arg::Int(1)}));
  ASSIGN_OR_RETURN(idx, ctx.Emit("aten.where.self", {neg, wrapped, idx}));
  ASSIGN_OR_RETURN(idx,
                   ctx.Emit("aten.unsqueeze.default", {idx, Arg::Int(axis)}));
  ASSIGN_OR_RETURN(
      Arg range,
      Arange(ctx, depth, rank - 1 - static_cast<int>(axis), "range"));
  ASSIGN_OR_RETURN(Arg hot, ctx.Emit("aten.eq.Tensor", {idx, range}));
  ASSIGN_OR_RETURN(
      Arg off, ctx.Emit("aten.select.int", {values, Arg::Int(0), Arg::Int(0)}));
  ASSIGN_OR_RETURN(
      Arg on, ctx.Emit("aten.select.int", {values, Arg::Int(0), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.where.self", {hot, on, off}));
  return ctx.SetOutput(0, out);
}

absl::Status MapHardmax(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis,
                   ctx.attrs().Int("axis", ctx.opset() < 13 ? 1 : -1));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape s, ctx.StaticShape(0));
  const int64_t rank = s.size();
  if (rank == 0) return absl::InvalidArgumentError("input is 0-dim");
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  Arg in = x;
  int64_t dim = s[axis];
  int trailing = static_cast<int>(rank - 1 - axis);
  if (ctx.opset() < 13) {
    // Before opset 13 the input is viewed as [prod(:axis), prod(axis:)].
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= s[d];
    ASSIGN_OR_RETURN(in, ReshapeTo(ctx, x, {outer, inner}));
    axis = 1, dim = inner, trailing = 0;
  }
  ASSIGN_OR_RETURN(Arg arg, ctx.Emit("aten.argmax.default",
                                     {in, Arg::Int(axis), Arg::Bool(true)}));
  ASSIGN_OR_RETURN(Arg range, Arange(ctx, dim, trailing, "range"));
  ASSIGN_OR_RETURN(Arg hot, ctx.Emit("aten.eq.Tensor", {arg, range}));
  ASSIGN_OR_RETURN(Arg out, CastTo(ctx, hot, ctx.Meta(x).dtype));
  if (ctx.opset() < 13) {
    ASSIGN_OR_RETURN(
        out, ReshapeTo(ctx, out, std::vector<int64_t>(s.begin(), s.end())));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapDepthSpace(OnnxNodeContext& ctx) {
  const bool to_space = ctx.node().op_type() == "DepthToSpace";
  ASSIGN_OR_RETURN(std::optional<int64_t> block,
                   ctx.attrs().OptionalInt("blocksize"));
  std::string mode = "DCR";
  if (to_space) {
    ASSIGN_OR_RETURN(mode, ctx.attrs().String("mode", "DCR"));
  }
  if (!block.has_value() || *block <= 0) {
    return absl::InvalidArgumentError("blocksize missing or not positive");
  }
  const int64_t b = *block;
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape s, ctx.StaticShape(0));
  if (s.size() != 4) return absl::InvalidArgumentError("input is not 4-D");
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<int64_t> split, perm, out;
  if (to_space) {
    if (c % (b * b) != 0) {
      return absl::InvalidArgumentError(
          "channels not divisible by blocksize^2");
    }
    if (mode == "DCR") {
      split = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return absl::InvalidArgumentError(absl::StrCat("mode '", mode, "'"));
    }
    out = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) {
      return absl::InvalidArgumentError("sizes not divisible by blocksize");
    }
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * b * b, h / b, w / b};
  }
  ASSIGN_OR_RETURN(Arg v, ReshapeTo(ctx, x, split));
  ASSIGN_OR_RETURN(v, ctx.Emit("aten.permute.default", {v, IntList(perm)}));
  ASSIGN_OR_RETURN(v, ReshapeTo(ctx, v, out));
  return ctx.SetOutput(0, v);
}

// GatherND onto aten.index.Tensor: the last dim of `indices` (m) indexes
// the m dims after the batch_dims (b) leading ones; each batch dim is
// indexed by an arange, so out[i_0..i_{q-2}] = data[i_0, .., i_{b-1},
// indices[i_0..i_{q-2}, 0], .., indices[.., m - 1], :]. aten.index
// reads negative indices from the back, as ONNX's do.
absl::Status MapGatherND(OnnxNodeContext& ctx) {
  int64_t b = 0;
  if (ctx.opset() >= 12) {
    ASSIGN_OR_RETURN(b, ctx.attrs().Int("batch_dims", 0));
  }
  ASSIGN_OR_RETURN(Shape data, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(Shape index_shape, ctx.StaticShape(1));
  const int64_t r = static_cast<int64_t>(data.size());
  const int64_t q = static_cast<int64_t>(index_shape.size());
  if (q < 1 || r < 1 || b < 0 || b >= std::min(q, r)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims ", b, " for data of rank ", r, " and indices of rank ", q));
  }
  const int64_t m = index_shape.back();
  if (m < 1 || b + m > r) {
    return absl::InvalidArgumentError(absl::StrCat("indices' last dim ", m,
                                                   " with batch_dims ", b,
                                                   " for data of rank ", r));
  }
  for (int64_t i = 0; i < b; ++i) {
    if (index_shape[i] != data[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch dim ", i, " is ", data[i], " in data and ",
                       index_shape[i], " in indices"));
    }
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg idx, ctx.Input(1));
  if (ctx.Meta(idx).dtype != DType::kInt64) {
    return absl::UnimplementedError(
        absl::StrCat("indices of dtype ", DTypeName(ctx.Meta(idx).dtype)));
  }
  Arg::List indices;
  for (int64_t i = 0; i < b; ++i) {
    ASSIGN_OR_RETURN(Arg range,
                     Arange(ctx, data[i], static_cast<int>(q - 2 - i),
                            absl::StrCat("batch", i)));
    indices.push_back(range);
  }
  for (int64_t j = 0; j < m; ++j) {
    ASSIGN_OR_RETURN(Arg column, ctx.Emit("aten.select.int",
                                          {idx, Arg::Int(-1), Arg::Int(j)}));
    indices.push_back(column);
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.index.Tensor",
                                     {x, Arg::OfList(std::move(indices))}));
  return ctx.SetOutput(0, out);
}

// ScatterND onto aten.index_put: the last dim of `indices` indexes the
// leading dims of a copy of data, written with `updates`
// (indices.shape[:-1] + data.shape[m:], as index_put takes its values);
// reduction "add" accumulates. "mul", "max" and "min" have no ATen op here.
absl::Status MapScatterND(OnnxNodeContext& ctx) {
  std::string reduction = "none";
  if (ctx.opset() >= 16) {
    ASSIGN_OR_RETURN(reduction, ctx.attrs().String("reduction", "none"));
  }
  if (reduction != "none" && reduction != "add") {
    return absl::UnimplementedError(
        absl::StrCat("reduction '", reduction, "'"));
  }
  ASSIGN_OR_RETURN(Shape data, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(Shape index_shape, ctx.StaticShape(1));
  if (index_shape.empty() || index_shape.back() < 1 ||
      index_shape.back() > static_cast<int64_t>(data.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices of shape ", ShapeToString(index_shape),
                     " for data of rank ", data.size()));
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg idx, ctx.Input(1));
  ASSIGN_OR_RETURN(Arg updates, ctx.Input(2));
  if (ctx.Meta(idx).dtype != DType::kInt64) {
    return absl::UnimplementedError(
        absl::StrCat("indices of dtype ", DTypeName(ctx.Meta(idx).dtype)));
  }
  Arg::List indices;
  for (int64_t j = 0; j < index_shape.back(); ++j) {
    ASSIGN_OR_RETURN(Arg column, ctx.Emit("aten.select.int",
                                          {idx, Arg::Int(-1), Arg::Int(j)}));
    indices.push_back(column);
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.index_put.default",
                                     {x, Arg::OfList(std::move(indices)),
                                      updates, Arg::Bool(reduction == "add")}));
  return ctx.SetOutput(0, out);
}

// An int64 vector constant in the graph, named after the node and `what`.
absl::StatusOr<Arg> IndexConstant(OnnxNodeContext& ctx,
                                  const std::vector<int64_t>& values,
                                  const Shape& sizes, absl::string_view what) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, sizes));
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  const std::string name = ctx.InternalName(what);
  RETURN_IF_ERROR(ctx.state().AddKnownValue(name, t));
  return ctx.state().GraphValue(name);
}

// Compress: the output's size is the number of true conditions, so the
// condition must be known (a graph input is value-specialized: each
// entry has its own count); then an index_select of the true positions
// (of the flattened input without an axis). A condition shorter than the
// axis drops the rest, as ONNX says.
absl::Status MapCompress(OnnxNodeContext& ctx) {
  const Tensor* condition = ctx.InputConstant(1);
  if (condition == nullptr) {
    return absl::UnimplementedError(
        "condition (input 1) is computed at run time, and its values decide "
        "the output's size");
  }
  if (condition->dim() != 1 || condition->dtype() != DType::kBool ||
      !condition->is_contiguous()) {
    return absl::InvalidArgumentError("condition must be a 1-D bool tensor");
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape xs, ctx.StaticShape(0));
  int64_t axis = 0;
  if (ctx.attrs().Raw("axis") != nullptr) {
    ASSIGN_OR_RETURN(axis, ctx.attrs().Int("axis", 0));
    ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, xs.size(), "axis"));
  } else {
    ASSIGN_OR_RETURN(x, ReshapeTo(ctx, x, {-1}));
    int64_t n = 1;
    for (int64_t d : xs) n *= d;
    xs = {n};
  }
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < std::min(condition->numel(), xs[axis]); ++i) {
    if (condition->data_as<uint8_t>()[i] != 0) picked.push_back(i);
  }
  ASSIGN_OR_RETURN(
      Arg index,
      IndexConstant(ctx, picked, {static_cast<int64_t>(picked.size())},
                    "picked"));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.index_select.default",
                                     {x, Arg::Int(axis), index}));
  return ctx.SetOutput(0, out);
}

// ReverseSequence: batch b's first sequence_lens[b] steps along time_axis
// reversed, the rest kept; with the lengths known (a graph input is
// value-specialized), one gather by a constant index.
absl::Status MapReverseSequence(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<int64_t> lens,
                   ctx.ConstInts(1, "sequence_lens"));
  ASSIGN_OR_RETURN(int64_t batch_axis, ctx.attrs().Int("batch_axis", 1));
  ASSIGN_OR_RETURN(int64_t time_axis, ctx.attrs().Int("time_axis", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape xs, ctx.StaticShape(0));
  if (xs.size() < 2 || !((batch_axis == 0 && time_axis == 1) ||
                         (batch_axis == 1 && time_axis == 0))) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_axis ", batch_axis, " and time_axis ", time_axis,
                     " for an input of rank ", xs.size()));
  }
  const int64_t batch = xs[batch_axis], time = xs[time_axis];
  if (static_cast<int64_t>(lens.size()) != batch) {
    return absl::InvalidArgumentError(
        absl::StrCat(lens.size(), " sequence lengths for a batch of ", batch));
  }
  if (batch * time > kMaxMaskElements) {
    return absl::UnimplementedError("an index of more than 2^24 elements");
  }
  Shape sizes(xs.size(), 1);
  sizes[batch_axis] = batch;
  sizes[time_axis] = time;
  std::vector<int64_t> index(static_cast<size_t>(batch * time));
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > time) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sequence length ", lens[b], " for a time axis of ", time));
    }
    for (int64_t t = 0; t < time; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      index[batch_axis == 0 ? b * time + t : t * batch + b] = from;
    }
  }
  ASSIGN_OR_RETURN(Arg idx, IndexConstant(ctx, index, sizes, "index"));
  ASSIGN_OR_RETURN(
      idx,
      ctx.Emit("aten.expand.default",
               {idx, IntList(std::vector<int64_t>(xs.begin(), xs.end()))}));
  ASSIGN_OR_RETURN(
      Arg out, ctx.Emit("aten.gather.default", {x, Arg::Int(time_axis), idx}));
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddStructureOnnxOps(OnnxOpTable& table) {
  table.Add("Trilu", MapTrilu);
  table.Add("OneHot", MapOneHot);
  table.Add("Hardmax", MapHardmax);
  table.Add("DepthToSpace", MapDepthSpace);
  table.Add("SpaceToDepth", MapDepthSpace);
  table.Add("GatherND", MapGatherND);
  table.Add("ScatterND", MapScatterND);
  table.Add("Compress", MapCompress);
  table.Add("ReverseSequence", MapReverseSequence);
}

}  // namespace guardjit
