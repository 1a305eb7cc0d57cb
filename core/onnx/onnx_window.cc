#include "core/onnx/onnx_window.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {

absl::StatusOr<Window> ReadWindow(OnnxNodeContext& ctx, const Shape& input,
                                  std::vector<int64_t> kernel) {
  const size_t spatial = input.size() - 2;
  Window w;
  ASSIGN_OR_RETURN(auto kernel_attr, ctx.attrs().Ints("kernel_shape"));
  if (kernel_attr.has_value()) {
    if (!kernel.empty() && *kernel_attr != kernel) {
      return absl::InvalidArgumentError(
          "kernel_shape differs from the weight's");
    }
    kernel = *kernel_attr;
  }
  if (kernel.size() != spatial) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel has ", kernel.size(), " dims for ", spatial, " spatial dims"));
  }
  w.kernel = kernel;
  ASSIGN_OR_RETURN(auto strides, ctx.attrs().Ints("strides"));
  ASSIGN_OR_RETURN(auto dilations, ctx.attrs().Ints("dilations"));
  ASSIGN_OR_RETURN(auto pads, ctx.attrs().Ints("pads"));
  ASSIGN_OR_RETURN(std::string auto_pad,
                   ctx.attrs().String("auto_pad", "NOTSET"));
  w.strides = strides.value_or(std::vector<int64_t>(spatial, 1));
  w.dilations = dilations.value_or(std::vector<int64_t>(spatial, 1));
  if (w.strides.size() != spatial || w.dilations.size() != spatial) {
    return absl::InvalidArgumentError(
        "strides or dilations of the wrong length");
  }
  w.pad_begin.assign(spatial, 0);
  w.pad_end.assign(spatial, 0);
  if (auto_pad == "NOTSET") {
    if (pads.has_value()) {
      if (pads->size() != 2 * spatial) {
        return absl::InvalidArgumentError("pads of the wrong length");
      }
      for (size_t d = 0; d < spatial; ++d) {
        w.pad_begin[d] = (*pads)[d];
        w.pad_end[d] = (*pads)[d + spatial];
        if (w.pad_begin[d] < 0 || w.pad_end[d] < 0) {
          return absl::InvalidArgumentError("negative pads");
        }
      }
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t in = input[d + 2];
      const int64_t out = (in + w.strides[d] - 1) / w.strides[d];
      const int64_t span = (w.kernel[d] - 1) * w.dilations[d] + 1;
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + span - in);
      const int64_t small = total / 2, large = total - small;
      w.pad_begin[d] = auto_pad == "SAME_UPPER" ? small : large;
      w.pad_end[d] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "VALID") {
    return absl::InvalidArgumentError(
        absl::StrCat("auto_pad '", auto_pad, "' is not an ONNX value"));
  }
  return w;
}

absl::StatusOr<Arg> PadUneven(OnnxNodeContext& ctx, const Arg& x, Window& w,
                              double value) {
  std::vector<int64_t> pad;
  for (size_t d = w.pad_begin.size(); d-- > 0;) {
    pad.push_back(w.pad_begin[d]);
    pad.push_back(w.pad_end[d]);
  }
  std::fill(w.pad_begin.begin(), w.pad_begin.end(), 0);
  std::fill(w.pad_end.begin(), w.pad_end.end(), 0);
  return ctx.Emit("aten.constant_pad_nd.default",
                  {x, IntList(pad), Arg::Float(value)});
}

}  // namespace guardjit
