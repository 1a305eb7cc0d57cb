// Reference kernels of the pooling ops over N = 2 or 3 spatial dims, as
// ATen's CPU kernels (cpu_max_pool, cpu_avg_pool, cpu_adaptive_avg_pool and
// their 3-D forms) compute them: one implementation over (D, H, W) volumes
// at a time over the leading dims, a 2-D pool pooling (1, H, W) volumes with
// a unit window in front (PoolWindow::Full).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/pool_args.h"
#include "core/status_macros.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// Volumes (the product of the leading dims) and the (D, H, W) sizes of an
// input and an output of equal rank, pooled over their last `rank` dims
// (leading unit sizes for rank 2).
struct Volumes {
  int64_t count = 1;
  int64_t in[3];
  int64_t out[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

Volumes VolumesOf(const Tensor& input, const Shape& out, int rank) {
  Volumes v;
  const int first = input.dim() - rank;
  const int lead = 3 - rank;
  for (int d = 0; d < first; ++d) v.count *= input.sizes()[d];
  for (int d = 0; d < 3; ++d) {
    v.in[d] = d < lead ? 1 : input.sizes()[first + d - lead];
    v.out[d] = d < lead ? 1 : out[first + d - lead];
  }
  return v;
}

// Each window's maximum and its flat index in the volume ((id * H + ih) * W
// + iw; ih * W + iw for a 2-D pool). Out-of-input taps are skipped (padding is
// -inf); a NaN always wins (the last NaN of a window is its result); a window
// with no value above the lowest keeps its first in-input tap's index.
template <typename T>
void MaxPoolVolumes(const T* in, T* out, int64_t* indices, const Volumes& v,
                    const PoolWindow& w) {
  using M = OpMath<T>;
  for (int64_t vol = 0; vol < v.count; ++vol) {
    const T* x = in + vol * v.in_size();
    int64_t o = vol * v.out_size();
    for (int64_t od = 0; od < v.out[0]; ++od) {
      for (int64_t oh = 0; oh < v.out[1]; ++oh) {
        for (int64_t ow = 0; ow < v.out[2]; ++ow, ++o) {
          const int64_t pos[3] = {od, oh, ow};
          int64_t lo[3], hi[3];
          for (int d = 0; d < 3; ++d) {
            lo[d] = pos[d] * w.stride[d] - w.padding[d];
            hi[d] = std::min(lo[d] + (w.kernel[d] - 1) * w.dilation[d] + 1,
                             v.in[d]);
            while (lo[d] < 0) lo[d] += w.dilation[d];
          }
          int64_t best_index = (lo[0] * v.in[1] + lo[1]) * v.in[2] + lo[2];
          M best;
          if constexpr (std::is_floating_point_v<M>) {
            best = -std::numeric_limits<M>::infinity();
          } else {
            best = std::numeric_limits<M>::lowest();
          }
          for (int64_t id = lo[0]; id < hi[0]; id += w.dilation[0]) {
            for (int64_t ih = lo[1]; ih < hi[1]; ih += w.dilation[1]) {
              for (int64_t iw = lo[2]; iw < hi[2]; iw += w.dilation[2]) {
                const int64_t index = (id * v.in[1] + ih) * v.in[2] + iw;
                const M value = static_cast<M>(x[index]);
                bool nan = false;
                if constexpr (std::is_floating_point_v<M>) {
                  nan = std::isnan(value);
                }
                if (value > best || nan) {
                  best = value;
                  best_index = index;
                }
              }
            }
          }
          out[o] = static_cast<T>(best);
          indices[o] = best_index;
        }
      }
    }
  }
}

Outputs MaxPoolWithIndicesKernel(const KernelArgs& args,
                                 absl::Span<const TensorMeta> out, int rank) {
  ASSIGN_OR_RETURN(
      PoolWindow window,
      ReadPoolWindow(args, rank, absl::StrCat("max_pool", rank, "d"), 4, 5));
  const PoolWindow w = window.Full();
  ASSIGN_OR_RETURN(Tensor input, Contiguous(args.tensor(0)));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor values, Tensor::Empty(out[0].dtype, shape));
  ASSIGN_OR_RETURN(Tensor indices, Tensor::Empty(DType::kInt64, shape));
  const Volumes v = VolumesOf(input, shape, rank);
  VisitDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      MaxPoolVolumes<T>(input.data_as<T>(), values.data_as<T>(),
                        indices.data_as<int64_t>(), v, w);
    }
  });
  return std::vector<Tensor>{values, indices};
}

