// Reference kernels of _softmax, _log_softmax, native_layer_norm and the
// _native_batch_norm_legit family. They
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

// A parameter (C elements) as float64, or empty when absent.
absl::StatusOr<std::vector<double>> Doubles(const std::optional<Tensor>& t) {
  if (!t.has_value()) return std::vector<double>{};
  ASSIGN_OR_RETURN(Tensor t64, CopyAs(*t, DType::kFloat64));
  return std::vector<double>(t64.data_as<double>(),
                             t64.data_as<double>() + t64.numel());
}

// Batch norm over (N, C, *): per channel c, out = x * alpha + beta with
// alpha = weight / sqrt(var + eps) and beta = bias - mean * alpha, as ATen's
// CPU kernel folds it. Evaluation reads running_mean/running_var and returns
// empty save_mean/save_invstd; training uses the batch's mean and biased
// variance and returns them (invstd = 1 / sqrt(var + eps); an empty channel
// gives NaN). `running_mean` < 0: no running stats (the no_stats overload).
Outputs BatchNormKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out, int running_mean,
                        int training_at, int eps_at) {
  const Tensor input = args.tensor(0);
  const bool training = training_at >= 0 && args.bool_arg(training_at);
  if (training && running_mean >= 0) {
    return absl::UnimplementedError(
        "argument 'training': updating running_mean/running_var in place is "
        "not supported (guardjit graphs are functional); export the model in "
        "eval mode");
  }
  const double eps = args.float_arg(eps_at);
  const int64_t channels = input.sizes()[1];
  const int64_t batch = input.sizes()[0];
  const int64_t inner =
      channels == 0 || batch == 0 ? 0 : input.numel() / (batch * channels);
  ASSIGN_OR_RETURN(Tensor x, CopyAs(input, DType::kFloat64));
  const double* xd = x.data_as<double>();
  ASSIGN_OR_RETURN(std::vector<double> weight,
                   Doubles(args.optional_tensor(1)));
  ASSIGN_OR_RETURN(std::vector<double> bias, Doubles(args.optional_tensor(2)));
  std::vector<double> mean(channels), invstd(channels);
  if (training) {
    const double count = static_cast<double>(batch * inner);
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0, m2 = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        const double* row = xd + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) sum += row[i];
      }
      mean[c] = sum / count;
      for (int64_t n = 0; n < batch; ++n) {
        const double* row = xd + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          m2 += (row[i] - mean[c]) * (row[i] - mean[c]);
        }
      }
      invstd[c] = 1.0 / std::sqrt(m2 / count + eps);
    }
  } else {
    ASSIGN_OR_RETURN(mean, Doubles(args.tensor(running_mean)));
    ASSIGN_OR_RETURN(std::vector<double> var,
                     Doubles(args.tensor(running_mean + 1)));
    for (int64_t c = 0; c < channels; ++c) {
      invstd[c] = 1.0 / std::sqrt(var[c] + eps);
    }
  }
  ASSIGN_OR_RETURN(Tensor y, Tensor::Empty(DType::kFloat64, input.sizes()));
  double* yd = y.data_as<double>();
  for (int64_t c = 0; c < channels; ++c) {
    const double alpha = invstd[c] * (weight.empty() ? 1.0 : weight[c]);
    const double beta = (bias.empty() ? 0.0 : bias[c]) - mean[c] * alpha;
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t start = (n * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        yd[start + i] = xd[start + i] * alpha + beta;
      }
    }
  }
  std::vector<Tensor> results;
  ASSIGN_OR_RETURN(Tensor result, CopyAs(y, out[0].dtype));
  results.push_back(result);
  for (const std::vector<double>* stats : {&mean, &invstd}) {
    ASSIGN_OR_RETURN(Tensor s, Tensor::Empty(DType::kFloat64, out[1].shape()));
    std::copy_n(stats->data(), s.numel(), s.data_as<double>());
    ASSIGN_OR_RETURN(Tensor cast, CopyAs(s, out[1].dtype));
    results.push_back(cast);
  }
  return results;
}

// Group norm over (N, C, HxW) in float64: per (n, group), the mean and
// biased variance of its C / group * HxW values, rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd * weight[c] + bias[c]. An empty group gives mean 0
// and rstd NaN as layer norm's does.
Outputs GroupNormKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out) {
  const Tensor input = args.tensor(0);
  const int64_t n = args.int_arg(3);
  const int64_t c = args.int_arg(4);
  const int64_t hxw = args.int_arg(5);
  const int64_t group = args.int_arg(6);
  const double eps = args.float_arg(7);
  ASSIGN_OR_RETURN(Tensor x, CopyAs(input, DType::kFloat64));
  ASSIGN_OR_RETURN(std::vector<double> weight,
                   Doubles(args.optional_tensor(1)));
  ASSIGN_OR_RETURN(std::vector<double> bias, Doubles(args.optional_tensor(2)));
  ASSIGN_OR_RETURN(Tensor y, Tensor::Empty(DType::kFloat64, input.sizes()));
  ASSIGN_OR_RETURN(Tensor mean, Tensor::Empty(DType::kFloat64, {n, group}));
  ASSIGN_OR_RETURN(Tensor rstd, Tensor::Empty(DType::kFloat64, {n, group}));
  const int64_t per_group = c / group;
  const int64_t count = per_group * hxw;
  for (int64_t r = 0; r < n * group; ++r) {
    const double* xr = x.data_as<double>() + r * count;
    double* yr = y.data_as<double>() + r * count;
    double m = 0.0;
    double rs = std::numeric_limits<double>::quiet_NaN();
    if (count > 0) {
      for (int64_t i = 0; i < count; ++i) m += xr[i];
      m /= static_cast<double>(count);
      double m2 = 0.0;
      for (int64_t i = 0; i < count; ++i) m2 += (xr[i] - m) * (xr[i] - m);
      rs = 1.0 / std::sqrt(m2 / static_cast<double>(count) + eps);
      const int64_t first_channel = (r % group) * per_group;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t ch = first_channel + i / std::max<int64_t>(hxw, 1);
        double v = (xr[i] - m) * rs;
        if (!weight.empty()) v *= weight[ch];
        if (!bias.empty()) v += bias[ch];
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
  RETURN_IF_ERROR(
      registry.Register("aten.native_group_norm.default", GroupNormKernel));
  RETURN_IF_ERROR(registry.Register(
      "aten._native_batch_norm_legit_no_training.default",
      [](const KernelArgs& args, absl::Span<const TensorMeta> out) {
        return BatchNormKernel(args, out, 3, -1, 6);
      }));
  RETURN_IF_ERROR(registry.Register(
      "aten._native_batch_norm_legit.default",
      [](const KernelArgs& args, absl::Span<const TensorMeta> out) {
        return BatchNormKernel(args, out, 3, 5, 7);
      }));
  RETURN_IF_ERROR(registry.Register(
      "aten._native_batch_norm_legit.no_stats",
      [](const KernelArgs& args, absl::Span<const TensorMeta> out) {
        return BatchNormKernel(args, out, -1, 3, 5);
      }));
  RETURN_IF_ERROR(registry.Register("aten._softmax.default",
                                    SoftmaxKernel</*kLog=*/false>));
  RETURN_IF_ERROR(registry.Register("aten._log_softmax.default",
                                    SoftmaxKernel</*kLog=*/true>));
  RETURN_IF_ERROR(
      registry.Register("aten.native_layer_norm.default", LayerNormKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
