// Shape and dtype rules of the ops that order or scan along one dim: cumsum,
// sort and topk (reference kernels: runtime/kernels/sort.cc).

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

absl::StatusOr<int> WrapDim(int64_t dim, int rank) {
  auto wrapped = NormalizeDim(dim, rank);
  if (!wrapped.ok()) return ArgError("dim", wrapped.status().message());
  return *wrapped;
}

// cumsum: `dtype` if given, else integral and bool inputs accumulate in int64
// (as torch.cumsum promotes them), floating ones in their own type.
absl::StatusOr<std::vector<TensorMeta>> CumsumMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  RETURN_IF_ERROR(WrapDim(args.int_arg(1), self.dim()).status());
  DType dtype = IsIntegral(self.dtype, /*include_bool=*/true) ? DType::kInt64
                                                              : self.dtype;
  if (std::optional<DType> d = args.optional_dtype(2)) dtype = *d;
  return std::vector<TensorMeta>{TensorMeta{dtype, self.sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> SortMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  RETURN_IF_ERROR(WrapDim(args.int_arg(1), self.dim()).status());
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device},
      TensorMeta{DType::kInt64, self.sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> TopkMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  ASSIGN_OR_RETURN(int dim, WrapDim(args.int_arg(2), self.dim()));
  const SymInt k = args.sym_int(1);
  const int64_t size = self.dim() == 0 ? 1 : self.sizes[dim].Specialize();
  const int64_t kv = k.Specialize();
  if (kv < 0 || kv > size) {
    return ArgError("k", absl::StrCat("selected index k out of range (k ", kv,
                                      ", dim ", dim, " of size ", size, ")"));
  }
  SymShape sizes = self.sizes;
  if (self.dim() > 0) sizes[dim] = k;
  return std::vector<TensorMeta>{TensorMeta{self.dtype, sizes, self.device},
                                 TensorMeta{DType::kInt64, sizes, self.device}};
}

}  // namespace

absl::Status RegisterSortOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
      CumsumMeta));
  RETURN_IF_ERROR(registry.Register(
      "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor "
      "values, Tensor indices)",
      SortMeta));
  RETURN_IF_ERROR(registry.Register(
      "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool "
      "sorted=True) -> (Tensor values, Tensor indices)",
      TopkMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
