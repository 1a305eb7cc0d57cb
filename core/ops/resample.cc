// Shape rules of upsample_nearest2d.vec and upsample_bilinear2d.vec: a 4-D
// input (N, C, H, W) with C, H and W non-empty; exactly one of output_size
// (two positive sizes) and scale_factors (two factors, the output size
// floor(input * factor) as ATen's compute_output_size truncates it). Over a
// symbolic H or W only integer factors keep the size symbolic. Nearest takes
// floating dtypes and uint8, bilinear floating dtypes (ATen's uint8 bilinear
// path rounds differently and is not reproduced: UNIMPLEMENTED).

#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/pad_resample_args.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

MetaFn UpsampleMeta(bool bilinear) {
  const int factors_index = bilinear ? 3 : 2;
  return [bilinear, factors_index](
             const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
    const TensorMeta self = args.tensor(0);
    if (self.dim() != 4 || self.sizes[1] == 0 || self.sizes[2] == 0 ||
        self.sizes[3] == 0) {
      return ArgError("input",
                      absl::StrCat("Non-empty 4D data tensor expected but got "
                                   "a tensor with sizes ",
                                   SymShapeToString(self.sizes)));
    }
    const bool floating = IsFloating(self.dtype);
    if (!floating && !(self.dtype == DType::kUInt8 && !bilinear)) {
      return absl::UnimplementedError(absl::StrCat(
          "argument 'input': upsample_", bilinear ? "bilinear" : "nearest",
          "2d is not implemented for ", DTypeName(self.dtype)));
    }
    ASSIGN_OR_RETURN(auto a, ReadUpsampleArgs(args, factors_index));
    SymShape sizes = self.sizes;
    for (int k = 0; k < 2; ++k) {
      const SymInt in = self.sizes[2 + k];
      SymInt out;
      if (a.output_size.has_value()) {
        out = (*a.output_size)[k];
      } else {
        const double f = (*a.scale_factors)[k];
        if (in.is_symbolic()) {
          if (!(f == std::floor(f) && std::isfinite(f) && f >= 0 &&
                f < 0x1p31)) {
            const bool integer = std::isfinite(f) && f == std::floor(f);
            return absl::UnimplementedError(
                absl::StrCat("argument 'scale_factors': the ",
                             !integer ? "non-integer factor "
                             : f < 0  ? "negative factor "
                                      : "factor of 2^31 or more, ",
                             f, " over the symbolic size ", in.ToString()));
          }
          out = in * SymInt(static_cast<int64_t>(f));
        } else {
          const double o = static_cast<double>(in.hint()) * f;
          if (!(o > -0x1p63 && o < 0x1p63)) {
            return ArgError("scale_factors",
                            absl::StrCat("factor ", f, " overflows the size"));
          }
          out = SymInt(static_cast<int64_t>(o));
        }
      }
      if (out <= 0) {
        return ArgError(
            a.output_size.has_value() ? "output_size" : "scale_factors",
            absl::StrCat("Input and output sizes should be greater than 0, "
                         "but got input (H: ",
                         self.sizes[2].ToString(),
                         ", W: ", self.sizes[3].ToString(), ") output (",
                         k == 0 ? "H" : "W", ": ", out.ToString(), ")"));
      }
      sizes[2 + k] = out;
    }
    return std::vector<TensorMeta>{
        TensorMeta{self.dtype, std::move(sizes), self.device}};
  };
}

}  // namespace

absl::Status RegisterResampleOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? "
      "scale_factors) -> Tensor",
      UpsampleMeta(false)));
  RETURN_IF_ERROR(registry.Register(
      "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool "
      "align_corners, float[]? scale_factors) -> Tensor",
      UpsampleMeta(true)));
  return absl::OkStatus();
}

}  // namespace guardjit
