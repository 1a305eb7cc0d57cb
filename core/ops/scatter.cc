// Shape rules of the scattering ops: scatter.src/.value, scatter_add,
// scatter_reduce.two and index_put. Each returns a new tensor shaped like
// `self`; index values are only known to the kernels
// (runtime/kernels/scatter.cc), which range-check them.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/op_registry.h"
#include "core/ops/advanced_index.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

// ATen's scatter_shape_check and scatter_gather_dtype_check: an int64/int32
// index of self's rank, no larger than src (when there is one) in any dim
// and than self apart from `dim`. An empty index is not checked further.
absl::Status CheckScatter(const TensorMeta& self, int64_t raw_dim,
                          const TensorMeta& index, const TensorMeta* src) {
  ASSIGN_OR_RETURN(int dim, [&]() -> absl::StatusOr<int> {
    auto d = NormalizeDim(raw_dim, self.dim());
    if (!d.ok()) return ArgError("dim", d.status().message());
    return *d;
  }());
  if (index.dtype != DType::kInt64 && index.dtype != DType::kInt32) {
    return ArgError("index",
                    absl::StrCat("scatter(): Expected dtype int32/int64 for "
                                 "index, got ",
                                 DTypeName(index.dtype)));
  }
  if (src != nullptr && src->dtype != self.dtype) {
    return ArgError(
        "src", absl::StrCat("scatter(): Expected self.dtype to be equal to "
                            "src.dtype (self ",
                            DTypeName(self.dtype), ", src ",
                            DTypeName(src->dtype), ")"));
  }
  if (index.numel() == 0) return absl::OkStatus();
  const int rank = std::max(self.dim(), 1);
  if (std::max(index.dim(), 1) != rank) {
    return ArgError("index",
                    absl::StrCat("Index tensor must have the same number of "
                                 "dimensions as self tensor (",
                                 rank, "), got ", index.dim()));
  }
  if (src != nullptr && std::max(src->dim(), 1) != rank) {
    return ArgError("src",
                    absl::StrCat("Index tensor must have the same number of "
                                 "dimensions as src tensor (",
                                 index.dim(), "), got ", src->dim()));
  }
  auto size = [](const TensorMeta& t, int d) -> int64_t {
    return t.dim() == 0 ? 1 : t.sizes[d].Specialize();
  };
  for (int d = 0; d < rank; ++d) {
    const bool too_big_for_self = d != dim && size(index, d) > size(self, d);
    const bool too_big_for_src =
        src != nullptr && size(index, d) > size(*src, d);
    if (too_big_for_self || too_big_for_src) {
      std::string message =
          absl::StrCat("Expected index ", ShapeToString(index.sizes),
                       " to be no larger than self ", ShapeToString(self.sizes),
                       " apart from dimension ", dim);
      if (src != nullptr) {
        absl::StrAppend(&message, " and to be no larger size than src ",
                        ShapeToString(src->sizes));
      }
      return ArgError("index", message);
    }
  }
  return absl::OkStatus();
}

std::vector<TensorMeta> SameAsSelf(const TensorMeta& self) {
  return {TensorMeta{self.dtype, self.sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> ScatterSrcMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  const TensorMeta src = args.tensor(3);
  RETURN_IF_ERROR(CheckScatter(self, args.int_arg(1), args.tensor(2), &src));
  return SameAsSelf(self);
}

absl::StatusOr<std::vector<TensorMeta>> ScatterValueMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  RETURN_IF_ERROR(CheckScatter(self, args.int_arg(1), args.tensor(2), nullptr));
  return SameAsSelf(self);
}

absl::StatusOr<std::vector<TensorMeta>> ScatterReduceMeta(
    const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  const TensorMeta src = args.tensor(3);
  RETURN_IF_ERROR(CheckScatter(self, args.int_arg(1), args.tensor(2), &src));
  const absl::string_view reduce = *args.optional_string(4);
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" &&
      reduce != "amax" && reduce != "amin") {
    return ArgError("reduce",
                    absl::StrCat("reduce argument must be either sum, prod, "
                                 "mean, amax or amin, got ",
                                 reduce));
  }
  return SameAsSelf(self);
}

// index_put: values (of self's dtype) must broadcast to the indexing result.
absl::StatusOr<std::vector<TensorMeta>> IndexPutMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  const TensorMeta values = args.tensor(2);
  ASSIGN_OR_RETURN(AdvancedIndexLayout layout,
                   PlanAdvancedIndex(self.sizes, args.optional_tensor_list(1)));
  if (values.dtype != self.dtype) {
    return ArgError(
        "values",
        absl::StrCat("Index put requires the source and destination dtypes "
                     "match, got ",
                     DTypeName(self.dtype), " for the destination and ",
                     DTypeName(values.dtype), " for the source"));
  }
  auto b = BroadcastShapes(values.sizes, layout.result);
  if (!b.ok() || b->size() != layout.result.size()) {
    return ArgError("values",
                    absl::StrCat("shape mismatch: value tensor of shape ",
                                 ShapeToString(values.sizes),
                                 " cannot be broadcast to indexing result of "
                                 "shape ",
                                 ShapeToString(layout.result)));
  }
  for (size_t d = 0; d < b->size(); ++d) {
    if ((*b)[d].Specialize() != layout.result[d].Specialize()) {
      return ArgError("values",
                      absl::StrCat("shape mismatch: value tensor of shape ",
                                   ShapeToString(values.sizes),
                                   " cannot be broadcast to indexing result "
                                   "of shape ",
                                   ShapeToString(layout.result)));
    }
  }
  return SameAsSelf(self);
}

}  // namespace

absl::Status RegisterScatterOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      ScatterSrcMeta));
  RETURN_IF_ERROR(registry.Register(
      "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> "
      "Tensor",
      ScatterValueMeta));
  RETURN_IF_ERROR(registry.Register(
      "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
      ScatterSrcMeta));
  RETURN_IF_ERROR(registry.Register(
      "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str "
      "reduce, *, bool include_self=True) -> Tensor",
      ScatterReduceMeta));
  RETURN_IF_ERROR(registry.Register(
      "index_put(Tensor self, Tensor?[] indices, Tensor values, bool "
      "accumulate=False) -> Tensor",
      IndexPutMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
