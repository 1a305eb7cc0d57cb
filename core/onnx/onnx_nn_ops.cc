// ONNX neural-network operators: Gemm and MatMul (on mm/bmm/addmm), Conv and
// ConvTranspose (convolution), BatchNormalization (inference), Instance- and
// LayerNormalization, Dropout (inference).

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_window.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status MapGemm(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float alpha, ctx.attrs().Float("alpha", 1.0f));
  ASSIGN_OR_RETURN(float beta, ctx.attrs().Float("beta", 1.0f));
  ASSIGN_OR_RETURN(int64_t trans_a, ctx.attrs().Int("transA", 0));
  ASSIGN_OR_RETURN(int64_t trans_b, ctx.attrs().Int("transB", 0));
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(a), "Gemm operand"));
  if (ctx.Meta(a).dim() != 2 || ctx.Meta(b).dim() != 2) {
    return absl::InvalidArgumentError("A and B must be 2-D");
  }
  if (trans_a) {
    ASSIGN_OR_RETURN(a, ctx.Emit("aten.permute.default", {a, IntList({1, 0})}));
  }
  if (trans_b) {
    ASSIGN_OR_RETURN(b, ctx.Emit("aten.permute.default", {b, IntList({1, 0})}));
  }
  Arg out;
  if (ctx.has_input(2) && beta != 0.0f) {
    ASSIGN_OR_RETURN(Arg c, ctx.Input(2));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.addmm.default", {c, a, b},
                                   {{"beta", Arg::Float(beta)},
                                    {"alpha", Arg::Float(alpha)}}));
  } else {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mm.default", {a, b}));
    if (alpha != 1.0f) {
      ASSIGN_OR_RETURN(out,
                       ctx.Emit("aten.mul.Scalar", {out, Arg::Float(alpha)}));
    }
  }
  return ctx.SetOutput(0, out);
}

// numpy.matmul on mm/bmm: 1-D operands gain (and lose) a dim, batch dims
// broadcast, and a batch of matrices times one matrix folds its batch into
// the rows.
absl::Status MapMatMul(OnnxNodeContext& ctx) {
  // Operands of symbolic sizes: core/onnx/onnx_sym_data.h.
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  ASSIGN_OR_RETURN(Shape sa, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(Shape sb, ctx.StaticShape(1));
  if (sa.empty() || sb.empty()) {
    return absl::InvalidArgumentError("MatMul of a 0-dim operand");
  }
  const bool a_vector = sa.size() == 1, b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), 1);
  if (b_vector) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner dims differ: ", k, " and ", sb[sb.size() - 2]));
  }
  // Broadcast batch dims.
  const size_t batch_rank = std::max(sa.size(), sb.size()) - 2;
  std::vector<int64_t> batch(batch_rank, 1);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t da = i + sa.size() - 2 >= batch_rank
                           ? sa[i + sa.size() - 2 - batch_rank]
                           : 1;
    const int64_t db = i + sb.size() - 2 >= batch_rank
                           ? sb[i + sb.size() - 2 - batch_rank]
                           : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError("batch dims do not broadcast");
    }
    batch[i] = da == 1 ? db : da;
  }
  int64_t batch_numel = 1;
  for (int64_t d : batch) batch_numel *= d;
  std::vector<int64_t> out_shape = batch;
  if (!a_vector) out_shape.push_back(m);
  if (!b_vector) out_shape.push_back(n);
  Arg out;
  const bool b_is_matrix = sb.size() == 2;
  if (b_is_matrix) {
    // [..., m, k] x [k, n]: the batch folds into the rows.
    ASSIGN_OR_RETURN(Arg a2, ReshapeTo(ctx, a, {batch_numel * m, k}));
    ASSIGN_OR_RETURN(Arg b2, ReshapeTo(ctx, b, {k, n}));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mm.default", {a2, b2}));
  } else {
    auto batched = [&](const Arg& x, const Shape& s, int64_t rows,
                       int64_t cols) -> absl::StatusOr<Arg> {
      std::vector<int64_t> full = batch;
      full.push_back(rows);
      full.push_back(cols);
      ASSIGN_OR_RETURN(
          Arg v, ReshapeTo(ctx, x, std::vector<int64_t>(s.begin(), s.end())));
      ASSIGN_OR_RETURN(Arg e,
                       ctx.Emit("aten.expand.default", {v, IntList(full)}));
      return ReshapeTo(ctx, e, {batch_numel, rows, cols});
    };
    ASSIGN_OR_RETURN(Arg a3, batched(a, sa, m, k));
    ASSIGN_OR_RETURN(Arg b3, batched(b, sb, k, n));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.bmm.default", {a3, b3}));
  }
  ASSIGN_OR_RETURN(out, ReshapeTo(ctx, out, out_shape));
  return ctx.SetOutput(0, out);
}

