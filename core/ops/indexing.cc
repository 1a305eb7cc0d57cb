// Shape rules of the gathering ops: index_select, embedding, gather and
// index.Tensor (advanced indexing, core/ops/advanced_index.h). Index values
// are only known to the kernels, which range-check them.

#include <algorithm>
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

absl::Status CheckIndexDType(absl::string_view arg, const TensorMeta& index) {
  if (index.dtype == DType::kInt64 || index.dtype == DType::kInt32) {
    return absl::OkStatus();
  }
  return ArgError(arg, absl::StrCat("expected an int64 or int32 tensor, got ",
                                    DTypeName(index.dtype)));
}

absl::StatusOr<int> WrapDim(int64_t dim, int rank) {
  auto wrapped = NormalizeDim(dim, rank);
  if (!wrapped.ok()) return ArgError("dim", wrapped.status().message());
  return *wrapped;
}

absl::StatusOr<std::vector<TensorMeta>> IndexSelectMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  TensorMeta index = args.tensor(2);
  ASSIGN_OR_RETURN(int dim, WrapDim(args.int_arg(1), self.dim()));
  if (index.dim() > 1) {
    return ArgError("index", absl::StrCat("expected a 0-d or 1-d tensor, got ",
                                          index.dim(), "-d"));
  }
  if (self.dim() == 0 && index.numel() != 1) {
    return ArgError("index",
                    absl::StrCat("selecting from a 0-dim tensor takes exactly "
                                 "1 index, got ",
                                 index.numel().ToString()));
  }
  RETURN_IF_ERROR(CheckIndexDType("index", index));
  SymShape sizes = self.sizes;
  if (self.dim() > 0) sizes[dim] = index.numel();
  return std::vector<TensorMeta>{TensorMeta{self.dtype, sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> EmbeddingMeta(const MetaArgs& args) {
  TensorMeta weight = args.tensor(0);
  TensorMeta indices = args.tensor(1);
  if (weight.dim() != 2) {
    return ArgError("weight", absl::StrCat("expected a 2-D tensor, got ",
                                           weight.dim(), "-D"));
  }
  RETURN_IF_ERROR(CheckIndexDType("indices", indices));
  SymShape sizes = indices.sizes;
  sizes.push_back(weight.sizes[1]);
  return std::vector<TensorMeta>{
      TensorMeta{weight.dtype, sizes, weight.device}};
}

absl::StatusOr<std::vector<TensorMeta>> GatherMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  TensorMeta index = args.tensor(2);
  ASSIGN_OR_RETURN(int dim, WrapDim(args.int_arg(1), self.dim()));
  // PyTorch checks nothing more when the index is empty.
  if (index.numel() != 0) {
    RETURN_IF_ERROR(CheckIndexDType("index", index));
    // A 0-dim tensor counts as 1-D of size 1 here.
    const int rank = std::max(self.dim(), 1);
    if (std::max(index.dim(), 1) != rank) {
      return ArgError("index", absl::StrCat("expected as many dims as self (",
                                            rank, "), got ", index.dim()));
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t index_size =
          index.dim() == 0 ? 1 : index.sizes[d].Specialize();
      const int64_t self_size =
          self.dim() == 0 ? 1 : self.sizes[d].Specialize();
      if (d != dim && index_size > self_size) {
        return ArgError(
            "index",
            absl::StrCat("size ", index_size, " at dimension ", d,
                         " exceeds self's size ", self_size, " (index ",
                         ShapeToString(index.sizes), ", self ",
                         ShapeToString(self.sizes), ", dim ", dim, ")"));
      }
    }
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, index.sizes, self.device}};
}

// index.Tensor: self's dims indexed by the broadcast index tensors; None
// entries keep their dim.
absl::StatusOr<std::vector<TensorMeta>> IndexTensorMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  ASSIGN_OR_RETURN(AdvancedIndexLayout layout,
                   PlanAdvancedIndex(self.sizes, args.optional_tensor_list(1)));
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, layout.result, self.device}};
}

}  // namespace

absl::Status RegisterIndexingOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "index_select(Tensor self, int dim, Tensor index) -> Tensor",
      IndexSelectMeta));
  RETURN_IF_ERROR(registry.Register(
      "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
      "scale_grad_by_freq=False, bool sparse=False) -> Tensor",
      EmbeddingMeta));
  RETURN_IF_ERROR(registry.Register(
      "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) "
      "-> Tensor",
      GatherMeta));
  RETURN_IF_ERROR(registry.Register(
      "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
      IndexTensorMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
