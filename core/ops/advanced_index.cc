#include "core/ops/advanced_index.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status IndicesError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("argument 'indices': ", what));
}

}  // namespace

absl::StatusOr<AdvancedIndexLayout> PlanAdvancedIndex(
    const SymShape& self,
    const std::vector<std::optional<TensorMeta>>& indices) {
  const int rank = static_cast<int>(self.size());
  const int count = static_cast<int>(indices.size());
  if (count > rank) {
    return IndicesError(
        absl::StrCat("too many indices for tensor of dimension ", rank,
                     " (got ", count, ")"));
  }
  AdvancedIndexLayout layout;
  std::vector<std::string> shapes;
  bool first = true;
  for (int k = 0; k < count; ++k) {
    if (!indices[k].has_value()) continue;
    const TensorMeta& index = *indices[k];
    if (index.dtype == DType::kBool || index.dtype == DType::kUInt8) {
      return absl::UnimplementedError(absl::StrCat(
          "argument 'indices': entry ", k, " is a ", DTypeName(index.dtype),
          " mask; a mask's result size depends on its values, which "
          "index.Tensor does not support (convert the mask with nonzero)"));
    }
    if (index.dtype != DType::kInt64 && index.dtype != DType::kInt32) {
      return IndicesError(absl::StrCat(
          "tensors used as indices must be long, int, byte or bool tensors, "
          "entry ",
          k, " is ", DTypeName(index.dtype)));
    }
    shapes.push_back(ShapeToString(index.sizes));
    if (first) {
      layout.broadcast = index.sizes;
      first = false;
    } else {
      auto b = BroadcastShapes(layout.broadcast, index.sizes);
      if (!b.ok()) {
        return IndicesError(absl::StrCat(
            "shape mismatch: indexing tensors could not be broadcast together "
            "with shapes ",
            absl::StrJoin(shapes, ", ")));
      }
      layout.broadcast = *std::move(b);
    }
    layout.indexed_dims.push_back(k);
    layout.entry.push_back(k);
  }
  if (layout.indexed_dims.empty()) {
    return IndicesError("at least one index must be provided");
  }
  const bool adjacent =
      layout.indexed_dims.back() - layout.indexed_dims.front() + 1 ==
      static_cast<int>(layout.indexed_dims.size());
  layout.insert_at = adjacent ? layout.indexed_dims.front() : 0;
  layout.result_dim.assign(rank, -1);
  std::vector<bool> indexed(rank, false);
  for (int d : layout.indexed_dims) indexed[d] = true;
  // Self's dims before insert_at are never indexed (insert_at is 0 or the
  // first indexed dim), so the broadcast shape goes in when dim insert_at is
  // reached.
  for (int d = 0; d < rank; ++d) {
    if (d == layout.insert_at) {
      layout.result.insert(layout.result.end(), layout.broadcast.begin(),
                           layout.broadcast.end());
    }
    if (indexed[d]) continue;
    layout.result_dim[d] = static_cast<int>(layout.result.size());
    layout.result.push_back(self[d]);
  }
  return layout;
}

}  // namespace guardjit
