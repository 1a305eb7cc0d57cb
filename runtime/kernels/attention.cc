// The reference kernel of aten.scaled_dot_product_attention (shape rules in
// core/ops/attention.cc), as PyTorch's math path computes it: scores =
// scale * q @ k^T (scale 1/sqrt(E) unless given), plus the mask (a float
// mask is added; a bool mask and is_causal put -inf where a key may not be
// attended: causal keeps key j <= query i), a safe softmax over the keys (a
// row whose every score is -inf gives zeros, not NaN, as torch's
// _safe_softmax), times v. Computed in double from any floating dtype and
// rounded once; the operands may have any strides.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// `t` as float64, contiguous, its leading dims flattened: [N, rows, cols].
absl::StatusOr<Tensor> AsBatchOfMatrices(const Tensor& t) {
  ASSIGN_OR_RETURN(Tensor d, CopyAs(t, DType::kFloat64));
  int64_t n = 1;
  for (int i = 0; i + 2 < t.dim(); ++i) n *= t.size(i);
  const int64_t rows = t.size(t.dim() - 2), cols = t.size(t.dim() - 1);
  const int64_t shape[] = {n, rows, cols};
  const int64_t strides[] = {rows * cols, cols, 1};
  return d.AsStrided(shape, strides);
}

Outputs ScaledDotProductAttentionKernel(const KernelArgs& args,
                                        absl::Span<const TensorMeta> out) {
  const Tensor query = args.tensor(0);
  ASSIGN_OR_RETURN(const Tensor q, AsBatchOfMatrices(query));
  ASSIGN_OR_RETURN(const Tensor k, AsBatchOfMatrices(args.tensor(1)));
  ASSIGN_OR_RETURN(const Tensor v, AsBatchOfMatrices(args.tensor(2)));
  const int64_t n = q.size(0), l = q.size(1), e = q.size(2);
  const int64_t s = k.size(1), ev = v.size(2);
  const bool causal = args.bool_arg(5);
  const double scale =
      args.optional_float(6).value_or(1.0 / std::sqrt(static_cast<double>(e)));
  // The mask broadcast to the scores' shape [N..., L, S]: -inf where a key
  // may not be attended, else what is added.
  std::vector<double> bias;
  if (const std::optional<Tensor> mask = args.optional_tensor(3)) {
    Shape scores(query.sizes().begin(), query.sizes().end() - 1);
    scores.push_back(s);
    const bool is_bool = mask->dtype() == DType::kBool;
    ASSIGN_OR_RETURN(
        Tensor full,
        Tensor::Empty(is_bool ? DType::kBool : DType::kFloat64, scores));
    CopyInto(full, *mask);
    bias.resize(n * l * s);
    for (int64_t i = 0; i < n * l * s; ++i) {
      bias[i] = is_bool ? (full.data_as<bool>()[i]
                               ? 0.0
                               : -std::numeric_limits<double>::infinity())
                        : full.data_as<double>()[i];
    }
  }
  ASSIGN_OR_RETURN(Tensor result_d, Tensor::Empty(DType::kFloat64, {n, l, ev}));
  double* o = result_d.data_as<double>();
  const double* qd = q.data_as<double>();
  const double* kd = k.data_as<double>();
  const double* vd = v.data_as<double>();
  std::vector<double> row(s);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < l; ++i) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c) {
          dot += qd[(b * l + i) * e + c] * kd[(b * s + j) * e + c];
        }
        double x = scale * dot;
        if (!bias.empty()) x += bias[(b * l + i) * s + j];
        if (causal && j > i) x = -std::numeric_limits<double>::infinity();
        row[j] = x;
        max = std::isnan(x) || std::isnan(max) ? NAN : std::max(max, x);
      }
      double* out_row = o + (b * l + i) * ev;
      std::fill(out_row, out_row + ev, 0.0);
      if (max == -std::numeric_limits<double>::infinity()) continue;
      double sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += row[j] = std::exp(row[j] - max);
      for (int64_t j = 0; j < s; ++j) {
        const double p = row[j] / sum;
        for (int64_t c = 0; c < ev; ++c)
          out_row[c] += p * vd[(b * s + j) * ev + c];
      }
    }
  }
  const Tensor* dest = args.destination(0);
  Tensor result;
  if (dest != nullptr) {
    result = *dest;
  } else {
    ASSIGN_OR_RETURN(result, Tensor::Empty(out[0].dtype, out[0].shape()));
  }
  const Shape flat(result.sizes().begin(), result.sizes().end());
  CopyInto(result, result_d.AsStrided(flat, ContiguousStrides(flat)));
  return std::vector<Tensor>{result};
}

}  // namespace

absl::Status RegisterAttentionKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.scaled_dot_product_attention.default",
                                    ScaledDotProductAttentionKernel));
  return registry.AllowDestinations(
      {"aten.scaled_dot_product_attention.default"});
}

}  // namespace guardjit
