// Reference kernels of the reductions (sum, mean, prod, amax/amin,
// argmax/argmin, max.dim/min.dim, var, any/all). The input is first laid out as
// one contiguous row per output element (ToReductionRows), so every kernel is a
// loop over rows whatever the input's strides.
//
// Accumulation: floating sums, means, products and variances accumulate in
// double and round once to the result dtype. PyTorch's CPU float32 sum is a
// blocked cascade sum in float; a plain double sum is at least as accurate
// (about 1e-16 relative error per add, so 1e6 float32 terms stay well within
// 1e-6) without the blocking. Integral sums and products wrap like int64, as
// ATen's do.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "core/ops/reduction_args.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/pointwise_util.h"
#include "runtime/kernels/reduction_util.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// The accumulator of sums and products of T: double for floating types,
// int64 (wrapping, computed on uint64 to avoid signed overflow) otherwise.
template <typename T>
using Accumulator = std::conditional_t<kIsFloat<T>, double, int64_t>;

template <typename T>
Accumulator<T> Widen(T v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<double>(static_cast<OpMath<T>>(v));
  } else {
    return static_cast<int64_t>(v);
  }
}

template <typename T>
Accumulator<T> Sum(absl::Span<const T> row) {
  if constexpr (kIsFloat<T>) {
    double acc = 0.0;
    for (T v : row) acc += Widen(v);
    return acc;
  } else {
    uint64_t acc = 0;
    for (T v : row) acc += static_cast<uint64_t>(Widen(v));
    return static_cast<int64_t>(acc);
  }
}

template <typename T>
Accumulator<T> Product(absl::Span<const T> row) {
  if constexpr (kIsFloat<T>) {
    double acc = 1.0;
    for (T v : row) acc *= Widen(v);
    return acc;
  } else {
    uint64_t acc = 1;
    for (T v : row) acc *= static_cast<uint64_t>(Widen(v));
    return static_cast<int64_t>(acc);
  }
}

// Index of the first maximum (kMax) or minimum of a non-empty row. A NaN
// beats every number, so the first NaN wins, as in ATen's argmax/argmin; amax
// and amin reuse this to propagate NaN.
template <bool kMax, typename T>
int64_t ArgExtreme(absl::Span<const T> row) {
  using Compare = std::conditional_t<std::is_same_v<T, bool>, int, OpMath<T>>;
  int64_t best = 0;
  Compare best_value = static_cast<Compare>(row[0]);
  for (size_t i = 0; i < row.size(); ++i) {
    const Compare v = static_cast<Compare>(row[i]);
    if constexpr (kIsFloat<T>) {
      if (std::isnan(v)) return static_cast<int64_t>(i);
    }
    if (kMax ? v > best_value : v < best_value) {
      best = static_cast<int64_t>(i);
      best_value = v;
    }
  }
  return best;
}

// Sample variance with `correction`, two-pass (mean, then squared deviations)
// in double. The divisor max(0, N - correction) may be 0, which yields inf or
// NaN exactly as in PyTorch.
template <typename T>
double Variance(absl::Span<const T> row, double correction) {
  const double n = static_cast<double>(row.size());
  const double mean = Sum(row) / n;
  double m2 = 0.0;
  for (T v : row) {
    const double d = Widen(v) - mean;
    m2 += d * d;
  }
  return m2 / std::max(0.0, n - correction);
}

// Reduces every row with `reduce(row) -> Out` into a new tensor shaped like
// `out` (the output's row-major order is the rows' order; keepdim only adds
// size-1 dims), or into `dest` (KernelArgs::destination) when contiguous.
template <typename T, typename Out, typename F>
Outputs ReduceRows(const ReductionRows& rows, const TensorMeta& out,
                   const Tensor* dest, F reduce) {
  // Rows are written in row-major order: only a contiguous destination.
  ASSIGN_OR_RETURN(
      Tensor result,
      OutputFor(dest != nullptr && dest->is_contiguous() ? dest : nullptr,
                out));
  Out* dst = result.data_as<Out>();
  for (int64_t o = 0; o < rows.outer; ++o) dst[o] = reduce(rows.row<T>(o));
  return std::vector<Tensor>{result};
}

