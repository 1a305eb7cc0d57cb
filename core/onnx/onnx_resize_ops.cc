// ONNX Resize (and the older Upsample). Where ATen's 2-D upsampling agrees
// with ONNX's coordinate rule (nearest with asymmetric coordinates and floor
// rounding, or half-pixel with round_prefer_floor at integer upscale
// factors; linear with half_pixel, pytorch_half_pixel when no output dim is
// 1, or align_corners at whole sizes) the node maps onto it; every other
// mode, coordinate rule, nearest rounding, cubic_coeff_a, exclude_outside
// and tf_crop_and_resize runs as ONNX's reference computes it, axis by axis
// (core/onnx/onnx_resize_sampling.h): gathers of constant indices
// (aten.index_select), products with constant weights and sums, and the
// extrapolation value where the crop leaves the input. Scales, sizes and
// roi must be known at load (graph inputs are value-specialized), and the
// input's sizes static.

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_resize_sampling.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// The most elements a constant index or weight tensor of one axis may have.
constexpr int64_t kMaxSamplingElements = int64_t{1} << 22;

// What the node's attributes and known inputs decide.
struct ResizeParams {
  std::string mode, coordinates, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  Shape in;
  std::vector<int64_t> out;
  // Per axis: the reference's scale factor and unrounded output length.
  std::vector<double> scale, output_width;
  std::vector<float> scales;  // as given (empty when sizes were)
  std::vector<double> roi;    // starts then ends; empty when not used
};

std::string RunTimeInput(OnnxNodeContext& ctx, int i, absl::string_view what) {
  return absl::StrCat(what, " (input ", i, ", '", ctx.node().input(i),
                      "') is computed at run time, and only values known at "
                      "load are supported");
}

