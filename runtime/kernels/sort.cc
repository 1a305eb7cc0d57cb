// Reference kernels of cumsum, sort and topk. The input is laid out as one
// contiguous row per position of the other dims (ToReductionRows over the
// one dim), each row is scanned or ordered, and the rows are copied back
// into the result's layout.
//
// Order: NaN compares greater than every number (ascending sorts put NaNs
// last, descending and largest-first put them first), as in ATen. Ties keep
// their input order (a stable sort). ATen's CPU sort.default and topk do
// not promise an order among equal values (torch.sort(stable=False) and
// topk may return tied indices in another order); the values agree.
//
// cumsum accumulates in double for floating types (ATen's CPU acc_type) and
// in wrapping int64 for integral ones, rounding each prefix to the result
// dtype.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/reduction_util.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

// A contiguous tensor shaped like `out` viewed with `dim` last.
absl::StatusOr<Tensor> RowBuffer(DType dtype, const Tensor& like_moved) {
  return Tensor::Empty(dtype, like_moved.sizes());
}

// The single-dim mask of `dim` (a 0-dim tensor has none: one row of one).
absl::StatusOr<std::vector<bool>> DimMask(const Tensor& self, int64_t dim) {
  std::vector<bool> mask(self.dim(), false);
  ASSIGN_OR_RETURN(int d, NormalizeDim(dim, self.dim()));
  if (self.dim() > 0) mask[d] = true;
  return mask;
}

Outputs CumsumKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(std::vector<bool> mask, DimMask(self, args.int_arg(1)));
  const DType dtype = out[0].dtype;
  ASSIGN_OR_RETURN(ReductionRows rows, ToReductionRows(self, mask, dtype));
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(dtype, out[0].shape()));
  const Tensor moved = MoveDimsLast(result, mask);
  ASSIGN_OR_RETURN(Tensor buffer, RowBuffer(dtype, moved));
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = buffer.data_as<T>();
    for (int64_t o = 0; o < rows.outer; ++o) {
      absl::Span<const T> row = rows.row<T>(o);
      T* d = dst + o * rows.inner;
      if constexpr (kIsFloat<T>) {
        double acc = 0.0;
        for (size_t i = 0; i < row.size(); ++i) {
          acc += static_cast<double>(static_cast<OpMath<T>>(row[i]));
          d[i] = Convert<T>(acc);
        }
      } else if constexpr (std::is_same_v<T, bool>) {
        bool acc = false;
        for (size_t i = 0; i < row.size(); ++i) d[i] = acc = acc || row[i];
      } else {
        uint64_t acc = 0;
        for (size_t i = 0; i < row.size(); ++i) {
          acc += static_cast<uint64_t>(static_cast<int64_t>(row[i]));
          d[i] = Convert<T>(static_cast<int64_t>(acc));
        }
      }
    }
  });
  CopyInto(moved, buffer);
  return std::vector<Tensor>{result};
}

// a before b in ascending order, NaN last.
template <typename T>
bool Less(T a, T b) {
  if constexpr (kIsFloat<T>) {
    const auto x = static_cast<OpMath<T>>(a);
    const auto y = static_cast<OpMath<T>>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  } else {
    return a < b;
  }
}

// Values and int64 indices of the first `k` elements of each row in order
// (descending: largest first), written in row layout.
Outputs OrderKernel(const Tensor& self, int64_t dim, bool descending,
                    std::optional<int64_t> k,
                    absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(std::vector<bool> mask, DimMask(self, dim));
  ASSIGN_OR_RETURN(ReductionRows rows,
                   ToReductionRows(self, mask, self.dtype()));
  const int64_t keep = k.value_or(rows.inner);
  ASSIGN_OR_RETURN(Tensor values, Tensor::Empty(out[0].dtype, out[0].shape()));
  ASSIGN_OR_RETURN(Tensor indices,
                   Tensor::Empty(DType::kInt64, out[1].shape()));
  const Tensor moved_values = MoveDimsLast(values, mask);
  const Tensor moved_indices = MoveDimsLast(indices, mask);
  ASSIGN_OR_RETURN(Tensor value_rows, RowBuffer(self.dtype(), moved_values));
  ASSIGN_OR_RETURN(Tensor index_rows, RowBuffer(DType::kInt64, moved_indices));
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<int64_t> order(rows.inner);
    for (int64_t o = 0; o < rows.outer; ++o) {
      absl::Span<const T> row = rows.row<T>(o);
      std::iota(order.begin(), order.end(), int64_t{0});
      auto before = [&](int64_t a, int64_t b) {
        return descending ? Less(row[b], row[a]) : Less(row[a], row[b]);
      };
      std::stable_sort(order.begin(), order.end(), before);
      T* v = value_rows.data_as<T>() + o * keep;
      int64_t* ix = index_rows.data_as<int64_t>() + o * keep;
      for (int64_t i = 0; i < keep; ++i) {
        v[i] = row[order[i]];
        ix[i] = order[i];
      }
    }
  });
  CopyInto(moved_values, value_rows);
  CopyInto(moved_indices, index_rows);
  return std::vector<Tensor>{values, indices};
}

Outputs SortKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  return OrderKernel(args.tensor(0), args.int_arg(1), args.bool_arg(2),
                     std::nullopt, out);
}

Outputs TopkKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const Tensor self = args.tensor(0);
  const int64_t k = args.int_arg(1);
  ASSIGN_OR_RETURN(std::vector<bool> mask, DimMask(self, args.int_arg(2)));
  int64_t size = 1;
  for (int d = 0; d < self.dim(); ++d) {
    if (mask[d]) size = self.size(d);
  }
  if (k < 0 || k > size) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'k': selected index k out of range (k ", k,
                     ", size ", size, ")"));
  }
  // sorted=False leaves the order to the implementation: this one sorts.
  return OrderKernel(self, args.int_arg(2), args.bool_arg(3), k, out);
}

}  // namespace

absl::Status RegisterSortKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.cumsum.default", CumsumKernel));
  RETURN_IF_ERROR(registry.Register("aten.sort.default", SortKernel));
  RETURN_IF_ERROR(registry.Register("aten.topk.default", TopkKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