// ConvTranspose whose output ATen's padding cannot give (an output_shape,
// auto_pad, uneven pads, output_padding past the stride): the full
// transposed convolution (no pads), then the output's window of it, where
// output index o is full index o + pad_begin and indices past the full
// size are zeros (ONNX's output_padding and a larger output_shape), then
// the bias. With output_shape (or auto_pad's in * stride), the pads are
// ONNX's split of total = full + output_padding - output_shape, clamped at
// 0 as ONNX Runtime does: SAME_UPPER puts the smaller half first.
absl::Status MapConvTransposeCropped(
    OnnxNodeContext& ctx, Arg x, Arg weight, const Shape& xs, const Shape& ws,
    int64_t group, const Window& w, const std::vector<int64_t>& output_padding,
    const std::string& auto_pad,
    const std::optional<std::vector<int64_t>>& output_shape) {
  const size_t spatial = xs.size() - 2;
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    return absl::InvalidArgumentError(
        absl::StrCat("auto_pad '", auto_pad, "' is not an ONNX value"));
  }
  if (output_shape.has_value() && output_shape->size() != spatial) {
    return absl::InvalidArgumentError(
        absl::StrCat("output_shape has ", output_shape->size(), " dims for ",
                     spatial, " spatial dims"));
  }
  std::vector<int64_t> full(spatial), begin(spatial), size(spatial);
  for (size_t d = 0; d < spatial; ++d) {
    full[d] =
        w.strides[d] * (xs[d + 2] - 1) + (w.kernel[d] - 1) * w.dilations[d] + 1;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (output_shape.has_value() || same) {
      const int64_t want = output_shape.has_value() ? (*output_shape)[d]
                                                    : xs[d + 2] * w.strides[d];
      const int64_t total =
          std::max<int64_t>(0, full[d] + output_padding[d] - want);
      begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      size[d] = want;
    } else {
      const int64_t pb = auto_pad == "VALID" ? 0 : w.pad_begin[d];
      const int64_t pe = auto_pad == "VALID" ? 0 : w.pad_end[d];
      begin[d] = pb;
      size[d] = full[d] + output_padding[d] - pb - pe;
    }
    if (size[d] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("output size ", size[d], " in spatial dim ", d));
    }
  }
  const bool one_d = spatial == 1;
  std::vector<int64_t> strides = w.strides, dilations = w.dilations;
  if (one_d) {
    ASSIGN_OR_RETURN(x, ctx.Emit("aten.unsqueeze.default", {x, Arg::Int(2)}));
    ASSIGN_OR_RETURN(weight,
                     ctx.Emit("aten.unsqueeze.default", {weight, Arg::Int(2)}));
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
  }
  const std::vector<int64_t> zeros(strides.size(), 0);
  ASSIGN_OR_RETURN(
      Arg out, ctx.Emit("aten.convolution.default",
                        {x, weight, Arg::None(), IntList(strides),
                         IntList(zeros), IntList(dilations), Arg::Bool(true),
                         IntList(zeros), Arg::Int(group)}));
  if (one_d) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.squeeze.dim", {out, Arg::Int(2)}));
  }
  // The window [begin, begin + size) of the full output, zeros past it.
  std::vector<int64_t> pad;
  for (size_t d = spatial; d-- > 0;) {
    const int64_t end = std::min(full[d], begin[d] + size[d]);
    if (begin[d] >= end) {
      return absl::UnimplementedError(
          "a transposed convolution's output entirely past its input");
    }
    if (begin[d] > 0 || end < full[d]) {
      ASSIGN_OR_RETURN(
          out, ctx.Emit("aten.slice.Tensor",
                        {out, Arg::Int(static_cast<int64_t>(d) + 2),
                         Arg::Int(begin[d]), Arg::Int(end), Arg::Int(1)}));
    }
    pad.push_back(0);
    pad.push_back(begin[d] + size[d] - end);
  }
  if (std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; })) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.constant_pad_nd.default",
                                   {out, IntList(pad), Arg::Float(0.0)}));
  } else {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.clone.default", {out}));
  }
  if (ctx.has_input(2)) {
    ASSIGN_OR_RETURN(Arg bias, ctx.Input(2));
    std::vector<int64_t> shape(spatial + 1, 1);
    shape[0] = ws[1] * group;
    ASSIGN_OR_RETURN(bias, ReshapeTo(ctx, bias, shape));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.add.Tensor", {out, bias}));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapConv(OnnxNodeContext& ctx) {
  const bool transposed = ctx.node().op_type() == "ConvTranspose";
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg weight, ctx.Input(1));
  ASSIGN_OR_RETURN(Shape xs, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(Shape ws, ctx.StaticShape(1));
  if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size()) {
    return absl::UnimplementedError(
        absl::StrCat("input of rank ", xs.size(), " and weight of rank ",
                     ws.size(), " (1 to 3 spatial dims are supported)"));
  }
  ASSIGN_OR_RETURN(int64_t group, ctx.attrs().Int("group", 1));
  ASSIGN_OR_RETURN(
      Window w,
      ReadWindow(ctx, xs, std::vector<int64_t>(ws.begin() + 2, ws.end())));
  std::vector<int64_t> output_padding(xs.size() - 2, 0);
  if (transposed) {
    ASSIGN_OR_RETURN(auto op, ctx.attrs().Ints("output_padding"));
    if (op.has_value()) output_padding = *op;
    if (output_padding.size() != xs.size() - 2) {
      return absl::InvalidArgumentError("output_padding of the wrong length");
    }
    ASSIGN_OR_RETURN(std::string auto_pad,
                     ctx.attrs().String("auto_pad", "NOTSET"));
    ASSIGN_OR_RETURN(auto output_shape, ctx.attrs().Ints("output_shape"));
    bool aten_output_padding = true;
    for (size_t d = 0; d < output_padding.size(); ++d) {
      aten_output_padding &=
          output_padding[d] >= 0 && (output_padding[d] < w.strides[d] ||
                                     output_padding[d] < w.dilations[d]);
    }
    if (auto_pad != "NOTSET" || output_shape.has_value() || !w.symmetric() ||
        !aten_output_padding) {
      return MapConvTransposeCropped(ctx, x, weight, xs, ws, group, w,
                                     output_padding, auto_pad, output_shape);
    }
  }
  if (!w.symmetric()) {
    ASSIGN_OR_RETURN(x, PadUneven(ctx, x, w, 0.0));
  }
  Arg bias;
  if (ctx.has_input(2)) {
    ASSIGN_OR_RETURN(bias, ctx.Input(2));
  }
  const bool one_d = xs.size() == 3;
  if (one_d) {
    // 1-D runs as 2-D with a unit height.
    ASSIGN_OR_RETURN(x, ctx.Emit("aten.unsqueeze.default", {x, Arg::Int(2)}));
    ASSIGN_OR_RETURN(weight,
                     ctx.Emit("aten.unsqueeze.default", {weight, Arg::Int(2)}));
    for (auto* v : {&w.strides, &w.dilations}) v->insert(v->begin(), 1);
    output_padding.insert(output_padding.begin(), 0);
    w.pad_begin.insert(w.pad_begin.begin(), 0);
  }
  ASSIGN_OR_RETURN(
      Arg out,
      ctx.Emit("aten.convolution.default",
               {x, weight, bias, IntList(w.strides), IntList(w.pad_begin),
                IntList(w.dilations), Arg::Bool(transposed),
                IntList(output_padding), Arg::Int(group)}));
  if (one_d) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.squeeze.dim", {out, Arg::Int(2)}));
  }
  return ctx.SetOutput(0, out);
}

