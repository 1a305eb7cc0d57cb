// Reference kernels of upsample_nearest2d.vec and upsample_bilinear2d.vec
// over an (N, C, H, W) input of any strides, with ATen's source-index
// formulas (core/ops/pad_resample_args.h): nearest copies the element at
// NearestSourceIndex; bilinear computes, in the opmath type (float for
// float16/bfloat16/float32, double for float64),
//   (x[h0,w0]*ww0 + x[h0,w1]*ww1)*wh0 + (x[h1,w0]*ww0 + x[h1,w1]*ww1)*wh1
// in ATen's order. The shape rule checked the arguments and dtypes.

#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/pad_resample_args.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

absl::StatusOr<std::vector<Tensor>> UpsampleNearestKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(auto a, ReadUpsampleArgs(args, 2));
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  const int64_t in_h = self.size(2), in_w = self.size(3);
  const int64_t out_h = out.size(2), out_w = out.size(3);
  std::vector<int64_t> hs, ws;
  for (int64_t i = 0; i < out_h; ++i) {
    hs.push_back(
        self.stride(2) *
        NearestSourceIndex(i, in_h, out_h, UpsampleScale(a.scale_factors, 0)));
  }
  for (int64_t i = 0; i < out_w; ++i) {
    ws.push_back(
        self.stride(3) *
        NearestSourceIndex(i, in_w, out_w, UpsampleScale(a.scale_factors, 1)));
  }
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = self.data_as<T>();
    T* o = out.data_as<T>();
    for (int64_t n = 0; n < out.size(0); ++n) {
      for (int64_t c = 0; c < out.size(1); ++c) {
        const T* plane = in + n * self.stride(0) + c * self.stride(1);
        for (int64_t h = 0; h < out_h; ++h) {
          for (int64_t w = 0; w < out_w; ++w) *o++ = plane[hs[h] + ws[w]];
        }
      }
    }
  });
  return std::vector<Tensor>{out};
}

template <typename T>
void Bilinear(const Tensor& self, const Tensor& out, bool align_corners,
              std::optional<double> scale_h, std::optional<double> scale_w) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t in_h = self.size(2), in_w = self.size(3);
  const int64_t out_h = out.size(2), out_w = out.size(3);
  const A ratio_h = LinearScale<A>(in_h, out_h, align_corners, scale_h);
  const A ratio_w = LinearScale<A>(in_w, out_w, align_corners, scale_w);
  std::vector<LinearTap<A>> hs, ws;
  for (int64_t i = 0; i < out_h; ++i) {
    hs.push_back(LinearSource<A>(ratio_h, i, in_h, out_h, align_corners));
  }
  for (int64_t i = 0; i < out_w; ++i) {
    ws.push_back(LinearSource<A>(ratio_w, i, in_w, out_w, align_corners));
  }
  const T* in = self.data_as<T>();
  T* o = out.data_as<T>();
  const int64_t sh = self.stride(2), sw = self.stride(3);
  for (int64_t n = 0; n < out.size(0); ++n) {
    for (int64_t c = 0; c < out.size(1); ++c) {
      const T* plane = in + n * self.stride(0) + c * self.stride(1);
      for (const LinearTap<A>& h : hs) {
        for (const LinearTap<A>& w : ws) {
          auto x = [&](int64_t ih, int64_t iw) {
            return Convert<A>(plane[ih * sh + iw * sw]);
          };
          A t0 = x(h.i0, w.i0) * w.w0;
          t0 += x(h.i0, w.i1) * w.w1;
          A t1 = x(h.i1, w.i0) * w.w0;
          t1 += x(h.i1, w.i1) * w.w1;
          A v = t0 * h.w0;
          v += t1 * h.w1;
          *o++ = Convert<T>(v);
        }
      }
    }
  }
}

absl::StatusOr<std::vector<Tensor>> UpsampleBilinearKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(auto a, ReadUpsampleArgs(args, 3));
  const bool align_corners = args.bool_arg(2);
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  absl::Status status = absl::OkStatus();
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      Bilinear<T>(self, out, align_corners, UpsampleScale(a.scale_factors, 0),
                  UpsampleScale(a.scale_factors, 1));
    } else {
      status = absl::UnimplementedError(absl::StrCat(
          "argument 'input': upsample_bilinear2d is not implemented for ",
          DTypeName(self.dtype())));
    }
  });
  RETURN_IF_ERROR(status);
  return std::vector<Tensor>{out};
}

}  // namespace

absl::Status RegisterResampleKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(
      registry.Register("aten.upsample_nearest2d.vec", UpsampleNearestKernel));
  return registry.Register("aten.upsample_bilinear2d.vec",
                           UpsampleBilinearKernel);
}

}  // namespace guardjit
