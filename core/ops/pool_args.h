#ifndef GUARDJIT_CORE_OPS_POOL_ARGS_H_
#define GUARDJIT_CORE_OPS_POOL_ARGS_H_

// The window arguments of ATen's pooling ops over N spatial dims (N = 2:
// max_pool2d_with_indices, avg_pool2d; N = 3: their 3-D forms), read and
// checked as ATen's pool2d_shape_check / pool3d_shape_check do, shared by
// the shape rules (core/ops/pooling.cc), the reference kernels and the JIT
// lowering so all of them see one window.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/bound_args.h"
#include "core/status_macros.h"

namespace guardjit {

// A window over the last `rank` dims of the input (rank 2: H, W; rank 3:
// D, H, W). Entries past `rank` are unused.
struct PoolWindow {
  static constexpr int kMaxRank = 3;
  int rank = 2;
  int64_t kernel[kMaxRank] = {1, 1, 1};
  int64_t stride[kMaxRank] = {1, 1, 1};
  int64_t padding[kMaxRank] = {0, 0, 0};
  int64_t dilation[kMaxRank] = {1, 1, 1};
  bool ceil_mode = false;

  // The same window over kMaxRank dims: unit dims (kernel, stride and
  // dilation 1, no padding) in front, so a rank-2 window pools (1, H, W)
  // exactly as it pools (H, W).
  PoolWindow Full() const {
    PoolWindow full;
    full.rank = kMaxRank;
    full.ceil_mode = ceil_mode;
    const int lead = kMaxRank - rank;
    for (int d = 0; d < rank; ++d) {
      full.kernel[lead + d] = kernel[d];
      full.stride[lead + d] = stride[d];
      full.padding[lead + d] = padding[d];
      full.dilation[lead + d] = dilation[d];
    }
    return full;
  }
};

namespace pool_internal {

// ATen's names of the window's dims in its messages: kH kW, kT kH kW.
inline absl::string_view DimLetter(int rank, int d) {
  static constexpr absl::string_view kLetters[] = {"T", "H", "W"};
  return kLetters[PoolWindow::kMaxRank - rank + d];
}

// "kH: 2 kW: 0" (prefix "k"), as ATen prints a window argument.
inline std::string Values(const PoolWindow& w, absl::string_view prefix,
                          const int64_t* values) {
  std::string text;
  for (int d = 0; d < w.rank; ++d) {
    absl::StrAppend(&text, d == 0 ? "" : " ", prefix, DimLetter(w.rank, d),
                    ": ", values[d]);
  }
  return text;
}

// An int[rank] argument given as one int or `rank` of them.
inline absl::Status ReadInts(const std::vector<int64_t>& list, int rank,
                             absl::string_view op, absl::string_view name,
                             int64_t* out) {
  const size_t n = static_cast<size_t>(rank);
  if (list.size() != 1 && list.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument '", name, "': ", op, ": ", name,
                     " must either be a single int, or a tuple of ",
                     rank == 2 ? "two" : "three", " ints"));
  }
  for (size_t d = 0; d < n; ++d) out[d] = list.size() == n ? list[d] : list[0];
  return absl::OkStatus();
}

// The padding bound: 2-D pools bound each pad by half the kernel (ATen's
// pool2d_shape_check), 3-D pools by half the dilated kernel (ATen's
// pooling_output_shape, which its 3-D path reaches first).
inline absl::Status CheckPadding(const PoolWindow& w) {
  for (int d = 0; d < w.rank; ++d) {
    const int64_t p = w.padding[d], k = w.kernel[d];
    if (w.rank == 2) {
      if (p >= 0 && k / 2 >= p) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'padding': pad should be smaller than or equal to half "
          "of kernel size, but got padW = ",
          w.padding[1], ", padH = ", w.padding[0], ", kW = ", w.kernel[1],
          ", kH = ", w.kernel[0]));
    }
    if (p >= 0 && p <= ((k - 1) * w.dilation[d] + 1) / 2) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'padding': pad should be at most half of effective kernel "
        "size, but got pad=",
        p, ", kernel_size=", k, " and dilation=", w.dilation[d]));
  }
  return absl::OkStatus();
}

}  // namespace pool_internal

// The window of a `rank`-D pool: arguments 1-3 are kernel_size, stride
// ([]: the kernel) and padding; `dilation_at` (-1: none) and `ceil_at`
// index the others.
template <typename T>
absl::StatusOr<PoolWindow> ReadPoolWindow(const BoundArgs<T>& args, int rank,
                                          absl::string_view op, int dilation_at,
                                          int ceil_at) {
  PoolWindow w;
  w.rank = rank;
  RETURN_IF_ERROR(pool_internal::ReadInts(args.int_list(1), rank, op,
                                          "kernel_size", w.kernel));
  const std::vector<int64_t> stride = args.int_list(2);
  if (stride.empty()) {
    for (int d = 0; d < rank; ++d) w.stride[d] = w.kernel[d];
  } else {
    RETURN_IF_ERROR(
        pool_internal::ReadInts(stride, rank, op, "stride", w.stride));
  }
  RETURN_IF_ERROR(pool_internal::ReadInts(args.int_list(3), rank, op, "padding",
                                          w.padding));
  if (dilation_at >= 0) {
    RETURN_IF_ERROR(pool_internal::ReadInts(args.int_list(dilation_at), rank,
                                            op, "dilation", w.dilation));
  }
  w.ceil_mode = args.bool_arg(ceil_at);
  for (int d = 0; d < rank; ++d) {
    if (w.kernel[d] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'kernel_size': kernel size should be greater than zero, "
          "but got ",
          pool_internal::Values(w, "k", w.kernel)));
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (w.stride[d] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'stride': stride should be greater than zero, but got ",
          pool_internal::Values(w, "d", w.stride)));
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (w.dilation[d] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'dilation': dilation should be greater than zero, but got ",
          pool_internal::Values(w, "dilation", w.dilation)));
    }
  }
  RETURN_IF_ERROR(pool_internal::CheckPadding(w));
  return w;
}

// ATen's pooling_output_shape for dim `d` of the window: floor division,
// and with ceil_mode the last window must start inside the input or its
// left padding.
inline int64_t PoolOutputSize(int64_t input, const PoolWindow& w, int d) {
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
