#ifndef GUARDJIT_CORE_ONNX_ONNX_WINDOW_H_
#define GUARDJIT_CORE_ONNX_ONNX_WINDOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/onnx/onnx_node_context.h"

namespace guardjit {

// Conv's and the pools' window attributes (kernel_shape, strides,
// dilations, pads, auto_pad) for an input of static sizes `input`
// ([N, C, spatial...]), with auto_pad resolved to explicit pads.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pad_begin, pad_end;
  bool symmetric() const { return pad_begin == pad_end; }
};

// `kernel` is the weight's spatial sizes (empty for pools, which read
// kernel_shape).
absl::StatusOr<Window> ReadWindow(OnnxNodeContext& ctx, const Shape& input,
                                  std::vector<int64_t> kernel);

// Pads the spatial dims of `x` by the window's pads with `value` and zeroes
// them in `w`: how uneven ONNX pads run on ATen ops whose padding is even.
absl::StatusOr<Arg> PadUneven(OnnxNodeContext& ctx, const Arg& x, Window& w,
                              double value);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_WINDOW_H_
