// Reference kernels of scatter.src/.value, scatter_add, scatter_reduce.two
// and index_put. Each copies `self` into a new contiguous result and
// updates it in place, walking the index in row-major order (so for
// scatter/index_put without accumulation the last write to an element wins,
// as in ATen's serial CPU loops). Every index is range-checked before the
// first update: a bad index is an error naming the argument and the value.
//
// Reductions combine in the element type, one update at a time as ATen's
// CPU scatter_reduce does (float16/bfloat16 round after each update); mean
// divides the sum by the number of contributions (self included with
// include_self), flooring for integral types.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/advanced_index.h"
#include "runtime/kernels/pointwise_util.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

enum class Reduce { kNone, kSum, kProd, kMean, kMax, kMin };

absl::StatusOr<Reduce> ParseReduce(absl::string_view name) {
  if (name == "sum") return Reduce::kSum;
  if (name == "prod") return Reduce::kProd;
  if (name == "mean") return Reduce::kMean;
  if (name == "amax") return Reduce::kMax;
  if (name == "amin") return Reduce::kMin;
  return absl::InvalidArgumentError(
      absl::StrCat("argument 'reduce': reduce argument must be either sum, "
                   "prod, mean, amax or amin, got ",
                   name));
}

// a (op) b in T, NaN propagating through amax/amin.
template <typename T>
T Combine(Reduce op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Reduce::kProd || op == Reduce::kMin) return a && b;
    if (op == Reduce::kNone) return b;
    return a || b;
  } else {
    using M = OpMath<T>;
    const M x = static_cast<M>(a);
    const M y = static_cast<M>(b);
    switch (op) {
      case Reduce::kNone:
        return b;
      case Reduce::kSum:
      case Reduce::kMean:
        if constexpr (kIsFloat<T>) {
          return Convert<T>(x + y);
        } else {
          return Convert<T>(static_cast<int64_t>(static_cast<uint64_t>(x) +
                                                 static_cast<uint64_t>(y)));
        }
      case Reduce::kProd:
        if constexpr (kIsFloat<T>) {
          return Convert<T>(x * y);
        } else {
          return Convert<T>(static_cast<int64_t>(static_cast<uint64_t>(x) *
                                                 static_cast<uint64_t>(y)));
        }
      case Reduce::kMax:
      case Reduce::kMin:
        if constexpr (kIsFloat<T>) {
          if (std::isnan(x)) return a;
          if (std::isnan(y)) return b;
        }
        return (op == Reduce::kMax ? y > x : y < x) ? b : a;
    }
    return b;
  }
}

// sum / count: true division for floating types, floor division otherwise.
template <typename T>
T MeanOf(T sum, int64_t count) {
  if constexpr (std::is_same_v<T, bool>) {
    return sum;
  } else if constexpr (kIsFloat<T>) {
    return Convert<T>(static_cast<OpMath<T>>(sum) /
                      static_cast<OpMath<T>>(count));
  } else {
    const int64_t s = static_cast<int64_t>(sum);
    int64_t q = s / count;
    if ((s % count != 0) && ((s < 0) != (count < 0))) --q;
    return Convert<T>(q);
  }
}

// One scatter update: out[dst] (op)= source(n), for the n-th index element.
struct ScatterPlan {
  std::vector<int64_t> dst;  // offset in the contiguous result
  std::vector<int64_t> src;  // offset in src (unused for a value)
};

// Offsets of scatter along `dim`: index element p updates out at p with
// p[dim] replaced by index[p], reading src at p.
absl::StatusOr<ScatterPlan> PlanScatter(const Tensor& out, int64_t raw_dim,
                                        const Tensor& index,
                                        const Tensor* src) {
  ScatterPlan plan;
  if (index.numel() == 0) return plan;
  const int rank = std::max(out.dim(), 1);
  ASSIGN_OR_RETURN(int dim, NormalizeDim(raw_dim, out.dim()));
  if (out.dim() == 0) dim = 0;
  auto as_rank = [rank](const Tensor& t) {
    return t.dim() == 0 ? t.AsStrided(Shape(rank, 1), Shape(rank, 0)) : t;
  };
  const Tensor o = as_rank(out);
  const Tensor idx_view = as_rank(index);
  ASSIGN_OR_RETURN(Tensor idx_cast, CastIfNeeded(idx_view, DType::kInt64));
  ASSIGN_OR_RETURN(Tensor idx, Contiguous(idx_cast));
  const int64_t* values = idx.data_as<int64_t>();
  const int64_t size = o.size(dim);
  const int64_t n_total = idx.numel();
  for (int64_t n = 0; n < n_total; ++n) {
    if (values[n] < 0 || values[n] >= size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument 'index': index ", values[n],
          " is out of bounds for dimension ", dim, " with size ", size));
    }
  }
  std::optional<Tensor> s;
  if (src != nullptr) s = as_rank(*src);
  plan.dst.resize(n_total);
  if (s.has_value()) plan.src.resize(n_total);
  Shape pos(rank, 0);
  for (int64_t n = 0; n < n_total; ++n) {
    int64_t d_off = 0;
    int64_t s_off = 0;
    for (int d = 0; d < rank; ++d) {
      d_off += (d == dim ? values[n] : pos[d]) * o.stride(d);
      if (s.has_value()) s_off += pos[d] * s->stride(d);
    }
    plan.dst[n] = d_off;
    if (s.has_value()) plan.src[n] = s_off;
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < idx.size(d)) break;
      pos[d] = 0;
    }
  }
  return plan;
}

