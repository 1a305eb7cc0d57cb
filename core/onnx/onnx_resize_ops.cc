// ONNX Resize (and the older Upsample) on ATen's 2-D upsampling, for the
// coordinate rules the two agree on: nearest with asymmetric coordinates
// and floor rounding (ATen's rule), or half-pixel with round_prefer_floor at
// integer upscale factors (where the two rules pick the same pixels);
// linear with half_pixel (ATen's align_corners=False; pytorch_half_pixel
// when no output dim is 1) or align_corners. Other modes, cubic,
// exclude_outside and crop-and-resize are refused.

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::StatusOr<std::vector<float>> ConstFloats(OnnxNodeContext& ctx, int i,
                                               absl::string_view what) {
  const Tensor* t = ctx.InputConstant(i);
  if (t == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        what, " (input ", i, ", '", ctx.node().input(i),
        "') is computed at run time, and only values known at load are "
        "supported"));
  }
  if (t->dtype() != DType::kFloat32) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not float32"));
  }
  return std::vector<float>(t->data_as<float>(),
                            t->data_as<float>() + t->numel());
}

absl::Status MapResize(OnnxNodeContext& ctx) {
  const bool upsample = ctx.node().op_type() == "Upsample";
  ASSIGN_OR_RETURN(std::string mode, ctx.attrs().String("mode", "nearest"));
  std::string coordinates = "asymmetric", nearest = "floor";
  if (!upsample && ctx.opset() >= 11) {
    ASSIGN_OR_RETURN(
        coordinates,
        ctx.attrs().String("coordinate_transformation_mode", "half_pixel"));
    ASSIGN_OR_RETURN(nearest,
                     ctx.attrs().String("nearest_mode", "round_prefer_floor"));
    ASSIGN_OR_RETURN(float a, ctx.attrs().Float("cubic_coeff_a", -0.75f));
    ASSIGN_OR_RETURN(int64_t exclude, ctx.attrs().Int("exclude_outside", 0));
    ASSIGN_OR_RETURN(float extrapolation,
                     ctx.attrs().Float("extrapolation_value", 0.0f));
    (void)a, (void)extrapolation;
    if (exclude) return absl::UnimplementedError("exclude_outside=1");
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  if (in.size() != 4) {
    return absl::UnimplementedError(
        absl::StrCat("a rank-", in.size(), " input (4-D is supported)"));
  }
  // Scales from input 1 (Upsample, opset 10) or 2, or sizes from input 3.
  const int scales_input = upsample || ctx.opset() < 11 ? 1 : 2;
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (ctx.has_input(scales_input)) {
    ASSIGN_OR_RETURN(scales, ConstFloats(ctx, scales_input, "scales"));
  }
  if (scales.empty() && !upsample && ctx.opset() >= 11 && ctx.has_input(3)) {
    ASSIGN_OR_RETURN(sizes, ctx.ConstInts(3, "sizes"));
  }
  if (scales.empty() && sizes.empty()) {
    return absl::InvalidArgumentError("neither scales nor sizes given");
  }
  if ((!scales.empty() &&
       (scales.size() != 4 || scales[0] != 1 || scales[1] != 1)) ||
      (!sizes.empty() &&
       (sizes.size() != 4 || sizes[0] != in[0] || sizes[1] != in[1]))) {
    return absl::UnimplementedError(
        "resizing other dims than the last two, or scales/sizes not of "
        "length 4");
  }
  int64_t out[2];
  double factor[2];
  for (int d = 0; d < 2; ++d) {
    if (!scales.empty()) {
      if (!(scales[d + 2] > 0)) {
        return absl::InvalidArgumentError("scales must be positive");
      }
      out[d] = static_cast<int64_t>(std::floor(in[d + 2] * scales[d + 2]));
      factor[d] = scales[d + 2];
    } else {
      out[d] = sizes[d + 2];
      factor[d] =
          in[d + 2] == 0 ? 1.0 : static_cast<double>(out[d]) / in[d + 2];
    }
  }
  Arg output_size = Arg::None(), scale_factors = Arg::None();
  if (!scales.empty()) {
    scale_factors = Arg::OfList({Arg::Float(scales[2]), Arg::Float(scales[3])});
  } else {
    output_size = IntList({out[0], out[1]});
  }
  Arg y;
  if (mode == "nearest") {
    bool same = coordinates == "asymmetric" && nearest == "floor";
    if ((coordinates == "half_pixel" ||
         (coordinates == "pytorch_half_pixel" && out[0] > 1 && out[1] > 1)) &&
        nearest == "round_prefer_floor") {
      // Same pixels as floor(x / k) for an integer upscale k.
      same = true;
      for (int d = 0; d < 2; ++d) {
        const double k = std::round(factor[d]);
        same = same && k >= 1 && k == factor[d] && out[d] == in[d + 2] * k;
      }
    }
    if (!same) {
      return absl::UnimplementedError(absl::StrCat(
          "nearest with coordinate_transformation_mode '", coordinates,
          "' and nearest_mode '", nearest, "' at these scales"));
    }
    ASSIGN_OR_RETURN(y, ctx.Emit("aten.upsample_nearest2d.vec",
                                 {x, output_size, scale_factors}));
  } else if (mode == "linear") {
    bool align_corners;
    if (coordinates == "half_pixel" ||
        (coordinates == "pytorch_half_pixel" && out[0] > 1 && out[1] > 1)) {
      align_corners = false;
    } else if (coordinates == "align_corners") {
      align_corners = true;
      // ONNX maps by the unrounded length in * scale; ATen by the output's.
      for (int d = 0; !scales.empty() && d < 2; ++d) {
        if (static_cast<double>(in[d + 2]) * scales[d + 2] !=
            static_cast<double>(out[d])) {
          return absl::UnimplementedError(
              "align_corners at scales that do not give whole sizes");
        }
      }
      // ATen's align_corners ignores scales and maps by sizes, as ONNX does.
      output_size = IntList({out[0], out[1]});
      scale_factors = Arg::None();
    } else {
      return absl::UnimplementedError(absl::StrCat(
          "linear with coordinate_transformation_mode '", coordinates, "'"));
    }
    RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "linear resize input"));
    ASSIGN_OR_RETURN(
        y, ctx.Emit("aten.upsample_bilinear2d.vec",
                    {x, output_size, Arg::Bool(align_corners), scale_factors}));
  } else {
    return absl::UnimplementedError(absl::StrCat("mode '", mode, "'"));
  }
  return ctx.SetOutput(0, y);
}

}  // namespace

void AddResizeOnnxOps(OnnxOpTable& table) {
  table.Add("Resize", MapResize);
  table.Add("Upsample", MapResize);
}

}  // namespace guardjit
