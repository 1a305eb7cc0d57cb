// Reference kernels of the ops whose output sizes depend on input values
// (core/ops/data_dependent.cc): nonzero, masked_select, _unique2,
// unique_consecutive and _local_scalar_dense. No shape rule sizes them, so
// `out` is empty and each kernel allocates results of the size it finds.
// Results follow PyTorch's CPU kernels, including the empty tensors returned
// for outputs that were not asked for.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/kernels/select_view.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

using Result = absl::StatusOr<std::vector<Tensor>>;

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

template <typename T>
bool IsNan(T v) {
  if constexpr (kIsFloat<T>) {
    return std::isnan(static_cast<OpMath<T>>(v));
  } else {
    return false;
  }
}

// PyTorch's element equality for unique: NaN equals nothing, -0.0 == 0.0.
template <typename T>
bool SameValue(T a, T b) {
  return static_cast<OpMath<T>>(a) == static_cast<OpMath<T>>(b);
}

// The order torch.sort gives: ascending, NaN last.
template <typename T>
bool SortsBefore(T a, T b) {
  if (IsNan(a)) return false;
  if (IsNan(b)) return true;
  return static_cast<OpMath<T>>(a) < static_cast<OpMath<T>>(b);
}

// Row-major flat indices of the nonzero elements of contiguous `t`.
std::vector<int64_t> NonzeroFlatIndices(const Tensor& t) {
  std::vector<int64_t> hits;
  VisitDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data_as<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (static_cast<OpMath<T>>(p[i]) != OpMath<T>(0)) hits.push_back(i);
    }
  });
  return hits;
}

// nonzero(self) -> int64 [n, self.dim()]: the index of each nonzero element
// (NaN included), in row-major order. A 0-dim self gives [0 or 1, 0].
Result NonzeroKernel(const KernelArgs& args, absl::Span<const TensorMeta>) {
  ASSIGN_OR_RETURN(Tensor self, Contiguous(args.tensor(0)));
  const std::vector<int64_t> hits = NonzeroFlatIndices(self);
  const int64_t n = static_cast<int64_t>(hits.size());
  const int rank = self.dim();
  ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(DType::kInt64, {n, rank}));
  int64_t* dst = out.data_as<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t flat = hits[k];
    for (int d = rank - 1; d >= 0; --d) {
      dst[k * rank + d] = flat % self.size(d);
      flat /= self.size(d);
    }
  }
  return std::vector<Tensor>{out};
}

// masked_select(self, mask) -> 1-D: the elements of self where the bool mask
// is set, both broadcast to a common shape, in row-major order.
Result MaskedSelectKernel(const KernelArgs& args,
                          absl::Span<const TensorMeta>) {
  const Tensor self = args.tensor(0);
  const Tensor mask = args.tensor(1);
  if (mask.dtype() != DType::kBool) {
    return ArgError("mask", absl::StrCat("expected a bool tensor, got ",
                                         mask.DebugString()));
  }
  auto shape = BroadcastShapes(self.sizes(), mask.sizes());
  if (!shape.ok()) return ArgError("mask", shape.status().message());
  ASSIGN_OR_RETURN(Tensor values, Contiguous(ExpandTo(self, *shape)));
  ASSIGN_OR_RETURN(Tensor flags, Contiguous(ExpandTo(mask, *shape)));
  const std::vector<int64_t> hits = NonzeroFlatIndices(flags);
  const int64_t n = static_cast<int64_t>(hits.size());
  ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(self.dtype(), {n}));
  const size_t item = static_cast<size_t>(self.item_size());
  const char* src = static_cast<const char*>(values.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * item, src + hits[k] * item, item);
  }
  return std::vector<Tensor>{out};
}

// An int64 tensor holding `values`.
absl::StatusOr<Tensor> Int64Tensor(const std::vector<int64_t>& values,
                                   IntSpan sizes) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, sizes));
  if (!values.empty()) {
    std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  }
  return t;
}