// Applies `op` at every planned update: out[dst[n]] = op(out[dst[n]],
// value(n)); with !include_self an element's first update replaces it.
template <typename T, typename ValueFn>
void ApplyUpdates(T* out, int64_t out_numel, const std::vector<int64_t>& dst,
                  Reduce op, bool include_self, ValueFn value) {
  if (op == Reduce::kNone) {
    for (size_t n = 0; n < dst.size(); ++n) out[dst[n]] = value(n);
    return;
  }
  std::vector<int64_t> count(
      op == Reduce::kMean || !include_self ? out_numel : 0,
      include_self ? 1 : 0);
  for (size_t n = 0; n < dst.size(); ++n) {
    T& slot = out[dst[n]];
    if (!include_self && count[dst[n]] == 0) {
      slot = value(n);
    } else {
      slot = Combine(op, slot, value(n));
    }
    if (!count.empty()) ++count[dst[n]];
  }
  if (op == Reduce::kMean) {
    for (int64_t i = 0; i < out_numel; ++i) {
      if (count[i] > 0) out[i] = MeanOf(out[i], count[i]);
    }
  }
}

// A new contiguous copy of self: the result the kernels update.
absl::StatusOr<Tensor> FreshCopy(const Tensor& self) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(self.dtype(), self.sizes()));
  CopyInto(out, self);
  return out;
}

Outputs ScatterWith(const KernelArgs& args, Reduce op, bool include_self,
                    bool has_src) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(Tensor out, FreshCopy(self));
  std::optional<Tensor> src;
  if (has_src) src = args.tensor(3);
  ASSIGN_OR_RETURN(ScatterPlan plan,
                   PlanScatter(out, args.int_arg(1), args.tensor(2),
                               src.has_value() ? &*src : nullptr));
  RETURN_IF_ERROR(VisitDType(out.dtype(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    T* o = out.data_as<T>();
    if (src.has_value()) {
      const T* s = src->data_as<const T>();
      ApplyUpdates<T>(o, out.numel(), plan.dst, op, include_self,
                      [&](size_t n) { return s[plan.src[n]]; });
    } else {
      const T v = ScalarAs<T>(args.scalar(3));
      ApplyUpdates<T>(o, out.numel(), plan.dst, op, include_self,
                      [v](size_t) { return v; });
    }
    return absl::OkStatus();
  }));
  return std::vector<Tensor>{out};
}

Outputs ScatterSrcKernel(const KernelArgs& args, absl::Span<const TensorMeta>) {
  return ScatterWith(args, Reduce::kNone, true, true);
}

Outputs ScatterValueKernel(const KernelArgs& args,
                           absl::Span<const TensorMeta>) {
  return ScatterWith(args, Reduce::kNone, true, false);
}

Outputs ScatterAddKernel(const KernelArgs& args, absl::Span<const TensorMeta>) {
  return ScatterWith(args, Reduce::kSum, true, true);
}

Outputs ScatterReduceKernel(const KernelArgs& args,
                            absl::Span<const TensorMeta>) {
  ASSIGN_OR_RETURN(Reduce op, ParseReduce(*args.optional_string(4)));
  return ScatterWith(args, op, args.bool_arg(5), true);
}

// index_put: values broadcast to the indexing result, then assigned (last
// write wins) or accumulated into a copy of self.
Outputs IndexPutKernel(const KernelArgs& args, absl::Span<const TensorMeta>) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(Tensor out, FreshCopy(self));
  ASSIGN_OR_RETURN(AdvancedIndexOffsets at,
                   ComputeAdvancedIndex(out, args.optional_tensor_list(1)));
  ASSIGN_OR_RETURN(Tensor values,
                   CastAndExpand(args.tensor(2), out.dtype(), at.result));
  ASSIGN_OR_RETURN(values, Contiguous(values));
  const Reduce op = args.bool_arg(3) ? Reduce::kSum : Reduce::kNone;
  RETURN_IF_ERROR(VisitDType(out.dtype(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* v = values.data_as<const T>();
    ApplyUpdates<T>(out.data_as<T>(), out.numel(), at.offsets, op, true,
                    [v](size_t n) { return v[n]; });
    return absl::OkStatus();
  }));
  return std::vector<Tensor>{out};
}

}  // namespace

absl::Status RegisterScatterKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.scatter.src", ScatterSrcKernel));
  RETURN_IF_ERROR(registry.Register("aten.scatter.value", ScatterValueKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.scatter_add.default", ScatterAddKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.scatter_reduce.two", ScatterReduceKernel));
  RETURN_IF_ERROR(registry.Register("aten.index_put.default", IndexPutKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
