#ifndef GUARDJIT_CORE_ONNX_ONNX_RESIZE_SAMPLING_H_
#define GUARDJIT_CORE_ONNX_ONNX_RESIZE_SAMPLING_H_

// ONNX Resize along one axis, as ONNX's reference implementation computes it
// (onnx/backend/test/case/node/resize.py, which the node tests' outputs come
// from): each output position maps to a source coordinate by the coordinate
// transformation mode, takes n neighbours of it (2 for nearest and linear,
// 4 for cubic; the input edge-padded) and weighs them by the mode's
// coefficients. An N-D resize is this along each axis in turn (separable),
// so a mapping can run it as gathers of constant indices, products with
// constant weights and sums.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace guardjit {

struct ResizeAxisSpec {
  std::string mode = "nearest";  // nearest, linear, cubic
  // half_pixel, pytorch_half_pixel, align_corners, asymmetric,
  // tf_half_pixel_for_nn, tf_crop_and_resize.
  std::string coordinates = "half_pixel";
  // round_prefer_floor, round_prefer_ceil, floor, ceil.
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  int64_t in = 0;   // input size
  int64_t out = 0;  // output size
  // The scale factor and the unrounded output length the reference divides
  // by (scale * in, at the precision it computes it in).
  double scale = 1;
  double output_width = 0;
  // tf_crop_and_resize's region: roi start and end of this axis.
  double roi_start = 0, roi_end = 1;
};

// Output position o reads, for each tap t < taps, input index
// index[t * out + o] (within [0, in)) with weight weight[t * out + o];
// valid[o] is false where tf_crop_and_resize extrapolates (its weights are
// then 0 and the output is the extrapolation value).
struct ResizeAxisSampling {
  int64_t in = 0;  // the input size
  int taps = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> valid;
  // Whether every output takes one input unweighted (one tap of weight 1):
  // a gather, exact for any dtype.
  bool IsGather() const;
  // Whether the axis is unchanged: as many outputs as inputs, output o a
  // gather of input o.
  bool IsIdentity() const;
};

// INVALID_ARGUMENT for an unknown mode; UNIMPLEMENTED where the reference
// divides by zero (exclude_outside with every neighbour outside).
absl::StatusOr<ResizeAxisSampling> SampleResizeAxis(const ResizeAxisSpec& spec);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_RESIZE_SAMPLING_H_
