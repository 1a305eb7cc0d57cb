#include "core/onnx/onnx_resize_sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

// The source coordinate of output position x; false where
// tf_crop_and_resize extrapolates.
absl::StatusOr<bool> SourceCoordinate(const ResizeAxisSpec& s, int64_t x,
                                      double* x_ori) {
  const double in = static_cast<double>(s.in);
  const std::string& mode = s.coordinates;
  if (mode == "align_corners") {
    *x_ori = s.output_width == 1
                 ? 0.0
                 : static_cast<double>(x) * (in - 1) / (s.output_width - 1);
  } else if (mode == "asymmetric") {
    *x_ori = static_cast<double>(x) / s.scale;
  } else if (mode == "tf_crop_and_resize") {
    const double span = s.roi_end - s.roi_start;
    *x_ori = s.output_width == 1 ? span * (in - 1) / 2
                                 : static_cast<double>(x) * span * (in - 1) /
                                       (s.output_width - 1);
    *x_ori += s.roi_start * (in - 1);
    return *x_ori >= 0 && *x_ori <= in - 1;
  } else if (mode == "pytorch_half_pixel") {
    *x_ori = s.output_width == 1
                 ? -0.5
                 : (static_cast<double>(x) + 0.5) / s.scale - 0.5;
  } else if (mode == "half_pixel") {
    *x_ori = (static_cast<double>(x) + 0.5) / s.scale - 0.5;
  } else if (mode == "tf_half_pixel_for_nn") {
    *x_ori = (static_cast<double>(x) + 0.5) / s.scale;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown coordinate_transformation_mode '", mode, "'"));
  }
  return true;
}

// The mode's coefficients at `ratio` (in (0, 1]: 1 on a whole coordinate).
absl::StatusOr<std::vector<double>> Coefficients(const ResizeAxisSpec& s,
                                                 double ratio) {
  if (s.mode == "linear") return std::vector<double>{1 - ratio, ratio};
  if (s.mode == "cubic") {
    const double a = s.cubic_a, r = ratio, q = 1 - ratio;
    return std::vector<double>{
        ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
        ((a + 2) * r - (a + 3)) * r * r + 1,
        ((a + 2) * q - (a + 3)) * q * q + 1,
        ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a};
  }
  if (s.mode != "nearest") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown mode '", s.mode, "'"));
  }
  bool ceil;
  if (ratio == 1) {
    ceil = true;
  } else if (s.nearest_mode == "round_prefer_floor") {
    ceil = ratio > 0.5;
  } else if (s.nearest_mode == "round_prefer_ceil") {
    ceil = ratio >= 0.5;
  } else if (s.nearest_mode == "floor") {
    ceil = false;
  } else if (s.nearest_mode == "ceil") {
    ceil = true;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown nearest_mode '", s.nearest_mode, "'"));
  }
  return std::vector<double>{ceil ? 0.0 : 1.0, ceil ? 1.0 : 0.0};
}

// The reference's get_neighbor_idxes on the edge-padded input: the n
// indices of [0, limit) nearest `x` (ties to the smaller), ascending.
std::vector<int64_t> NeighbourIndices(double x, int n, int64_t limit) {
  std::vector<int64_t> candidates;
  const int64_t base = static_cast<int64_t>(std::floor(x));
  for (int64_t i = base - n; i <= base + n + 1; ++i) {
    if (i >= 0 && i < limit) candidates.push_back(i);
  }
  std::sort(candidates.begin(), candidates.end(), [x](int64_t a, int64_t b) {
    const double da = std::abs(x - static_cast<double>(a));
    const double db = std::abs(x - static_cast<double>(b));
    return da != db ? da < db : a < b;
  });
  candidates.resize(std::min<size_t>(candidates.size(), n));
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

}  // namespace

bool ResizeAxisSampling::IsGather() const {
  if (taps != 1) return false;
  for (size_t o = 0; o < valid.size(); ++o) {
    if (!valid[o] || weight[o] != 1.0) return false;
  }
  return true;
}

bool ResizeAxisSampling::IsIdentity() const {
  if (!IsGather() || static_cast<int64_t>(index.size()) != in) return false;
  for (size_t o = 0; o < index.size(); ++o) {
    if (index[o] != static_cast<int64_t>(o)) return false;
  }
  return true;
}

absl::StatusOr<ResizeAxisSampling> SampleResizeAxis(
    const ResizeAxisSpec& spec) {
  if (spec.in <= 0 || spec.out < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("resizing a dim of ", spec.in, " to ", spec.out));
  }
  const int n = spec.mode == "cubic" ? 4 : 2;
  const int64_t pad = (n + 1) / 2;
  const int64_t out = spec.out;
  // Per output: the n taps' (clamped) indices and weights.
  std::vector<std::vector<std::pair<int64_t, double>>> rows(out);
  ResizeAxisSampling s;
  s.in = spec.in;
  s.valid.assign(out, true);
  for (int64_t x = 0; x < out; ++x) {
    double x_ori = 0;
    auto inside = SourceCoordinate(spec, x, &x_ori);
    if (!inside.ok()) return inside.status();
    if (!*inside) {
      s.valid[x] = false;
      continue;
    }
    const double x_floor = std::floor(x_ori);
    const double ratio = x_ori == x_floor ? 1.0 : x_ori - x_floor;
    auto coeffs = Coefficients(spec, ratio);
    if (!coeffs.ok()) return coeffs.status();
    std::vector<int64_t> idx = NeighbourIndices(
        x_ori + static_cast<double>(pad), n, spec.in + 2 * pad);
    if (static_cast<int>(idx.size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "an input dim of ", spec.in, " has too few neighbours to sample"));
    }
    if (spec.exclude_outside) {
      double sum = 0;
      for (int t = 0; t < n; ++t) {
        const int64_t i = idx[t] - pad;
        if (i < 0 || i >= spec.in) (*coeffs)[t] = 0;
        sum += (*coeffs)[t];
      }
      if (sum == 0) {
        return absl::UnimplementedError(absl::StrCat(
            "exclude_outside leaves output ", x,
            " no weight (ONNX's reference divides by zero there)"));
      }
      for (double& c : *coeffs) c /= sum;
    }
    for (int t = 0; t < n; ++t) {
      const int64_t i = std::clamp<int64_t>(idx[t] - pad, 0, spec.in - 1);
      rows[x].emplace_back(i, (*coeffs)[t]);
    }
  }
  // A gather where every output takes one input with weight 1 (nearest
  // always; linear on whole coordinates).
  bool gather = true;
  std::vector<int64_t> single(out, 0);
  for (int64_t x = 0; x < out && gather; ++x) {
    if (!s.valid[x]) {
      gather = false;
      break;
    }
    int64_t pick = -1;
    double total = 0;
    for (const auto& [i, w] : rows[x]) {
      if (w == 0) continue;
      if (pick >= 0 && i != pick) {
        gather = false;
        break;
      }
      pick = i;
      total += w;
    }
    gather = gather && pick >= 0 && total == 1.0;
    single[x] = pick;
  }
  if (gather) {
    s.taps = 1;
    s.index = std::move(single);
    s.weight.assign(out, 1.0);
    return s;
  }
  s.taps = n;
  s.index.assign(static_cast<size_t>(n) * out, 0);
  s.weight.assign(static_cast<size_t>(n) * out, 0.0);
  for (int64_t x = 0; x < out; ++x) {
    if (!s.valid[x]) continue;
    for (int t = 0; t < n; ++t) {
      s.index[t * out + x] = rows[x][t].first;
      s.weight[t * out + x] = rows[x][t].second;
    }
  }
  return s;
}

}  // namespace guardjit