absl::StatusOr<std::vector<double>> Doubles(const Tensor& t,
                                            absl::string_view what) {
  std::vector<double> out;
  if (t.dtype() == DType::kFloat32) {
    for (int64_t k = 0; k < t.numel(); ++k)
      out.push_back(t.data_as<float>()[k]);
  } else if (t.dtype() == DType::kFloat64) {
    for (int64_t k = 0; k < t.numel(); ++k) {
      out.push_back(t.data_as<double>()[k]);
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is ", DTypeName(t.dtype()), ", not float32 or float64"));
  }
  return out;
}

absl::StatusOr<ResizeParams> ReadParams(OnnxNodeContext& ctx) {
  ResizeParams p;
  const bool upsample = ctx.node().op_type() == "Upsample";
  ASSIGN_OR_RETURN(p.mode, ctx.attrs().String("mode", "nearest"));
  // Upsample and Resize-10: asymmetric coordinates, floor(x / scale).
  p.coordinates = "asymmetric";
  p.nearest = "floor";
  const bool v11 = !upsample && ctx.opset() >= 11;
  if (v11) {
    ASSIGN_OR_RETURN(
        p.coordinates,
        ctx.attrs().String("coordinate_transformation_mode", "half_pixel"));
    ASSIGN_OR_RETURN(p.nearest,
                     ctx.attrs().String("nearest_mode", "round_prefer_floor"));
    ASSIGN_OR_RETURN(float a, ctx.attrs().Float("cubic_coeff_a", -0.75f));
    ASSIGN_OR_RETURN(int64_t exclude, ctx.attrs().Int("exclude_outside", 0));
    ASSIGN_OR_RETURN(float extrapolation,
                     ctx.attrs().Float("extrapolation_value", 0.0f));
    p.cubic_a = a;
    p.exclude_outside = exclude != 0;
    p.extrapolation = extrapolation;
  }
  if (p.mode != "nearest" && p.mode != "linear" &&
      !(v11 && p.mode == "cubic")) {
    return absl::InvalidArgumentError(absl::StrCat("mode '", p.mode, "'"));
  }
  ASSIGN_OR_RETURN(p.in, ctx.StaticShape(0));
  const int64_t rank = static_cast<int64_t>(p.in.size());
  // Scales: Upsample-7's attribute, else input 1 (Upsample, Resize-10) or 2;
  // sizes: input 3. Every input needed is asked for before any is refused,
  // so all of them are value-specialized together.
  const int scales_input = v11 ? 2 : 1;
  const bool crop = p.coordinates == "tf_crop_and_resize";
  const Tensor* roi =
      crop && ctx.has_input(1) ? ctx.NeededConstant(1) : nullptr;
  const bool has_scales =
      ctx.has_input(scales_input) && !(upsample && ctx.opset() < 9);
  const Tensor* scales =
      has_scales ? ctx.NeededConstant(scales_input) : nullptr;
  const bool has_sizes = v11 && ctx.has_input(3);
  const Tensor* sizes = has_sizes ? ctx.NeededConstant(3) : nullptr;
  if (crop && ctx.has_input(1) && roi == nullptr) {
    return absl::UnimplementedError(RunTimeInput(ctx, 1, "roi"));
  }
  if (has_scales && scales == nullptr) {
    return absl::UnimplementedError(RunTimeInput(ctx, scales_input, "scales"));
  }
  if (has_sizes && sizes == nullptr) {
    return absl::UnimplementedError(RunTimeInput(ctx, 3, "sizes"));
  }
  if (upsample && ctx.opset() < 9) {
    ASSIGN_OR_RETURN(std::optional<std::vector<float>> attr,
                     ctx.attrs().Floats("scales"));
    if (!attr) return absl::InvalidArgumentError("no scales attribute");
    p.scales = *attr;
  } else if (scales != nullptr) {
    if (scales->dtype() != DType::kFloat32) {
      return absl::InvalidArgumentError("scales is not float32");
    }
    p.scales.assign(scales->data_as<float>(),
                    scales->data_as<float>() + scales->numel());
  }
  std::vector<int64_t> size_values;
  if (p.scales.empty() && sizes != nullptr) {
    ASSIGN_OR_RETURN(size_values, ctx.ConstInts(3, "sizes"));
  }
  if (p.scales.empty() && size_values.empty()) {
    return absl::InvalidArgumentError("neither scales nor sizes given");
  }
  if (!p.scales.empty() && static_cast<int64_t>(p.scales.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.scales.size(), " scales for a rank-", rank, " input"));
  }
  if (p.scales.empty() && static_cast<int64_t>(size_values.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(size_values.size(), " sizes for a rank-", rank, " input"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    const double in = static_cast<double>(p.in[d]);
    if (!p.scales.empty()) {
      const float scale = p.scales[d];
      if (!(scale > 0) || !std::isfinite(scale)) {
        return absl::InvalidArgumentError(
            absl::StrCat("scale ", scale, " of dim ", d, " is not positive"));
      }
      if (static_cast<double>(scale) * in >
          static_cast<double>(int64_t{1} << 40)) {
        return absl::UnimplementedError(absl::StrCat(
            "scale ", scale, " of dim ", d, " gives an output dim past 2^40"));
      }
      // The reference: (scales * shape).astype(int); its 1-D rule divides by
      // scale * width at float32 precision.
      p.out.push_back(static_cast<int64_t>(static_cast<double>(scale) * in));
      p.scale.push_back(scale);
      p.output_width.push_back(scale * static_cast<float>(p.in[d]));
    } else {
      if (size_values[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("size ", size_values[d], " of dim ", d));
      }
      p.out.push_back(size_values[d]);
      const double scale = static_cast<double>(size_values[d]) / in;
      p.scale.push_back(scale);
      p.output_width.push_back(scale * in);
    }
  }
  if (crop) {
    if (roi == nullptr) {
      return absl::InvalidArgumentError("tf_crop_and_resize without roi");
    }
    ASSIGN_OR_RETURN(p.roi, Doubles(*roi, "roi"));
    if (static_cast<int64_t>(p.roi.size()) != 2 * rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "roi has ", p.roi.size(), " values for a rank-", rank, " input"));
    }
  }
  return p;
}

