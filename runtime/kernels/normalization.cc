// Reference kernels of _softmax, _log_softmax and native_layer_norm. They
// read the input as float64 rows (any strides, any floating dtype), compute
// in double and round once to the result dtype: at least as accurate as
// ATen's float opmath for float16/bfloat16/float32.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/reduction_util.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// Softmax of one row with the row's maximum subtracted first, so large
// inputs cannot overflow exp; log-softmax is x - max - log(sum(exp(x - max))).
// A row holding NaN or +inf, or only -inf, yields NaN, as in PyTorch.
template <bool kLog>
void SoftmaxRow(const double* x, double* y, int64_t n) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);
  if constexpr (kLog) {
    const double log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - max - log_sum;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - max) / sum;
  }
}

template <bool kLog>
Outputs SoftmaxKernel(const KernelArgs& args,
                      absl::Span<const TensorMeta> out) {
  const Tensor self = args.tensor(0);
  std::vector<bool> mask(self.dim(), false);
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), self.dim()));
  if (self.dim() > 0) mask[dim] = true;
  ASSIGN_OR_RETURN(ReductionRows rows,
                   ToReductionRows(self, mask, DType::kFloat64));
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(out[0].dtype, out[0].shape()));
  // Rows come out with the softmax dim last; write them through the same
  // permutation of the result.
  const Tensor target = MoveDimsLast(result, mask);
  ASSIGN_OR_RETURN(Tensor buffer,
                   Tensor::Empty(DType::kFloat64, target.sizes()));
  if (rows.inner > 0) {
    for (int64_t o = 0; o < rows.outer; ++o) {
      SoftmaxRow<kLog>(rows.row<double>(o).data(),
                       buffer.data_as<double>() + o * rows.inner, rows.inner);
    }
  }
  CopyInto(target, buffer);
  return std::vector<Tensor>{result};
}

// Layer norm over the trailing dims: per row, biased variance and
// rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * weight + bias. An
// empty row gives mean 0 and rstd NaN, as ATen's Welford RowwiseMoments does.
Outputs LayerNormKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out) {
  const Tensor input = args.tensor(0);
  int64_t n = 1;
  for (int64_t s : args.int_list(1)) n *= s;
  const double eps = args.float_arg(4);
  ASSIGN_OR_RETURN(Tensor x, CopyAs(input, DType::kFloat64));
  std::vector<double> params[2];  // weight, bias as float64, row-major
  for (int i = 0; i < 2; ++i) {
    if (std::optional<Tensor> p = args.optional_tensor(2 + i)) {
      ASSIGN_OR_RETURN(Tensor p64, CopyAs(*p, DType::kFloat64));
      params[i].assign(p64.data_as<double>(),
                       p64.data_as<double>() + p64.numel());
    }
  }
  const std::vector<double>& weight = params[0];
  const std::vector<double>& bias = params[1];
  ASSIGN_OR_RETURN(Tensor y, Tensor::Empty(DType::kFloat64, input.sizes()));
  ASSIGN_OR_RETURN(Tensor mean, Tensor::Empty(DType::kFloat64, out[1].shape()));
  ASSIGN_OR_RETURN(Tensor rstd, Tensor::Empty(DType::kFloat64, out[1].shape()));
  for (int64_t r = 0; r < mean.numel(); ++r) {
    double m = 0.0;
    double rs = std::numeric_limits<double>::quiet_NaN();
    if (n > 0) {
      const double* xr = x.data_as<double>() + r * n;
      double* yr = y.data_as<double>() + r * n;
      for (int64_t i = 0; i < n; ++i) m += xr[i];
      m /= static_cast<double>(n);
      double m2 = 0.0;
      for (int64_t i = 0; i < n; ++i) m2 += (xr[i] - m) * (xr[i] - m);
      rs = 1.0 / std::sqrt(m2 / static_cast<double>(n) + eps);
      for (int64_t i = 0; i < n; ++i) {
        double v = (xr[i] - m) * rs;
        if (!weight.empty()) v *= weight[i];
        if (!bias.empty()) v += bias[i];
        yr[i] = v;
      }
    }
    mean.data_as<double>()[r] = m;
    rstd.data_as<double>()[r] = rs;
  }
  std::vector<Tensor> results;
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(Tensor t, CopyAs(i == 0   ? y
                                      : i == 1 ? mean
                                               : rstd,
                                      out[i].dtype));
    results.push_back(t);
  }
  return results;
}

}  // namespace

absl::Status RegisterNormalizationKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten._softmax.default",
                                    SoftmaxKernel</*kLog=*/false>));
  RETURN_IF_ERROR(registry.Register("aten._log_softmax.default",
                                    SoftmaxKernel</*kLog=*/true>));
  RETURN_IF_ERROR(
      registry.Register("aten.native_layer_norm.default", LayerNormKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