// Reads the node's dims and lays out its input as rows of `dtype`.
absl::StatusOr<ReductionRows> RowsOf(
    const KernelArgs& args, DType dtype,
    EmptyDims empty_dims = EmptyDims::kReduceAll) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(std::vector<bool> mask,
                   ReadReductionMask(args, self.dim(), empty_dims));
  return ToReductionRows(self, mask, dtype);
}

// sum, mean and prod convert the input to the result dtype first (that is
// what their `dtype` argument means), then accumulate.
enum class Accumulate { kSum, kMean, kProd };

template <Accumulate kOp>
Outputs AccumulateKernel(const KernelArgs& args,
                         absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, out[0].dtype));
  return VisitDType(out[0].dtype, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    return ReduceRows<T, T>(
        rows, out[0], args.destination(0), [](absl::Span<const T> row) {
          if constexpr (kOp == Accumulate::kProd) {
            return Convert<T>(Product(row));
          } else if constexpr (kOp == Accumulate::kMean) {
            // Only floating types reach here (the shape rule checks); an empty
            // row gives 0/0 = NaN, like torch.mean.
            return Convert<T>(static_cast<double>(Sum(row)) /
                              static_cast<double>(row.size()));
          } else {
            return Convert<T>(Sum(row));
          }
        });
  });
}

template <bool kMax>
Outputs ExtremeKernel(const KernelArgs& args,
                      absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, args.tensor(0).dtype()));
  if (rows.inner == 0 && rows.outer != 0) {
    return absl::InternalError(
        "reduction over an empty dim reached the kernel");
  }
  return VisitDType(out[0].dtype, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    return ReduceRows<T, T>(
        rows, out[0], args.destination(0),
        [](absl::Span<const T> row) { return row[ArgExtreme<kMax>(row)]; });
  });
}

template <bool kMax>
Outputs ArgExtremeKernel(const KernelArgs& args,
                         absl::Span<const TensorMeta> out) {
  const DType dtype = args.tensor(0).dtype();
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, dtype));
  if (rows.inner == 0 && rows.outer != 0) {
    return absl::InternalError(
        "reduction over an empty dim reached the kernel");
  }
  return VisitDType(dtype, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    return ReduceRows<T, int64_t>(
        rows, out[0], args.destination(0),
        [](absl::Span<const T> row) { return ArgExtreme<kMax>(row); });
  });
}

Outputs VarKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, out[0].dtype));
  const double correction =
      args.optional_scalar(2).value_or(Scalar(int64_t{1})).to_double();
  return VisitDType(out[0].dtype, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    return ReduceRows<T, T>(rows, out[0], args.destination(0),
                            [correction](absl::Span<const T> row) {
                              return Convert<T>(Variance(row, correction));
                            });
  });
}

// var.dim: `unbiased` is correction 1 (else 0).
Outputs VarDimKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, out[0].dtype));
  const double correction = args.bool_arg(2) ? 1.0 : 0.0;
  return VisitDType(out[0].dtype, [&](auto tag) -> Outputs {
    using T = typename decltype(tag)::type;
    return ReduceRows<T, T>(rows, out[0], args.destination(0),
                            [correction](absl::Span<const T> row) {
                              return Convert<T>(Variance(row, correction));
                            });
  });
}