// The node on ATen's 2-D upsampling, where its rule is ONNX's for these
// parameters; nullopt where it is not.
absl::StatusOr<std::optional<Arg>> AtenResize(OnnxNodeContext& ctx,
                                              const Arg& x,
                                              const ResizeParams& p) {
  const Shape& in = p.in;
  if (in.size() != 4 || p.out[0] != in[0] || p.out[1] != in[1] ||
      p.exclude_outside ||
      (!p.scales.empty() && (p.scales[0] != 1 || p.scales[1] != 1))) {
    return std::optional<Arg>();
  }
  const int64_t out[2] = {p.out[2], p.out[3]};
  Arg output_size = Arg::None(), scale_factors = Arg::None();
  if (!p.scales.empty()) {
    scale_factors =
        Arg::OfList({Arg::Float(p.scales[2]), Arg::Float(p.scales[3])});
  } else {
    output_size = IntList({out[0], out[1]});
  }
  const bool half_pixel =
      p.coordinates == "half_pixel" ||
      (p.coordinates == "pytorch_half_pixel" && out[0] > 1 && out[1] > 1);
  if (p.mode == "nearest") {
    bool same = p.coordinates == "asymmetric" && p.nearest == "floor";
    if (half_pixel && p.nearest == "round_prefer_floor") {
      // Same pixels as floor(x / k) for an integer upscale k.
      same = true;
      for (int d = 0; d < 2; ++d) {
        const double k = std::round(p.scale[d + 2]);
        same = same && k >= 1 && k == p.scale[d + 2] && out[d] == in[d + 2] * k;
      }
    }
    if (!same) return std::optional<Arg>();
    ASSIGN_OR_RETURN(Arg y, ctx.Emit("aten.upsample_nearest2d.vec",
                                     {x, output_size, scale_factors}));
    return std::optional<Arg>(y);
  }
  if (p.mode != "linear" || !IsFloating(ctx.Meta(x).dtype)) {
    return std::optional<Arg>();
  }
  bool align_corners;
  if (half_pixel) {
    align_corners = false;
  } else if (p.coordinates == "align_corners") {
    align_corners = true;
    // ONNX maps by the unrounded length in * scale; ATen by the output's.
    for (int d = 0; d < 2; ++d) {
      if (p.output_width[d + 2] != static_cast<double>(out[d])) {
        return std::optional<Arg>();
      }
    }
    // ATen's align_corners ignores scales and maps by sizes, as ONNX does.
    output_size = IntList({out[0], out[1]});
    scale_factors = Arg::None();
  } else {
    return std::optional<Arg>();
  }
  ASSIGN_OR_RETURN(Arg y, ctx.Emit("aten.upsample_bilinear2d.vec",
                                   {x, output_size, Arg::Bool(align_corners),
                                    scale_factors}));
  return std::optional<Arg>(y);
}

// A constant of `dtype` holding `values` (doubles), shaped [n, 1, ...] with
// `trailing` ones: broadcast along axis d of a rank d + 1 + trailing value.
absl::StatusOr<Arg> AxisConstant(OnnxNodeContext& ctx,
                                 const std::vector<double>& values, DType dtype,
                                 int64_t trailing, absl::string_view what) {
  Shape sizes = {static_cast<int64_t>(values.size())};
  for (int64_t i = 0; i < trailing; ++i) sizes.push_back(1);
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, sizes));
  for (size_t k = 0; k < values.size(); ++k) {
    switch (dtype) {
      case DType::kFloat32:
        t.data_as<float>()[k] = static_cast<float>(values[k]);
        break;
      case DType::kFloat64:
        t.data_as<double>()[k] = values[k];
        break;
      case DType::kInt64:
        t.data_as<int64_t>()[k] = static_cast<int64_t>(values[k]);
        break;
      case DType::kBool:
        t.data_as<bool>()[k] = values[k] != 0;
        break;
      default:
        return absl::UnimplementedError(
            absl::StrCat("resize weights of dtype ", DTypeName(dtype)));
    }
  }
  const std::string name = ctx.InternalName(what);
  RETURN_IF_ERROR(ctx.state().AddKnownValue(name, std::move(t)));
  return ctx.state().GraphValue(name);
}

absl::StatusOr<Arg> GatherAlong(OnnxNodeContext& ctx, const Arg& x, int64_t d,
                                const std::vector<int64_t>& index,
                                absl::string_view what) {
  std::vector<double> values(index.begin(), index.end());
  ASSIGN_OR_RETURN(Arg i, AxisConstant(ctx, values, DType::kInt64, 0, what));
  return ctx.Emit("aten.index_select.default", {x, Arg::Int(d), i});
}

