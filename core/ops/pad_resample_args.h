#ifndef GUARDJIT_CORE_OPS_PAD_RESAMPLE_ARGS_H_
#define GUARDJIT_CORE_OPS_PAD_RESAMPLE_ARGS_H_

// What the shape rules (core/ops/padding.cc, core/ops/resample.cc), the
// reference kernels and the lowerings of reflection/replication padding and
// upsample_nearest2d/upsample_bilinear2d read from their arguments, so all
// three agree.

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/bound_args.h"

namespace guardjit {

// Padding of the last `dims` dims, (lo, hi) per dim from the innermost
// outward as ATen lists them: pad[2k], pad[2k+1] pad dim rank-1-k.
struct PadDef {
  const char* schema;
  int dims;  // 1, 2 or 3 padded dims
  bool reflect;
};

inline constexpr PadDef kPadOps[] = {
    {"reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor", 1, true},
    {"reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor", 2, true},
    {"reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor", 3, true},
    {"replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor", 2, false},
    {"replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor", 3, false},
};

// The source index along a padded dim of size `n` for the output index `i`
// (`lo` the pad before the dim): ATen's reflection (mirror without
// repeating the edge; pads are < n) or replication (clamp to the edge).
inline int64_t PadSourceIndex(bool reflect, int64_t i, int64_t lo, int64_t n) {
  int64_t j = i - lo;
  if (reflect) {
    if (j < 0) j = -j;
    if (j >= n) j = 2 * (n - 1) - j;
    return j;
  }
  return j < 0 ? 0 : j >= n ? n - 1 : j;
}

// upsample_*2d.vec's output_size (argument 1) and scale_factors (argument
// `factors_index`): exactly one is given, each with two entries.
template <typename I>
struct UpsampleArgs {
  std::optional<std::vector<I>> output_size;
  std::optional<std::vector<double>> scale_factors;
};

template <typename T, typename I = typename BoundArgs<T>::Int>
absl::StatusOr<UpsampleArgs<I>> ReadUpsampleArgs(const BoundArgs<T>& args,
                                                 int factors_index) {
  UpsampleArgs<I> a;
  if (!args.is_none(1)) a.output_size = args.sym_int_list(1);
  if (!args.is_none(factors_index)) {
    std::vector<double> f;
    for (const Arg& item : args.raw(factors_index).as_list()) {
      f.push_back(item.as_scalar().to_double());
    }
    a.scale_factors = std::move(f);
  }
  if (a.output_size.has_value() == a.scale_factors.has_value()) {
    return absl::InvalidArgumentError(
        "argument 'output_size': Must specify exactly one of output_size and "
        "scale_factors");
  }
  if ((a.output_size.has_value() && a.output_size->size() != 2) ||
      (a.scale_factors.has_value() && a.scale_factors->size() != 2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument '",
        a.output_size.has_value() ? "output_size" : "scale_factors",
        "': expected 2 entries (H, W)"));
  }
  return a;
}

// upsample_*2d.vec's scales: the scale_factors when given (then the output
// size is floor(input * factor)), else none.
inline std::optional<double> UpsampleScale(
    const std::optional<std::vector<double>>& factors, int i) {
  if (!factors.has_value()) return std::nullopt;
  return (*factors)[i];
}

// ATen's compute_scales_value: 1/scale when a positive scale was given,
// else input/output, in opmath type `A`.
template <typename A>
A ComputeScale(std::optional<double> scale, int64_t in, int64_t out) {
  return scale.has_value() && *scale > 0
             ? static_cast<A>(1.0 / *scale)
             : static_cast<A>(in) / static_cast<A>(out);
}

// ATen's nearest_idx (upsample_nearest): exact for out == in and
// out == 2 * in, else min(floor(i * scale), in - 1) in float.
inline int64_t NearestSourceIndex(int64_t i, int64_t in, int64_t out,
                                  std::optional<double> scale) {
  if (out == in) return i;
  if (out == 2 * in) return i >> 1;
  const float s = ComputeScale<float>(scale, in, out);
  const int64_t src =
      static_cast<int64_t>(std::floor(static_cast<float>(i) * s));
  return src < in - 1 ? src : in - 1;
}

// ATen's area_pixel_compute_scale for linear modes, in opmath type `A`.
template <typename A>
A LinearScale(int64_t in, int64_t out, bool align_corners,
              std::optional<double> scale) {
  if (align_corners) {
    return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  }
  return ComputeScale<A>(scale, in, out);
}

// ATen's compute_source_index_and_lambda (linear, not cubic): the two
// source indices and their weights for output index `i`.
template <typename A>
struct LinearTap {
  int64_t i0, i1;
  A w0, w1;
};
template <typename A>
LinearTap<A> LinearSource(A ratio, int64_t i, int64_t in, int64_t out,
                          bool align_corners) {
  if (out == in) return {i, i, A(1), A(0)};
  A real = align_corners ? ratio * static_cast<A>(i)
                         : ratio * (static_cast<A>(i) + A(0.5)) - A(0.5);
  if (!align_corners && real < A(0)) real = A(0);
  // ATen floors with floorf, whatever the opmath type.
  int64_t i0 = static_cast<int64_t>(std::floor(static_cast<float>(real)));
  if (i0 > in - 1) i0 = in - 1;
  A w1 = real - static_cast<A>(i0);
  if (w1 < A(0)) w1 = A(0);
  if (w1 > A(1)) w1 = A(1);
  const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  return {i0, i1, A(1) - w1, w1};
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_PAD_RESAMPLE_ARGS_H_
