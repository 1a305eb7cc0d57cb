// ONNX operators that move data without computing on it: Reshape, Flatten,
// Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Expand, Tile, Pad.
// A shape given as an input must be known at load (an initializer, a
// Constant, or shape arithmetic on static sizes); reshapes of values known
// at load stay known, so shape arithmetic folds.

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// Input 0 reshaped to `sizes` (all known): a known value stays known.
absl::Status SetReshaped(OnnxNodeContext& ctx,
                         const std::vector<int64_t>& sizes) {
  if (const Tensor* c = ctx.InputConstant(0)) {
    const Shape shape(sizes.begin(), sizes.end());
    auto numel = CheckedNumel(shape);
    if (!numel.ok() || *numel != c->numel()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot reshape ", c->DebugString(), " to [",
                       absl::StrJoin(sizes, ", "), "]"));
    }
    return ctx.SetOutputConstant(0,
                                 c->AsStrided(shape, ContiguousStrides(shape)));
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg out, ReshapeTo(ctx, x, sizes));
  if (out == x) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.alias.default", {x}));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapReshape(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t allowzero, ctx.attrs().Int("allowzero", 0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstInts(1, "shape"));
  int infer = -1;
  Shape known_dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && !allowzero) {
      if (d >= in.size()) {
        return absl::InvalidArgumentError("shape copies a dim the input lacks");
      }
      shape[d] = in[d];
    }
    if (shape[d] == -1) {
      if (infer >= 0) return absl::InvalidArgumentError("two -1 in shape");
      infer = static_cast<int>(d);
      continue;
    }
    known_dims.push_back(shape[d]);
  }
  ASSIGN_OR_RETURN(int64_t known, CheckedNumel(known_dims));
  ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(in));
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      return absl::InvalidArgumentError("cannot infer the -1 dim");
    }
    shape[infer] = numel / known;
  }
  return SetReshaped(ctx, shape);
}

absl::Status MapFlatten(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 1));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  const int64_t rank = in.size();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    return absl::InvalidArgumentError("axis out of range");
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[d];
  return SetReshaped(ctx, {outer, inner});
}

absl::Status MapSqueeze(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, 13, 1));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  std::vector<int64_t> keep;
  std::vector<bool> drop(in.size(), false);
  if (axes.has_value()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> n, NormalizeAxes(*axes, in.size()));
    for (int64_t a : n) {
      if (in[a] != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("axis ", a, " has size ", in[a], ", not 1"));
      }
      drop[a] = true;
    }
  } else {
    for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (!drop[d]) keep.push_back(in[d]);
  }
  return SetReshaped(ctx, keep);
}

absl::Status MapUnsqueeze(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, 13, 1));
  if (!axes.has_value()) return absl::InvalidArgumentError("axes missing");
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  const int64_t rank = in.size() + axes->size();
  ASSIGN_OR_RETURN(std::vector<int64_t> n, NormalizeAxes(*axes, rank));
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(n.begin(), n.end(), d) != n.end()) {
      out.push_back(1);
    } else {
      out.push_back(in[next++]);
    }
  }
  return SetReshaped(ctx, out);
}

absl::Status MapTranspose(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int rank = ctx.Meta(x).dim();
  ASSIGN_OR_RETURN(auto perm, ctx.attrs().Ints("perm"));
  std::vector<int64_t> p;
  if (perm.has_value()) {
    p = *perm;
  } else {
    for (int d = rank - 1; d >= 0; --d) p.push_back(d);
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.permute.default", {x, IntList(p)}));
  return ctx.SetOutput(0, out);
}

absl::Status MapConcat(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  // Known int64 vectors (shape arithmetic) concatenate at load.
  bool all_known = true;
  std::vector<int64_t> joined;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* c = ctx.InputConstant(i);
    if (c == nullptr || c->dtype() != DType::kInt64 || c->dim() != 1) {
      all_known = false;
      break;
    }
    for (int64_t k = 0; k < c->numel(); ++k) {
      joined.push_back(c->data_as<int64_t>()[k]);
    }
  }
  if (all_known && ctx.num_inputs() > 0) {
    ASSIGN_OR_RETURN(
        Tensor t,
        Tensor::Empty(DType::kInt64, {static_cast<int64_t>(joined.size())}));
    std::copy(joined.begin(), joined.end(), t.data_as<int64_t>());
    return ctx.SetOutputConstant(0, t);
  }
  Arg::List tensors;
  int rank = -1;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(Arg t, ctx.Input(i));
    rank = ctx.Meta(t).dim();
    tensors.push_back(t);
  }
  if (rank <= 0) return absl::InvalidArgumentError("inputs are 0-dim");
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.cat.default",
                                     {Arg::OfList(tensors), Arg::Int(axis)}));
  return ctx.SetOutput(0, out);
}

