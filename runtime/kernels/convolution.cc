// Reference convolution: im2col (or col2im when transposed) around the GEMM
// of gemm.h. The shape rule in core/ops/linalg.cc has checked every size and
// bounded every extent by 2^62, so the index arithmetic here cannot overflow.
//
// Everything is computed in float (float16, bfloat16, float32) or double and
// rounded to the output dtype once, as PyTorch's CPU kernels do.

#include "runtime/kernels/convolution.h"

#include <array>
#include <cstdint>
#include <type_traits>

#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernels/gemm.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Dims3 = std::array<int64_t, 3>;

// 1-D and 2-D convolutions are 3-D ones with leading spatial dims of size 1,
// so one loop nest serves all.
struct Geometry {
  Dims3 in = {1, 1, 1};
  Dims3 out = {1, 1, 1};
  Dims3 kernel = {1, 1, 1};
  Dims3 stride = {1, 1, 1};
  Dims3 padding = {0, 0, 0};
  Dims3 dilation = {1, 1, 1};
  Dims3 in_strides = {0, 0, 0};  // of the input tensor, in elements

  static int64_t Volume(const Dims3& d) { return d[0] * d[1] * d[2]; }
  int64_t in_volume() const { return Volume(in); }
  int64_t out_volume() const { return Volume(out); }
  int64_t kernel_volume() const { return Volume(kernel); }
};

Geometry MakeGeometry(const KernelArgs& args, const Tensor& input,
                      const Tensor& weight, IntSpan out_sizes) {
  const int spatial = input.dim() - 2;
  const std::vector<int64_t> stride = args.int_list(3);
  const std::vector<int64_t> padding = args.int_list(4);
  const std::vector<int64_t> dilation = args.int_list(5);
  // A one-value list applies to every spatial dim.
  auto pick = [](const std::vector<int64_t>& v, int i) {
    return v.size() == 1 ? v[0] : v[i];
  };
  Geometry g;
  for (int i = 0; i < spatial; ++i) {
    const int d = 3 - spatial + i;
    g.in[d] = input.size(2 + i);
    g.out[d] = out_sizes[2 + i];
    g.kernel[d] = weight.size(2 + i);
    g.stride[d] = pick(stride, i);
    g.padding[d] = pick(padding, i);
    g.dilation[d] = pick(dilation, i);
    g.in_strides[d] = input.stride(2 + i);
  }
  return g;
}

// Position in the (unpadded) image that output position `o` reads through
// kernel tap `k` along dim `d`, or -1 when it falls into the padding.
inline int64_t SourceIndex(const Geometry& g, int d, int64_t o, int64_t k) {
  const int64_t i = o * g.stride[d] - g.padding[d] + k * g.dilation[d];
  return i >= 0 && i < g.in[d] ? i : -1;
}

// cols[(c, k0, k1, k2), (o0, o1, o2)] = image[c, o * stride - padding + k *
// dilation], zero in the padding. `image` is strided; cols is row-major.
template <typename T, typename Acc>
void Im2Col(const T* image, int64_t channel_stride, int64_t channels,
            const Geometry& g, Acc* cols) {
  const Dims3& st = g.in_strides;
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = image + c * channel_stride;
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
            const int64_t i0 = SourceIndex(g, 0, o0, k0);
            for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
              const int64_t i1 = SourceIndex(g, 1, o1, k1);
              for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
                const int64_t i2 = SourceIndex(g, 2, o2, k2);
                *cols++ =
                    (i0 < 0 || i1 < 0 || i2 < 0)
                        ? Acc(0)
                        : Convert<Acc>(
                              plane[i0 * st[0] + i1 * st[1] + i2 * st[2]]);
              }
            }
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col for a transposed convolution: every column entry
// cols[(c, k), i] adds into out[c, i * stride - padding + k * dilation]. Here
// `g.in` is the transposed convolution's input and `g.out` its output.
template <typename Acc>
void Col2Im(const Acc* cols, int64_t channels, const Geometry& g, Acc* out) {
  const int64_t in_volume = g.in_volume(), out_volume = g.out_volume();
  auto target = [&](int d, int64_t i, int64_t k) {
    const int64_t o = i * g.stride[d] - g.padding[d] + k * g.dilation[d];
    return o >= 0 && o < g.out[d] ? o : -1;
  };
  for (int64_t c = 0; c < channels; ++c) {
    Acc* plane = out + c * out_volume;
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2, cols += in_volume) {
          for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
            const int64_t o0 = target(0, i0, k0);
            if (o0 < 0) continue;
            for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
              const int64_t o1 = target(1, i1, k1);
              if (o1 < 0) continue;
              const Acc* src = cols + (i0 * g.in[1] + i1) * g.in[2];
              Acc* dst = plane + (o0 * g.out[1] + o1) * g.out[2];
              for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
                const int64_t o2 = target(2, i2, k2);
                if (o2 >= 0) dst[o2] += src[i2];
              }
            }
          }
        }
      }
    }
  }
}

// A row-major [rows, cols] block of a contiguous tensor as a batch of one.
Tensor Block(const Tensor& t, int64_t offset, int64_t rows, int64_t cols) {
  return t.AsStrided({1, rows, cols}, {0, cols, 1}, offset);
}