// The elements of contiguous `self` visited in `order`, grouped into runs of
// equal values: (values, inverse, counts) as _unique2 and unique_consecutive
// return them. `inverse` has self's shape when asked for, `counts` one entry
// per run; either is an empty 1-D int64 tensor when not asked for.
Result GroupRuns(const Tensor& self, const std::vector<int64_t>& order,
                 bool return_inverse, bool return_counts) {
  std::vector<int64_t> first;  // position in `order` where each run starts
  std::vector<int64_t> inverse(self.numel());
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = self.data_as<T>();
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || !SameValue(p[order[i]], p[order[i - 1]])) {
        first.push_back(static_cast<int64_t>(i));
      }
      inverse[order[i]] = static_cast<int64_t>(first.size()) - 1;
    }
  });
  const int64_t runs = static_cast<int64_t>(first.size());
  ASSIGN_OR_RETURN(Tensor values, Tensor::Empty(self.dtype(), {runs}));
  const size_t item = static_cast<size_t>(self.item_size());
  for (int64_t k = 0; k < runs; ++k) {
    std::memcpy(static_cast<char*>(values.data()) + k * item,
                static_cast<const char*>(self.data()) + order[first[k]] * item,
                item);
  }
  std::vector<int64_t> counts;
  if (return_counts) {
    first.push_back(static_cast<int64_t>(order.size()));
    for (int64_t k = 0; k < runs; ++k) {
      counts.push_back(first[k + 1] - first[k]);
    }
  }
  const Shape inverse_sizes =
      return_inverse ? Shape(self.sizes().begin(), self.sizes().end())
                     : Shape{0};
  if (!return_inverse) inverse.clear();
  ASSIGN_OR_RETURN(Tensor inverse_tensor, Int64Tensor(inverse, inverse_sizes));
  ASSIGN_OR_RETURN(Tensor counts_tensor,
                   Int64Tensor(counts, {static_cast<int64_t>(counts.size())}));
  return std::vector<Tensor>{values, inverse_tensor, counts_tensor};
}

// _unique2(self, sorted, return_inverse, return_counts): the distinct values
// of self in ascending order (NaN last, each NaN distinct), whatever
// `sorted` says, as PyTorch's CPU kernel does.
Result Unique2Kernel(const KernelArgs& args, absl::Span<const TensorMeta>) {
  ASSIGN_OR_RETURN(Tensor self, Contiguous(args.tensor(0)));
  std::vector<int64_t> order(self.numel());
  std::iota(order.begin(), order.end(), int64_t{0});
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = self.data_as<T>();
    std::stable_sort(order.begin(), order.end(), [p](int64_t a, int64_t b) {
      return SortsBefore(p[a], p[b]);
    });
  });
  return GroupRuns(self, order, args.bool_arg(2), args.bool_arg(3));
}

// Whether slices a and b of the [n, inner] contiguous `rows` hold the same
// values (NaN equals nothing).
bool SameRow(const Tensor& rows, int64_t a, int64_t b) {
  const int64_t inner = rows.size(1);
  return VisitDType(rows.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = rows.data_as<T>();
    for (int64_t j = 0; j < inner; ++j) {
      if (!SameValue(p[a * inner + j], p[b * inner + j])) return false;
    }
    return true;
  });
}