absl::Status MapSplit(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, in.size(), "axis"));
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13) {
    ASSIGN_OR_RETURN(auto split, ctx.attrs().Ints("split"));
    if (split.has_value()) sizes = *split;
  } else if (ctx.has_input(1)) {
    ASSIGN_OR_RETURN(sizes, ctx.ConstInts(1, "split"));
  }
  const int parts = ctx.num_outputs();
  // num_outputs: chunks of ceil(dim / n), the last one smaller.
  ASSIGN_OR_RETURN(const int64_t n, SplitNumOutputs(ctx, !sizes.empty()));
  if (n != 0) {
    const int64_t chunk = (in[axis] + n - 1) / n;
    if (chunk * (n - 1) >= in[axis]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim ", in[axis], " does not split into ", n, " non-empty parts"));
    }
    sizes.assign(n - 1, chunk);
    sizes.push_back(in[axis] - chunk * (n - 1));
  }
  if (sizes.empty()) {
    if (parts == 0 || in[axis] % parts != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim ", in[axis], " does not split into ", parts, " equal parts"));
    }
    sizes.assign(parts, in[axis] / parts);
  }
  if (static_cast<int>(sizes.size()) != parts) {
    return absl::InvalidArgumentError("split sizes do not match the outputs");
  }
  ASSIGN_OR_RETURN(Arg pieces, ctx.Emit("aten.split_with_sizes.default",
                                        {x, IntList(sizes), Arg::Int(axis)}));
  for (int i = 0; i < parts; ++i) {
    if (!ctx.has_output(i)) continue;
    ASSIGN_OR_RETURN(Arg piece, ctx.Item(pieces, i));
    // A copy: ONNX outputs are distinct tensors, and one graph output may
    // not alias another.
    ASSIGN_OR_RETURN(piece, ctx.Emit("aten.clone.default", {piece}));
    RETURN_IF_ERROR(ctx.SetOutput(i, piece));
  }
  return absl::OkStatus();
}

// One axis of a Slice with ONNX's clamping: positions start, start + step,
// ... before end (after it, for a negative step), all inside [0, dim).
struct SliceRange {
  int64_t start, end, step;
};

SliceRange ClampSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0 && end > std::numeric_limits<int64_t>::min() + dim) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, std::max(end, start), step};
  }
  if (dim == 0) return {0, 0, step};
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, std::min(end, start), step};
}

absl::Status MapSlice(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(SliceArgs args, SliceArgsOf(ctx));
  std::vector<int64_t>& starts = args.starts;
  std::vector<int64_t>& ends = args.ends;
  std::vector<int64_t>& axes = args.axes;
  std::vector<int64_t>& steps = args.steps;
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return absl::InvalidArgumentError(
        "starts, ends, axes, steps differ in length");
  }
  ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, in.size()));
  std::vector<SliceRange> ranges;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] == 0) return absl::InvalidArgumentError("step 0");
    ranges.push_back(ClampSlice(starts[i], ends[i], steps[i], in[axes[i]]));
  }
  // Shape arithmetic: a slice of a known vector is known.
  const Tensor* known = ctx.InputConstant(0);
  if (known != nullptr && known->dtype() == DType::kInt64 &&
      known->dim() == 1 && known->numel() <= 64) {
    std::vector<int64_t> picked;
    const SliceRange r = ranges.empty() ? SliceRange{0, in[0], 1} : ranges[0];
    for (int64_t p = r.start; r.step > 0 ? p < r.end : p > r.end; p += r.step) {
      picked.push_back(known->data_as<int64_t>()[p]);
    }
    ASSIGN_OR_RETURN(
        Tensor t,
        Tensor::Empty(DType::kInt64, {static_cast<int64_t>(picked.size())}));
    std::copy(picked.begin(), picked.end(), t.data_as<int64_t>());
    return ctx.SetOutputConstant(0, t);
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  for (size_t i = 0; i < ranges.size(); ++i) {
    const int64_t dim = in[axes[i]];
    const SliceRange& r = ranges[i];
    if (dim == 0) continue;  // already empty along this axis
    if (r.step > 0) {
      if (r.start == 0 && r.end == dim && r.step == 1) continue;
      ASSIGN_OR_RETURN(x, ctx.Emit("aten.slice.Tensor",
                                   {x, Arg::Int(axes[i]), Arg::Int(r.start),
                                    Arg::Int(r.end), Arg::Int(r.step)}));
    } else {
      // Backwards: flip, then slice forwards from the mirrored start.
      const int64_t f_start = dim - 1 - r.start;
      const int64_t f_end = std::max(dim - 1 - r.end, f_start);
      ASSIGN_OR_RETURN(x,
                       ctx.Emit("aten.flip.default", {x, IntList({axes[i]})}));
      ASSIGN_OR_RETURN(x, ctx.Emit("aten.slice.Tensor",
                                   {x, Arg::Int(axes[i]), Arg::Int(f_start),
                                    Arg::Int(f_end), Arg::Int(-r.step)}));
    }
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {x}));
  return ctx.SetOutput(0, out);
}