// acc_out[n, g * out_channels + c] += weight_g @ im2col(input[n, g]).
// weight: contiguous [groups * out_channels, in_channels * kernel volume].
template <typename T, typename Acc>
absl::Status Forward(const Tensor& input, const Tensor& weight,
                     const Geometry& geo, int64_t groups,
                     const Tensor& acc_out) {
  const int64_t batch = input.size(0);
  const int64_t in_channels = input.size(1) / groups;
  const int64_t out_channels = acc_out.size(1) / groups;
  const int64_t rows = in_channels * geo.kernel_volume();
  const int64_t cols = geo.out_volume();
  ASSIGN_OR_RETURN(Tensor columns,
                   Tensor::Empty(acc_out.dtype(), {rows, cols}));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      Im2Col<T, Acc>(input.data_as<T>() + n * input.stride(0) +
                         g * in_channels * input.stride(1),
                     input.stride(1), in_channels, geo, columns.data_as<Acc>());
      RETURN_IF_ERROR(BatchedGemm(
          Block(weight, g * out_channels * rows, out_channels, rows),
          Block(columns, 0, rows, cols),
          Block(acc_out, (n * acc_out.size(1) + g * out_channels) * cols,
                out_channels, cols),
          Scalar(int64_t{1}), Scalar(int64_t{1})));
    }
  }
  return absl::OkStatus();
}

// acc_out[n, g * out_channels + c] += col2im(weight_g^T @ input[n, g]).
// weight: contiguous [groups * in_channels, out_channels * kernel volume];
// input: contiguous, of the accumulation dtype.
template <typename Acc>
absl::Status Transposed(const Tensor& input, const Tensor& weight,
                        const Geometry& geo, int64_t groups,
                        const Tensor& acc_out) {
  const int64_t batch = input.size(0);
  const int64_t in_channels = input.size(1) / groups;
  const int64_t out_channels = acc_out.size(1) / groups;
  const int64_t rows = out_channels * geo.kernel_volume();
  const int64_t cols = geo.in_volume();
  ASSIGN_OR_RETURN(Tensor columns,
                   Tensor::Empty(acc_out.dtype(), {rows, cols}));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      // weight_g^T: the [in_channels, rows] block read column by column.
      Tensor weight_t = weight.AsStrided({1, rows, in_channels}, {0, 1, rows},
                                         g * in_channels * rows);
      RETURN_IF_ERROR(
          BatchedGemm(weight_t,
                      Block(input, (n * input.size(1) + g * in_channels) * cols,
                            in_channels, cols),
                      Block(columns, 0, rows, cols), Scalar(int64_t{1}),
                      Scalar(int64_t{0})));
      Col2Im<Acc>(
          columns.data_as<Acc>(), out_channels, geo,
          acc_out.data_as<Acc>() +
              (n * acc_out.size(1) + g * out_channels) * geo.out_volume());
    }
  }
  return absl::OkStatus();
}

// bias [C] viewed as [C, 1, ..., 1] so it broadcasts over [N, C, spatial...].
Tensor ChannelView(const Tensor& bias, int rank) {
  Shape sizes(rank - 1, 1), strides(rank - 1, 0);
  sizes[0] = bias.size(0);
  strides[0] = bias.stride(0);
  return bias.AsStrided(sizes, strides);
}

absl::StatusOr<std::vector<Tensor>> ConvolutionKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const Tensor input = args.tensor(0), weight = args.tensor(1);
  const std::optional<Tensor> bias = args.optional_tensor(2);
  const bool transposed = args.bool_arg(6);
  const int64_t groups = args.int_arg(8);
  const DType out_dtype = out[0].dtype;
  const DType acc_dtype =
      out_dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;

  ASSIGN_OR_RETURN(Tensor acc_out, Tensor::Zeros(acc_dtype, out[0].shape()));
  if (acc_out.numel() > 0) {
    if (bias.has_value()) CopyInto(acc_out, ChannelView(*bias, acc_out.dim()));
    const Geometry geo = MakeGeometry(args, input, weight, out[0].shape());
    ASSIGN_OR_RETURN(Tensor w, CastIfNeeded(weight, acc_dtype));
    ASSIGN_OR_RETURN(w, Contiguous(w));
    absl::Status status = VisitDType(out_dtype, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsFloat<T>) {
        return absl::InternalError("convolution of a non-floating dtype");
      } else {
        using Acc =
            std::conditional_t<std::is_same_v<T, double>, double, float>;
        if (!transposed) return Forward<T, Acc>(input, w, geo, groups, acc_out);
        ASSIGN_OR_RETURN(Tensor x, CastIfNeeded(input, acc_dtype));
        ASSIGN_OR_RETURN(x, Contiguous(x));
        return Transposed<Acc>(x, w, geo, groups, acc_out);
      }
    });
    RETURN_IF_ERROR(status);
  }
  if (out_dtype == acc_dtype) return std::vector<Tensor>{acc_out};
  ASSIGN_OR_RETURN(Tensor result, CopyAs(acc_out, out_dtype));
  return std::vector<Tensor>{result};
}

}  // namespace

absl::Status RegisterConvolutionKernels(KernelRegistry& registry) {
  return registry.Register("aten.convolution.default", ConvolutionKernel);
}

}  // namespace guardjit