// max.dim/min.dim -> (values, indices): the first extreme of each row (the
// first NaN, if any), as ATen's CPU kernels pick.
template <bool kMax>
Outputs MinMaxDimKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out) {
  const DType dtype = args.tensor(0).dtype();
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, dtype));
  if (rows.inner == 0 && rows.outer != 0) {
    return absl::InternalError(
        "reduction over an empty dim reached the kernel");
  }
  ASSIGN_OR_RETURN(Tensor values, Tensor::Empty(dtype, out[0].shape()));
  ASSIGN_OR_RETURN(Tensor indices,
                   Tensor::Empty(DType::kInt64, out[1].shape()));
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* v = values.data_as<T>();
    int64_t* ix = indices.data_as<int64_t>();
    for (int64_t o = 0; o < rows.outer; ++o) {
      absl::Span<const T> row = rows.row<T>(o);
      ix[o] = ArgExtreme<kMax>(row);
      v[o] = row[ix[o]];
    }
  });
  return std::vector<Tensor>{values, indices};
}

// any/all read every value as bool (NaN is true) and store the verdict as
// the result dtype (bool, or uint8 for uint8 input).
template <bool kAll>
Outputs AnyAll(const KernelArgs& args, absl::Span<const TensorMeta> out,
               EmptyDims empty_dims) {
  ASSIGN_OR_RETURN(ReductionRows rows, RowsOf(args, DType::kBool, empty_dims));
  return VisitDType(out[0].dtype, [&](auto tag) -> Outputs {
    using Out = typename decltype(tag)::type;
    return ReduceRows<bool, Out>(rows, out[0], args.destination(0),
                                 [](absl::Span<const bool> row) {
                                   for (bool v : row) {
                                     if (v != kAll) return Convert<Out>(!kAll);
                                   }
                                   return Convert<Out>(kAll);
                                 });
  });
}

template <bool kAll>
Outputs AnyAllKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  return AnyAll<kAll>(args, out, EmptyDims::kReduceAll);
}

template <bool kAll>
Outputs AnyAllDimsKernel(const KernelArgs& args,
                         absl::Span<const TensorMeta> out) {
  return AnyAll<kAll>(args, out, EmptyDims::kReduceNone);
}

}  // namespace

absl::Status RegisterReductionKernels(KernelRegistry& registry) {
  const struct {
    const char* target;
    KernelFn fn;
  } kKernels[] = {
      {"aten.sum.default", AccumulateKernel<Accumulate::kSum>},
      {"aten.sum.dim_IntList", AccumulateKernel<Accumulate::kSum>},
      {"aten.mean.default", AccumulateKernel<Accumulate::kMean>},
      {"aten.mean.dim", AccumulateKernel<Accumulate::kMean>},
      {"aten.prod.default", AccumulateKernel<Accumulate::kProd>},
      {"aten.prod.dim_int", AccumulateKernel<Accumulate::kProd>},
      {"aten.amax.default", ExtremeKernel</*kMax=*/true>},
      {"aten.amin.default", ExtremeKernel</*kMax=*/false>},
      {"aten.argmax.default", ArgExtremeKernel</*kMax=*/true>},
      {"aten.argmin.default", ArgExtremeKernel</*kMax=*/false>},
      {"aten.var.correction", VarKernel},
      {"aten.var.dim", VarDimKernel},
      {"aten.any.default", AnyAllKernel</*kAll=*/false>},
      {"aten.any.dim", AnyAllKernel</*kAll=*/false>},
      {"aten.any.dims", AnyAllDimsKernel</*kAll=*/false>},
      {"aten.all.default", AnyAllKernel</*kAll=*/true>},
      {"aten.all.dim", AnyAllKernel</*kAll=*/true>},
      {"aten.all.dims", AnyAllDimsKernel</*kAll=*/true>},
  };
  for (const auto& k : kKernels) {
    RETURN_IF_ERROR(registry.Register(k.target, k.fn));
    // Each fails only before ReduceRows writes.
    RETURN_IF_ERROR(registry.AllowDestinations({k.target}));
  }
  RETURN_IF_ERROR(
      registry.Register("aten.max.dim", MinMaxDimKernel</*kMax=*/true>));
  RETURN_IF_ERROR(
      registry.Register("aten.min.dim", MinMaxDimKernel</*kMax=*/false>));
  return absl::OkStatus();
}

}  // namespace guardjit
