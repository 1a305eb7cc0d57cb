// Reference kernels of the 2-D pooling ops, one (H, W) plane at a time over
// the leading dims, as ATen's CPU kernels (cpu_max_pool, cpu_avg_pool,
// cpu_adaptive_avg_pool) compute them.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/ops/pool_args.h"
#include "core/status_macros.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// Planes (the product of the leading dims) and the plane geometry of an
// input and an output of equal rank >= 2.
struct Planes {
  int64_t count, in_h, in_w, out_h, out_w;
};

Planes PlanesOf(const Tensor& input, const Shape& out) {
  const int h = input.dim() - 2;
  int64_t count = 1;
  for (int d = 0; d < h; ++d) count *= input.sizes()[d];
  return {count, input.sizes()[h], input.sizes()[h + 1], out[h], out[h + 1]};
}

// Each window's maximum and its flat index in the plane (ih * W + iw).
// Out-of-input taps are skipped (padding is -inf); a NaN always wins, so the
// last NaN of a window is its result; a window with no value above the
// lowest keeps its first in-input tap's index.
template <typename T>
void MaxPoolPlanes(const T* in, T* out, int64_t* indices, const Planes& p,
                   const Pool2dWindow& w) {
  using M = OpMath<T>;
  for (int64_t plane = 0; plane < p.count; ++plane) {
    const T* x = in + plane * p.in_h * p.in_w;
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        int64_t ih0 = oh * w.stride[0] - w.padding[0];
        int64_t iw0 = ow * w.stride[1] - w.padding[1];
        const int64_t ih1 =
            std::min(ih0 + (w.kernel[0] - 1) * w.dilation[0] + 1, p.in_h);
        const int64_t iw1 =
            std::min(iw0 + (w.kernel[1] - 1) * w.dilation[1] + 1, p.in_w);
        while (ih0 < 0) ih0 += w.dilation[0];
        while (iw0 < 0) iw0 += w.dilation[1];
        int64_t best_index = ih0 * p.in_w + iw0;
        M best;
        if constexpr (std::is_floating_point_v<M>) {
          best = -std::numeric_limits<M>::infinity();
        } else {
          best = std::numeric_limits<M>::lowest();
        }
        for (int64_t ih = ih0; ih < ih1; ih += w.dilation[0]) {
          for (int64_t iw = iw0; iw < iw1; iw += w.dilation[1]) {
            const int64_t index = ih * p.in_w + iw;
            const M v = static_cast<M>(x[index]);
            bool nan = false;
            if constexpr (std::is_floating_point_v<M>) nan = std::isnan(v);
            if (v > best || nan) {
              best = v;
              best_index = index;
            }
          }
        }
        const int64_t o = (plane * p.out_h + oh) * p.out_w + ow;
        out[o] = static_cast<T>(best);
        indices[o] = best_index;
      }
    }
  }
}

Outputs MaxPool2dWithIndicesKernel(const KernelArgs& args,
                                   absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(Pool2dWindow w, ReadPool2dWindow(args, "max_pool2d", 4, 5));
  ASSIGN_OR_RETURN(Tensor input, Contiguous(args.tensor(0)));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor values, Tensor::Empty(out[0].dtype, shape));
  ASSIGN_OR_RETURN(Tensor indices, Tensor::Empty(DType::kInt64, shape));
  const Planes p = PlanesOf(input, shape);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      MaxPoolPlanes<T>(input.data_as<T>(), values.data_as<T>(),
                       indices.data_as<int64_t>(), p, w);
    }
  });
  return std::vector<Tensor>{values, indices};
}