// Training mode (opset 14 on): normalized by the batch's statistics (the
// population variance, as ONNX's reference), with the running mean and
// variance updated by momentum as the optional outputs 1 and 2.
absl::Status BatchNormTraining(OnnxNodeContext& ctx, float eps,
                               float momentum) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "training-mode input"));
  ASSIGN_OR_RETURN(Shape shape, ctx.StaticShape(0));
  if (shape.size() < 2) {
    return absl::InvalidArgumentError("input rank below 2");
  }
  std::vector<int64_t> dims = {0}, per_channel(shape.size(), 1);
  for (size_t d = 2; d < shape.size(); ++d) dims.push_back(d);
  per_channel[1] = shape[1];
  auto mean = [&](const Arg& v) {
    return ctx.Emit("aten.mean.dim", {v, IntList(dims), Arg::Bool(true)});
  };
  ASSIGN_OR_RETURN(Arg mu, mean(x));
  ASSIGN_OR_RETURN(Arg diff, ctx.Emit("aten.sub.Tensor", {x, mu}));
  ASSIGN_OR_RETURN(Arg sq, ctx.Emit("aten.mul.Tensor", {diff, diff}));
  ASSIGN_OR_RETURN(Arg var, mean(sq));
  ASSIGN_OR_RETURN(Arg den, ctx.Emit("aten.add.Scalar",
                                     {var, Arg::Float(eps), Arg::Int(1)}));
  ASSIGN_OR_RETURN(den, ctx.Emit("aten.sqrt.default", {den}));
  ASSIGN_OR_RETURN(Arg y, ctx.Emit("aten.div.Tensor", {diff, den}));
  ASSIGN_OR_RETURN(Arg scale, ctx.Input(1));
  ASSIGN_OR_RETURN(Arg bias, ctx.Input(2));
  ASSIGN_OR_RETURN(scale, ReshapeTo(ctx, scale, per_channel));
  ASSIGN_OR_RETURN(bias, ReshapeTo(ctx, bias, per_channel));
  ASSIGN_OR_RETURN(y, ctx.Emit("aten.mul.Tensor", {y, scale}));
  ASSIGN_OR_RETURN(y, ctx.Emit("aten.add.Tensor", {y, bias}));
  RETURN_IF_ERROR(ctx.SetOutput(0, y));
  // running = input * momentum + batch statistic * (1 - momentum).
  const Arg stats[2] = {mu, var};
  for (int k = 0; k < 2; ++k) {
    if (!ctx.has_output(k + 1)) continue;
    ASSIGN_OR_RETURN(Arg running, ctx.Input(k + 3));
    ASSIGN_OR_RETURN(Arg stat, ReshapeTo(ctx, stats[k], {shape[1]}));
    ASSIGN_OR_RETURN(
        running, ctx.Emit("aten.mul.Scalar", {running, Arg::Float(momentum)}));
    ASSIGN_OR_RETURN(
        stat, ctx.Emit("aten.mul.Scalar", {stat, Arg::Float(1.0 - momentum)}));
    ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.add.Tensor", {running, stat}));
    RETURN_IF_ERROR(ctx.SetOutput(k + 1, out));
  }
  if (ctx.num_outputs() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.num_outputs(), " outputs (3 from opset 14)"));
  }
  return absl::OkStatus();
}