// Resizes axis d of `x` by its sampling.
absl::StatusOr<Arg> ResizeAxis(OnnxNodeContext& ctx, const Arg& x, int64_t d,
                               int64_t rank, const ResizeAxisSampling& s,
                               double extrapolation) {
  if (s.IsIdentity()) return x;
  if (s.IsGather()) {
    return GatherAlong(ctx, x, d, s.index, absl::StrCat("index", d));
  }
  const DType dtype = ctx.Meta(x).dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return absl::UnimplementedError(absl::StrCat(
        "weighted resize (mode, or tf_crop_and_resize's extrapolation) of a ",
        DTypeName(dtype), " input"));
  }
  const int64_t out = static_cast<int64_t>(s.valid.size());
  std::optional<Arg> sum;
  for (int t = 0; t < s.taps; ++t) {
    std::vector<int64_t> index(s.index.begin() + t * out,
                               s.index.begin() + (t + 1) * out);
    std::vector<double> weight(s.weight.begin() + t * out,
                               s.weight.begin() + (t + 1) * out);
    bool zero = true;
    for (double w : weight) zero = zero && w == 0;
    if (zero && (sum.has_value() || t + 1 < s.taps)) continue;
    ASSIGN_OR_RETURN(
        Arg g, GatherAlong(ctx, x, d, index, absl::StrCat("index", d, ".", t)));
    ASSIGN_OR_RETURN(Arg w, AxisConstant(ctx, weight, dtype, rank - d - 1,
                                         absl::StrCat("weight", d, ".", t)));
    ASSIGN_OR_RETURN(Arg term, ctx.Emit("aten.mul.Tensor", {g, w}));
    if (sum.has_value()) {
      ASSIGN_OR_RETURN(term, ctx.Emit("aten.add.Tensor", {*sum, term}));
    }
    sum = term;
  }
  bool all_valid = true;
  for (bool v : s.valid) all_valid = all_valid && v;
  if (all_valid) return *sum;
  std::vector<double> valid(s.valid.begin(), s.valid.end());
  ASSIGN_OR_RETURN(Arg mask,
                   AxisConstant(ctx, valid, DType::kBool, rank - d - 1,
                                absl::StrCat("inside", d)));
  ASSIGN_OR_RETURN(Arg fill, ScalarConstant(ctx, extrapolation, dtype));
  return ctx.Emit("aten.where.self", {mask, *sum, fill});
}

absl::Status MapResize(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(ResizeParams p, ReadParams(ctx));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(std::optional<Arg> aten, AtenResize(ctx, x, p));
  if (aten.has_value()) return ctx.SetOutput(0, *aten);
  const int64_t rank = static_cast<int64_t>(p.in.size());
  Arg y = x;
  for (int64_t d = 0; d < rank; ++d) {
    ResizeAxisSpec spec;
    spec.mode = p.mode;
    spec.coordinates = p.coordinates;
    spec.nearest_mode = p.nearest;
    spec.cubic_a = p.cubic_a;
    spec.exclude_outside = p.exclude_outside;
    spec.in = p.in[d];
    spec.out = p.out[d];
    spec.scale = p.scale[d];
    spec.output_width = p.output_width[d];
    if (!p.roi.empty()) {
      spec.roi_start = p.roi[d];
      spec.roi_end = p.roi[rank + d];
    }
    if (spec.in == 0 || spec.out == 0) {
      return absl::UnimplementedError(absl::StrCat(
          "resizing dim ", d, " of size ", spec.in, " to ", spec.out));
    }
    if (spec.out * (spec.mode == "cubic" ? 4 : 2) > kMaxSamplingElements) {
      return absl::UnimplementedError(
          absl::StrCat("an output dim of ", spec.out));
    }
    ASSIGN_OR_RETURN(ResizeAxisSampling s, SampleResizeAxis(spec));
    ASSIGN_OR_RETURN(y, ResizeAxis(ctx, y, d, rank, s, p.extrapolation));
  }
  return ctx.SetOutput(0, y);
}

}  // namespace

void AddResizeOnnxOps(OnnxOpTable& table) {
  table.Add("Resize", MapResize);
  table.Add("Upsample", MapResize);
}

}  // namespace guardjit