// Window sums in double (int64 in int64) over the taps inside the input,
// divided by divisor_override, or by the window's extent clipped to the
// padded input (count_include_pad) or to the input itself. A window
// entirely in the padding gives 0.
Outputs AvgPool2dKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(Pool2dWindow w, ReadPool2dWindow(args, "avg_pool2d", -1, 4));
  const bool count_include_pad = args.bool_arg(5);
  const std::optional<int64_t> divisor_override = args.optional_int(6);
  const Tensor self = args.tensor(0);
  const bool integral = self.dtype() == DType::kInt64;
  const DType compute = integral ? DType::kInt64 : DType::kFloat64;
  ASSIGN_OR_RETURN(Tensor input, CopyAs(self, compute));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(compute, shape));
  const Planes p = PlanesOf(input, shape);
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int64_t>) {
      const T* in = input.data_as<T>();
      T* y = result.data_as<T>();
      for (int64_t plane = 0; plane < p.count; ++plane) {
        const T* x = in + plane * p.in_h * p.in_w;
        for (int64_t oh = 0; oh < p.out_h; ++oh) {
          for (int64_t ow = 0; ow < p.out_w; ++ow) {
            int64_t ih0 = oh * w.stride[0] - w.padding[0];
            int64_t iw0 = ow * w.stride[1] - w.padding[1];
            int64_t ih1 = std::min(ih0 + w.kernel[0], p.in_h + w.padding[0]);
            int64_t iw1 = std::min(iw0 + w.kernel[1], p.in_w + w.padding[1]);
            const int64_t pool_size = (ih1 - ih0) * (iw1 - iw0);
            ih0 = std::max<int64_t>(ih0, 0);
            iw0 = std::max<int64_t>(iw0, 0);
            ih1 = std::min(ih1, p.in_h);
            iw1 = std::min(iw1, p.in_w);
            T& o = y[(plane * p.out_h + oh) * p.out_w + ow];
            if (ih0 >= ih1 || iw0 >= iw1) {
              o = T(0);
              continue;
            }
            T sum = T(0);
            for (int64_t ih = ih0; ih < ih1; ++ih) {
              for (int64_t iw = iw0; iw < iw1; ++iw) sum += x[ih * p.in_w + iw];
            }
            const int64_t divisor =
                divisor_override.has_value() ? *divisor_override
                : count_include_pad          ? pool_size
                                             : (ih1 - ih0) * (iw1 - iw0);
            o = sum / static_cast<T>(divisor);
          }
        }
      }
    }
  });
  ASSIGN_OR_RETURN(Tensor cast, CopyAs(result, out[0].dtype));
  return std::vector<Tensor>{cast};
}

// Output cell (oh, ow) averages input rows [floor(oh * H / OH),
// ceil((oh + 1) * H / OH)) and the same for columns.
Outputs AdaptiveAvgPool2dKernel(const KernelArgs& args,
                                absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(Tensor input, CopyAs(args.tensor(0), DType::kFloat64));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(DType::kFloat64, shape));
  const Planes p = PlanesOf(input, shape);
  auto start = [](int64_t o, int64_t in, int64_t n) { return o * in / n; };
  auto end = [](int64_t o, int64_t in, int64_t n) {
    return ((o + 1) * in + n - 1) / n;
  };
  const double* in = input.data_as<double>();
  double* y = result.data_as<double>();
  for (int64_t plane = 0; plane < p.count; ++plane) {
    const double* x = in + plane * p.in_h * p.in_w;
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      const int64_t ih0 = start(oh, p.in_h, p.out_h);
      const int64_t ih1 = end(oh, p.in_h, p.out_h);
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        const int64_t iw0 = start(ow, p.in_w, p.out_w);
        const int64_t iw1 = end(ow, p.in_w, p.out_w);
        double sum = 0.0;
        for (int64_t ih = ih0; ih < ih1; ++ih) {
          for (int64_t iw = iw0; iw < iw1; ++iw) sum += x[ih * p.in_w + iw];
        }
        y[(plane * p.out_h + oh) * p.out_w + ow] =
            sum / static_cast<double>((ih1 - ih0) * (iw1 - iw0));
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor cast, CopyAs(result, out[0].dtype));
  return std::vector<Tensor>{cast};
}

}  // namespace

absl::Status RegisterPoolingKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.max_pool2d_with_indices.default",
                                    MaxPool2dWithIndicesKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.avg_pool2d.default", AvgPool2dKernel));
  RETURN_IF_ERROR(registry.Register("aten._adaptive_avg_pool2d.default",
                                    AdaptiveAvgPool2dKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
