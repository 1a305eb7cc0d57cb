#ifndef GUARDJIT_CORE_OPS_ADVANCED_INDEX_H_
#define GUARDJIT_CORE_OPS_ADVANCED_INDEX_H_

// The layout of ATen's advanced indexing (index.Tensor, index_put): which
// dims of `self` the `Tensor?[] indices` index, the broadcast shape of the
// index tensors and where it lands in the result. Shared by the shape rules
// (core/ops/indexing.cc, core/ops/scatter.cc) and the reference kernels so
// both agree.

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/sym_int.h"
#include "core/tensor_meta.h"

namespace guardjit {

struct AdvancedIndexLayout {
  // Dims of self that an index tensor indexes, ascending, and for each the
  // position of its tensor in `indices`.
  std::vector<int> indexed_dims;
  std::vector<int> entry;
  // The index tensors broadcast together.
  SymShape broadcast;
  // Where `broadcast` starts in the result: at the first indexed dim when the
  // indexed dims are adjacent, else at 0 (NumPy's rule).
  int insert_at = 0;
  // The result: self's other dims in order, `broadcast` spliced in.
  SymShape result;
  // For each dim of self that is not indexed, its dim in the result; -1 for
  // indexed dims.
  std::vector<int> result_dim;
};

// Checks `indices` against `self` as ATen does. Boolean (and uint8) masks make
// the result's size depend on values: they are UNIMPLEMENTED here (convert
// the mask with nonzero first). Errors name the argument `indices`.
absl::StatusOr<AdvancedIndexLayout> PlanAdvancedIndex(
    const SymShape& self,
    const std::vector<std::optional<TensorMeta>>& indices);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_ADVANCED_INDEX_H_