// Numpy broadcasting of two shapes.
absl::StatusOr<std::vector<int64_t>> Broadcast(const Shape& a,
                                               const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("sizes ", da, " and ", db, " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::Status MapExpand(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstInts(1, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError("shape has a negative size");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, Broadcast(in, shape));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg e,
                   ctx.Emit("aten.expand.default", {x, IntList(out_shape)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {e}));
  return ctx.SetOutput(0, out);
}

absl::Status MapTile(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ctx.ConstInts(1, "repeats"));
  if (static_cast<int>(repeats.size()) != ctx.Meta(x).dim()) {
    return absl::InvalidArgumentError("repeats length differs from the rank");
  }
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit("aten.repeat.default", {x, IntList(repeats)}));
  return ctx.SetOutput(0, out);
}

absl::Status MapPad(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(std::string mode, ctx.attrs().String("mode", "constant"));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int rank = ctx.Meta(x).dim();
  const DType dtype = ctx.Meta(x).dtype;
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset() < 11) {
    ASSIGN_OR_RETURN(auto p, ctx.attrs().Ints("pads"));
    ASSIGN_OR_RETURN(float v, ctx.attrs().Float("value", 0.0f));
    if (!p.has_value()) return absl::InvalidArgumentError("pads missing");
    pads = *p, value = v;
  } else {
    if (ctx.opset() >= 18 && ctx.has_input(3)) {
      return absl::UnimplementedError("the axes input (opset 18)");
    }
    // Both asked for before either is refused: value-specialized together.
    const Tensor* v = ctx.has_input(2) ? ctx.NeededConstant(2) : nullptr;
    ASSIGN_OR_RETURN(pads, ctx.ConstInts(1, "pads"));
    if (ctx.has_input(2)) {
      if (v == nullptr || v->numel() != 1) {
        return absl::UnimplementedError(
            "constant_value that is not a scalar known at load");
      }
      value = v->Item().to_double();
    }
  }
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return absl::InvalidArgumentError("pads length is not twice the rank");
  }
  // ATen lists (begin, end) pairs from the last dim backwards.
  std::vector<int64_t> aten;
  int padded_dims = 0;
  for (int d = rank - 1; d >= 0; --d) {
    aten.push_back(pads[d]);
    aten.push_back(pads[d + rank]);
    if (pads[d] != 0 || pads[d + rank] != 0) padded_dims = rank - d;
  }
  Arg out;
  if (mode == "constant") {
    ASSIGN_OR_RETURN(
        out,
        ctx.Emit("aten.constant_pad_nd.default",
                 {x, IntList(aten),
                  IsFloating(dtype) ? Arg::Float(value)
                                    : Arg::Int(static_cast<int64_t>(value))}));
  } else if (mode == "reflect" || mode == "edge") {
    const bool reflect = mode == "reflect";
    int dims = std::max(padded_dims, reflect ? 1 : 2);
    if (dims > 3 || dims > rank - (reflect ? 0 : 1)) {
      return absl::UnimplementedError(
          absl::StrCat(mode, " padding of ", padded_dims,
                       " trailing dims of a rank-", rank, " input"));
    }
    for (int64_t p : pads) {
      if (p < 0) return absl::UnimplementedError("negative pads");
    }
    aten.resize(2 * dims);
    const std::string target =
        absl::StrCat("aten.", reflect ? "reflection" : "replication", "_pad",
                     dims, "d.default");
    ASSIGN_OR_RETURN(out, ctx.Emit(target, {x, IntList(aten)}));
  } else {
    return absl::UnimplementedError(absl::StrCat("mode '", mode, "'"));
  }
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddShapeOnnxOps(OnnxOpTable& table) {
  table.Add("Reshape", MapReshape);
  table.Add("Flatten", MapFlatten);
  table.Add("Squeeze", MapSqueeze);
  table.Add("Unsqueeze", MapUnsqueeze);
  table.Add("Transpose", MapTranspose);
  table.Add("Concat", MapConcat);
  table.Add("Split", MapSplit);
  table.Add("Slice", MapSlice);
  table.Add("Expand", MapExpand);
  table.Add("Tile", MapTile);
  table.Add("Pad", MapPad);
}

}  // namespace guardjit
