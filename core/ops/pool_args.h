#ifndef GUARDJIT_CORE_OPS_POOL_ARGS_H_
#define GUARDJIT_CORE_OPS_POOL_ARGS_H_

// The window arguments of max_pool2d_with_indices and avg_pool2d, read and
// checked as ATen's pool2d_shape_check does, shared by the shape rules
// (core/ops/pooling.cc) and the reference kernels so both see one window.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/bound_args.h"
#include "core/status_macros.h"

namespace guardjit {

struct Pool2dWindow {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2] = {1, 1};
  bool ceil_mode = false;
};

namespace pool_internal {

// An int[2] argument given as one or two ints ([] for stride: the kernel).
inline absl::Status ReadPair(const std::vector<int64_t>& list,
                             absl::string_view op, absl::string_view name,
                             int64_t out[2]) {
  if (list.size() != 1 && list.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument '", name, "': ", op, ": ", name,
                     " must either be a single int, or a tuple of two ints"));
  }
  out[0] = list[0];
  out[1] = list.size() == 2 ? list[1] : list[0];
  return absl::OkStatus();
}

}  // namespace pool_internal

// Arguments 1-3 are kernel_size, stride, padding; `dilation_at` (-1: none)
// and `ceil_at` index the others.
template <typename T>
absl::StatusOr<Pool2dWindow> ReadPool2dWindow(const BoundArgs<T>& args,
                                              absl::string_view op,
                                              int dilation_at, int ceil_at) {
  Pool2dWindow w;
  RETURN_IF_ERROR(
      pool_internal::ReadPair(args.int_list(1), op, "kernel_size", w.kernel));
  const std::vector<int64_t> stride = args.int_list(2);
  if (stride.empty()) {
    w.stride[0] = w.kernel[0];
    w.stride[1] = w.kernel[1];
  } else {
    RETURN_IF_ERROR(pool_internal::ReadPair(stride, op, "stride", w.stride));
  }
  RETURN_IF_ERROR(
      pool_internal::ReadPair(args.int_list(3), op, "padding", w.padding));
  if (dilation_at >= 0) {
    RETURN_IF_ERROR(pool_internal::ReadPair(args.int_list(dilation_at), op,
                                            "dilation", w.dilation));
  }
  w.ceil_mode = args.bool_arg(ceil_at);
  if (w.kernel[0] <= 0 || w.kernel[1] <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'kernel_size': kernel size should be greater than zero, but "
        "got kH: ",
        w.kernel[0], " kW: ", w.kernel[1]));
  }
  if (w.stride[0] <= 0 || w.stride[1] <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'stride': stride should be greater than zero, but got dH: ",
        w.stride[0], " dW: ", w.stride[1]));
  }
  if (w.dilation[0] <= 0 || w.dilation[1] <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'dilation': dilation should be greater than zero, but got "
        "dilationH: ",
        w.dilation[0], " dilationW: ", w.dilation[1]));
  }
  if (w.padding[0] < 0 || w.padding[1] < 0 || w.kernel[0] / 2 < w.padding[0] ||
      w.kernel[1] / 2 < w.padding[1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'padding': pad should be smaller than or equal to half of "
        "kernel size, but got padW = ",
        w.padding[1], ", padH = ", w.padding[0], ", kW = ", w.kernel[1],
        ", kH = ", w.kernel[0]));
  }
  return w;
}

// ATen's pooling_output_shape for dim `d` of the window: floor division,
// and with ceil_mode the last window must start inside the input or its
// left padding.
inline int64_t PoolOutputSize(int64_t input, const Pool2dWindow& w, int d) {
  const int64_t stride = w.stride[d];
  int64_t numerator = input + 2 * w.padding[d] -
                      w.dilation[d] * (w.kernel[d] - 1) - 1 +
                      (w.ceil_mode ? stride - 1 : 0);
  int64_t out = numerator / stride;
  if (numerator % stride != 0 && numerator < 0) --out;  // floor
  ++out;
  if (w.ceil_mode && (out - 1) * stride >= input + w.padding[d]) --out;
  return out;
}

// The window of max_pool3d_with_indices and avg_pool3d (ATen's
// pool3d_shape_check): kernel, stride, padding and dilation over (D, H, W).
struct Pool3dWindow {
  int64_t kernel[3];
  int64_t stride[3];
  int64_t padding[3];
  int64_t dilation[3] = {1, 1, 1};
  bool ceil_mode = false;
};

namespace pool_internal {

// An int[3] argument given as one or three ints.
inline absl::Status ReadTriple(const std::vector<int64_t>& list,
                               absl::string_view op, absl::string_view name,
                               int64_t out[3]) {
  if (list.size() != 1 && list.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument '", name, "': ", op, ": ", name,
                     " must either be a single int, or a tuple of three ints"));
  }
  for (int d = 0; d < 3; ++d) out[d] = list.size() == 3 ? list[d] : list[0];
  return absl::OkStatus();
}

}  // namespace pool_internal

// Arguments 1-3 are kernel_size, stride, padding; `dilation_at` (-1: none)
// and `ceil_at` index the others.
template <typename T>
absl::StatusOr<Pool3dWindow> ReadPool3dWindow(const BoundArgs<T>& args,
                                              absl::string_view op,
                                              int dilation_at, int ceil_at) {
  Pool3dWindow w;
  RETURN_IF_ERROR(
      pool_internal::ReadTriple(args.int_list(1), op, "kernel_size", w.kernel));
  const std::vector<int64_t> stride = args.int_list(2);
  if (stride.empty()) {
    for (int d = 0; d < 3; ++d) w.stride[d] = w.kernel[d];
  } else {
    RETURN_IF_ERROR(pool_internal::ReadTriple(stride, op, "stride", w.stride));
  }
  RETURN_IF_ERROR(
      pool_internal::ReadTriple(args.int_list(3), op, "padding", w.padding));
  if (dilation_at >= 0) {
    RETURN_IF_ERROR(pool_internal::ReadTriple(args.int_list(dilation_at), op,
                                              "dilation", w.dilation));
  }
  w.ceil_mode = args.bool_arg(ceil_at);
  for (int d = 0; d < 3; ++d) {
    if (w.kernel[d] <= 0) {
      return absl::InvalidArgumentError(
          "argument 'kernel_size': kernel size should be greater than zero");
    }
    if (w.stride[d] <= 0) {
      return absl::InvalidArgumentError(
          "argument 'stride': stride should be greater than zero");
    }
    if (w.dilation[d] <= 0) {
      return absl::InvalidArgumentError(
          "argument 'dilation': dilation should be greater than zero");
    }
    if (w.padding[d] < 0 ||
        w.padding[d] > ((w.kernel[d] - 1) * w.dilation[d] + 1) / 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'padding': pad should be at most half of effective kernel "
          "size, but got pad=",
          w.padding[d], ", kernel_size=", w.kernel[d],
          " and dilation=", w.dilation[d]));
    }
  }
  return w;
}

// PoolOutputSize for dim `d` (0: D, 1: H, 2: W) of a 3-D window.
inline int64_t PoolOutputSize3d(int64_t input, const Pool3dWindow& w, int d) {
  const int64_t stride = w.stride[d];
  int64_t numerator = input + 2 * w.padding[d] -
                      w.dilation[d] * (w.kernel[d] - 1) - 1 +
                      (w.ceil_mode ? stride - 1 : 0);
  int64_t out = numerator / stride;
  if (numerator % stride != 0 && numerator < 0) --out;  // floor
  ++out;
  if (w.ceil_mode && (out - 1) * stride >= input + w.padding[d]) --out;
  return out;
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_POOL_ARGS_H_