// Window sums in double (int64 in int64) over the taps inside the input,
// divided by divisor_override, or by the window's extent clipped to the
// padded input (count_include_pad) or to the input itself. A window
// entirely in the padding gives 0.
Outputs AvgPoolKernel(const KernelArgs& args, absl::Span<const TensorMeta> out,
                      int rank) {
  ASSIGN_OR_RETURN(
      PoolWindow window,
      ReadPoolWindow(args, rank, absl::StrCat("avg_pool", rank, "d"), -1, 4));
  const PoolWindow w = window.Full();
  const bool count_include_pad = args.bool_arg(5);
  const std::optional<int64_t> divisor_override = args.optional_int(6);
  const Tensor self = args.tensor(0);
  const bool integral = self.dtype() == DType::kInt64;
  const DType compute = integral ? DType::kInt64 : DType::kFloat64;
  ASSIGN_OR_RETURN(Tensor input, CopyAs(self, compute));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(compute, shape));
  const Volumes v = VolumesOf(input, shape, rank);
  VisitDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, int64_t>) {
      const T* in = input.data_as<T>();
      T* y = result.data_as<T>();
      for (int64_t vol = 0; vol < v.count; ++vol) {
        const T* x = in + vol * v.in_size();
        int64_t o = vol * v.out_size();
        for (int64_t od = 0; od < v.out[0]; ++od) {
          for (int64_t oh = 0; oh < v.out[1]; ++oh) {
            for (int64_t ow = 0; ow < v.out[2]; ++ow, ++o) {
              const int64_t pos[3] = {od, oh, ow};
              int64_t lo[3], hi[3];
              int64_t pool_size = 1, inside = 1;
              bool empty = false;
              for (int d = 0; d < 3; ++d) {
                lo[d] = pos[d] * w.stride[d] - w.padding[d];
                hi[d] = std::min(lo[d] + w.kernel[d], v.in[d] + w.padding[d]);
                pool_size *= hi[d] - lo[d];
                lo[d] = std::max<int64_t>(lo[d], 0);
                hi[d] = std::min(hi[d], v.in[d]);
                empty = empty || lo[d] >= hi[d];
                inside *= hi[d] - lo[d];
              }
              if (empty) {
                y[o] = T(0);
                continue;
              }
              T sum = T(0);
              for (int64_t id = lo[0]; id < hi[0]; ++id) {
                for (int64_t ih = lo[1]; ih < hi[1]; ++ih) {
                  for (int64_t iw = lo[2]; iw < hi[2]; ++iw) {
                    sum += x[(id * v.in[1] + ih) * v.in[2] + iw];
                  }
                }
              }
              const int64_t divisor = divisor_override.has_value()
                                          ? *divisor_override
                                      : count_include_pad ? pool_size
                                                          : inside;
              y[o] = sum / static_cast<T>(divisor);
            }
          }
        }
      }
    }
  });
  ASSIGN_OR_RETURN(Tensor cast, CopyAs(result, out[0].dtype));
  return std::vector<Tensor>{cast};
}

// Output cell (od, oh, ow) averages input slices [floor(o * I / O),
// ceil((o + 1) * I / O)) along each of D, H and W.
Outputs AdaptiveAvgPoolKernel(const KernelArgs& args,
                              absl::Span<const TensorMeta> out, int rank) {
  ASSIGN_OR_RETURN(Tensor input, CopyAs(args.tensor(0), DType::kFloat64));
  const Shape shape = out[0].shape();
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(DType::kFloat64, shape));
  const Volumes v = VolumesOf(input, shape, rank);
  const double* in = input.data_as<double>();
  double* y = result.data_as<double>();
  for (int64_t vol = 0; vol < v.count; ++vol) {
    const double* x = in + vol * v.in_size();
    int64_t o = vol * v.out_size();
    for (int64_t od = 0; od < v.out[0]; ++od) {
      for (int64_t oh = 0; oh < v.out[1]; ++oh) {
        for (int64_t ow = 0; ow < v.out[2]; ++ow, ++o) {
          const int64_t pos[3] = {od, oh, ow};
          int64_t lo[3], hi[3];
          for (int d = 0; d < 3; ++d) {
            lo[d] = pos[d] * v.in[d] / v.out[d];
            hi[d] = ((pos[d] + 1) * v.in[d] + v.out[d] - 1) / v.out[d];
          }
          double sum = 0.0;
          for (int64_t id = lo[0]; id < hi[0]; ++id) {
            for (int64_t ih = lo[1]; ih < hi[1]; ++ih) {
              for (int64_t iw = lo[2]; iw < hi[2]; ++iw) {
                sum += x[(id * v.in[1] + ih) * v.in[2] + iw];
              }
            }
          }
          y[o] = sum / static_cast<double>((hi[0] - lo[0]) * (hi[1] - lo[1]) *
                                           (hi[2] - lo[2]));
        }
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor cast, CopyAs(result, out[0].dtype));
  return std::vector<Tensor>{cast};
}

}  // namespace

absl::Status RegisterPoolingKernels(KernelRegistry& registry) {
  for (const int rank : {2, 3}) {
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("aten.max_pool", rank, "d_with_indices.default"),
        [rank](const KernelArgs& args, absl::Span<const TensorMeta> out) {
          return MaxPoolWithIndicesKernel(args, out, rank);
        }));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("aten.avg_pool", rank, "d.default"),
        [rank](const KernelArgs& args, absl::Span<const TensorMeta> out) {
          return AvgPoolKernel(args, out, rank);
        }));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("aten._adaptive_avg_pool", rank, "d.default"),
        [rank](const KernelArgs& args, absl::Span<const TensorMeta> out) {
          return AdaptiveAvgPoolKernel(args, out, rank);
        }));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