absl::Status MapBatchNorm(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float eps, ctx.attrs().Float("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(float momentum, ctx.attrs().Float("momentum", 0.9f));
  ASSIGN_OR_RETURN(int64_t training, ctx.attrs().Int("training_mode", 0));
  ASSIGN_OR_RETURN(int64_t spatial, ctx.attrs().Int("spatial", 1));
  if (training && ctx.opset() >= 14 && spatial == 1) {
    return BatchNormTraining(ctx, eps, momentum);
  }
  if (training || ctx.num_outputs() > 1 || spatial != 1) {
    return absl::UnimplementedError(
        "only inference (one output, spatial=1), or training_mode from "
        "opset 14, is supported");
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  std::vector<Arg> args = {x};
  for (int i : {1, 2, 3, 4}) {
    ASSIGN_OR_RETURN(Arg a, ctx.Input(i));
    args.push_back(a);
  }
  // ATen order: input, weight, bias, running_mean, running_var.
  ASSIGN_OR_RETURN(Arg bn,
                   ctx.Emit("aten._native_batch_norm_legit_no_training.default",
                            {args[0], args[1], args[2], args[3], args[4],
                             Arg::Float(momentum), Arg::Float(eps)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Item(bn, 0));
  return ctx.SetOutput(0, out);
}

absl::Status MapInstanceNorm(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(float eps, ctx.attrs().Float("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg scale, ctx.Input(1));
  ASSIGN_OR_RETURN(Arg bias, ctx.Input(2));
  ASSIGN_OR_RETURN(Shape s, ctx.StaticShape(0));
  if (s.size() < 3) return absl::InvalidArgumentError("input rank below 3");
  int64_t hw = 1;
  for (size_t d = 2; d < s.size(); ++d) hw *= s[d];
  // Group norm with one group per channel is instance norm.
  ASSIGN_OR_RETURN(Arg gn,
                   ctx.Emit("aten.native_group_norm.default",
                            {x, scale, bias, Arg::Int(s[0]), Arg::Int(s[1]),
                             Arg::Int(hw), Arg::Int(s[1]), Arg::Float(eps)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Item(gn, 0));
  return ctx.SetOutput(0, out);
}

absl::Status MapLayerNorm(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", -1));
  ASSIGN_OR_RETURN(float eps, ctx.attrs().Float("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(int64_t stash, ctx.attrs().Int("stash_type", 1));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  const DType dtype = ctx.Meta(x).dtype;
  if (stash != 1 || (dtype != DType::kFloat32 && ctx.num_outputs() > 1)) {
    return absl::UnimplementedError(
        "stash_type other than float, or Mean/InvStdDev outputs of a "
        "non-float32 input");
  }
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  // The normalized shape as size expressions: numbers where static, else
  // read at run time (a leading batch or sequence dim may be symbolic, and
  // a static size after a decision on symbolic sizes is not relied on).
  std::vector<Arg> normalized;
  std::vector<int64_t> hints;
  for (int64_t d = axis; d < rank; ++d) {
    ASSIGN_OR_RETURN(Arg size, SymSizeOf(ctx, x, d));
    normalized.push_back(std::move(size));
    hints.push_back(ctx.Meta(x).sizes[d].hint());
  }
  Arg scale, bias;
  ASSIGN_OR_RETURN(scale, ctx.Input(1));
  if (ctx.has_input(2)) {
    ASSIGN_OR_RETURN(bias, ctx.Input(2));
  }
  // Scale and B of the normalized shape go into the op, whose shape rule
  // checks them against the sizes read at run time; others broadcast.
  auto exact = [&](const Arg& a) {
    if (a.is_none()) return true;
    if (!ctx.state().IsStaticValue(a)) return false;
    const Shape have = ctx.Meta(a).shape();
    return std::equal(have.begin(), have.end(), hints.begin(), hints.end());
  };
  const bool fused = exact(scale) && exact(bias);
  ASSIGN_OR_RETURN(
      Arg ln,
      ctx.Emit("aten.native_layer_norm.default",
               {x, SizeList(std::move(normalized)), fused ? scale : Arg::None(),
                fused ? bias : Arg::None(), Arg::Float(eps)}));
  ASSIGN_OR_RETURN(Arg out, ctx.Item(ln, 0));
  if (!fused) {
    // Scale and B broadcast to the normalized shape.
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mul.Tensor", {out, scale}));
    if (!bias.is_none()) {
      ASSIGN_OR_RETURN(out, ctx.Emit("aten.add.Tensor", {out, bias}));
    }
    if (ctx.Meta(out).dim() != rank) {
      return absl::InvalidArgumentError("Scale or B does not broadcast to X");
    }
  }
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  for (int i : {1, 2}) {
    if (!ctx.has_output(i)) continue;
    ASSIGN_OR_RETURN(Arg stat, ctx.Item(ln, i));
    RETURN_IF_ERROR(ctx.SetOutput(i, stat));
  }
  return absl::OkStatus();
}

// ONNX's function: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9) over axes.
absl::Status MapMeanVarianceNormalization(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(auto axes, ctx.attrs().Ints("axes"));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "input"));
  ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                   NormalizeAxes(axes.value_or(std::vector<int64_t>{0, 2, 3}),
                                 ctx.Meta(x).dim()));
  auto mean = [&](const Arg& v) {
    return ctx.Emit("aten.mean.dim", {v, IntList(dims), Arg::Bool(true)});
  };
  ASSIGN_OR_RETURN(Arg mu, mean(x));
  ASSIGN_OR_RETURN(Arg x2, ctx.Emit("aten.mul.Tensor", {x, x}));
  ASSIGN_OR_RETURN(Arg ex2, mean(x2));
  ASSIGN_OR_RETURN(Arg mu2, ctx.Emit("aten.mul.Tensor", {mu, mu}));
  ASSIGN_OR_RETURN(Arg var, ctx.Emit("aten.sub.Tensor", {ex2, mu2}));
  ASSIGN_OR_RETURN(Arg std, ctx.Emit("aten.sqrt.default", {var}));
  ASSIGN_OR_RETURN(
      std, ctx.Emit("aten.add.Scalar", {std, Arg::Float(1e-9), Arg::Int(1)}));
  ASSIGN_OR_RETURN(Arg centered, ctx.Emit("aten.sub.Tensor", {x, mu}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.div.Tensor", {centered, std}));
  return ctx.SetOutput(0, out);
}

absl::Status MapDropout(OnnxNodeContext& ctx) {
  if (ctx.opset() < 12) {
    ASSIGN_OR_RETURN(float ratio, ctx.attrs().Float("ratio", 0.5f));
    (void)ratio;
  } else {
    ASSIGN_OR_RETURN(std::optional<int64_t> seed,
                     ctx.attrs().OptionalInt("seed"));
    (void)seed;
    // Training mode with a ratio above 0 draws a random mask (ONNX's test
    // outputs are one draw of numpy's generator): refused. Without it, or
    // with ratio 0, the output is the input. Both inputs are asked for
    // before either is refused, so both are value-specialized together.
    const Tensor* training = ctx.has_input(2) ? ctx.NeededConstant(2) : nullptr;
    const Tensor* ratio = ctx.has_input(1) ? ctx.NeededConstant(1) : nullptr;
    if (ctx.has_input(2) && training == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "training_mode (input 2, '", ctx.node().input(2),
          "') is computed at run time, and only values known at load are "
          "supported"));
    }
    if (training != nullptr && training->numel() != 1) {
      return absl::InvalidArgumentError("training_mode is not a scalar");
    }
    if (training != nullptr && training->ItemAsInt64() != 0) {
      if (ctx.has_input(1) && ratio == nullptr) {
        return absl::UnimplementedError(absl::StrCat(
            "ratio (input 1, '", ctx.node().input(1),
            "') is computed at run time, and only values known at load are "
            "supported"));
      }
      if (ratio != nullptr && ratio->numel() != 1) {
        return absl::InvalidArgumentError("ratio is not a scalar");
      }
      const double r = ratio != nullptr ? ratio->Item().to_double() : 0.5;
      if (r != 0) {
        return absl::UnimplementedError(absl::StrCat(
            "training_mode true with ratio ", r,
            ": the mask is random (only ratio 0 is the identity)"));
      }
    }
  }
  // Inference: the output is the input, the mask all true.
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {x}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  if (ctx.has_output(1)) {
    // The mask is bool from opset 10, the input's type before.
    const DType mask_type = ctx.opset() < 10 ? ctx.Meta(x).dtype : DType::kBool;
    ASSIGN_OR_RETURN(Arg mask,
                     ctx.Emit("aten.full_like.default", {x, Arg::Int(1)},
                              {{"dtype", Arg::OfDType(mask_type)}}));
    RETURN_IF_ERROR(ctx.SetOutput(1, mask));
  }
  return absl::OkStatus();
}

}  // namespace

void AddNnOnnxOps(OnnxOpTable& table) {
  table.Add("Gemm", MapGemm);
  table.Add("MatMul", MapMatMul);
  table.Add("Conv", MapConv);
  table.Add("ConvTranspose", MapConv);
  table.Add("BatchNormalization", MapBatchNorm);
  table.Add("InstanceNormalization", MapInstanceNorm);
  table.Add("LayerNormalization", MapLayerNorm);
  table.Add("Dropout", MapDropout);
  table.Add("MeanVarianceNormalization", MapMeanVarianceNormalization);
}

}  // namespace guardjit