// unique_consecutive along `dim`: runs of equal slices collapse to one.
// PyTorch returns the inverse ([self.size(dim)]) and counts whatever the
// flags say, and refuses 0-sized dims other than `dim`.
Result UniqueConsecutiveDim(const Tensor& self, int64_t dim_arg) {
  if (self.dim() == 0) {
    return ArgError("dim", "a 0-dim tensor has no dimensions");
  }
  auto wrapped = NormalizeDim(dim_arg, self.dim());
  if (!wrapped.ok()) return ArgError("dim", wrapped.status().message());
  const int dim = *wrapped;
  const int64_t n = self.size(dim);
  int zero_dims = 0;
  for (int64_t s : self.sizes()) zero_dims += s == 0;
  if (n == 0) {
    if (zero_dims > 1) {
      return ArgError("self",
                      "more than one 0-sized dimension: unique cannot be "
                      "applied");
    }
    ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(self.dtype(), self.sizes()));
    ASSIGN_OR_RETURN(Tensor inverse, Tensor::Empty(DType::kInt64, {0}));
    ASSIGN_OR_RETURN(Tensor counts, Tensor::Empty(DType::kInt64, {0}));
    return std::vector<Tensor>{out, inverse, counts};
  }
  if (zero_dims > 0) {
    return ArgError("self",
                    "a 0-sized dimension other than 'dim': unique cannot be "
                    "applied");
  }
  // Slices of `dim` as the rows of a contiguous [n, inner] tensor.
  Shape sizes = {n}, strides = {self.stride(dim)};
  for (int d = 0; d < self.dim(); ++d) {
    if (d == dim) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  ASSIGN_OR_RETURN(Tensor moved, Contiguous(self.AsStrided(sizes, strides)));
  const Tensor rows =
      moved.AsStrided({n, moved.numel() / n}, {moved.numel() / n, 1});
  std::vector<int64_t> first, inverse(n);
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !SameRow(rows, i, i - 1)) first.push_back(i);
    inverse[i] = static_cast<int64_t>(first.size()) - 1;
  }
  const int64_t runs = static_cast<int64_t>(first.size());
  Shape out_sizes(self.sizes().begin(), self.sizes().end());
  out_sizes[dim] = runs;
  ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(self.dtype(), out_sizes));
  std::vector<int64_t> counts;
  first.push_back(n);
  for (int64_t k = 0; k < runs; ++k) {
    CopyInto(SelectView(out, dim, k), SelectView(self, dim, first[k]));
    counts.push_back(first[k + 1] - first[k]);
  }
  ASSIGN_OR_RETURN(Tensor inverse_tensor, Int64Tensor(inverse, {n}));
  ASSIGN_OR_RETURN(Tensor counts_tensor, Int64Tensor(counts, {runs}));
  return std::vector<Tensor>{out, inverse_tensor, counts_tensor};
}

// unique_consecutive(self, return_inverse, return_counts, dim): with dim None
// (or 0 of a 1-D self), runs of equal elements of the flattened self collapse
// to one; otherwise runs of equal slices along dim.
Result UniqueConsecutiveKernel(const KernelArgs& args,
                               absl::Span<const TensorMeta>) {
  const std::optional<int64_t> dim = args.optional_int(3);
  const Tensor& input = args.tensor(0);
  if (dim.has_value() && !(*dim == 0 && input.dim() == 1)) {
    return UniqueConsecutiveDim(input, *dim);
  }
  ASSIGN_OR_RETURN(Tensor self, Contiguous(input));
  std::vector<int64_t> order(self.numel());
  std::iota(order.begin(), order.end(), int64_t{0});
  return GroupRuns(self, order, args.bool_arg(1), args.bool_arg(2));
}

// _local_scalar_dense(self) -> Scalar (tensor.item()): the single element of
// self as a 0-dim wrapped number of self's dtype.
Result LocalScalarDenseKernel(const KernelArgs& args,
                              absl::Span<const TensorMeta>) {
  const Tensor self = args.tensor(0);
  if (self.numel() != 1) {
    return ArgError("self", absl::StrCat("a Tensor with ", self.numel(),
                                         " elements cannot be converted to "
                                         "Scalar"));
  }
  return std::vector<Tensor>{Tensor::WrappedNumber(self.Item(), self.dtype())};
}

}  // namespace

absl::Status RegisterDataDependentKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.nonzero.default", NonzeroKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.masked_select.default", MaskedSelectKernel));
  RETURN_IF_ERROR(registry.Register("aten._unique2.default", Unique2Kernel));
  RETURN_IF_ERROR(registry.Register("aten.unique_consecutive.default",
                                    UniqueConsecutiveKernel));
  RETURN_IF_ERROR(registry.Register("aten._local_scalar_dense.default",
                                    LocalScalarDenseKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
