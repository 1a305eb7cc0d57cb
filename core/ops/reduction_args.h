#ifndef GUARDJIT_CORE_OPS_REDUCTION_ARGS_H_
#define GUARDJIT_CORE_OPS_REDUCTION_ARGS_H_

// Reading the `dim` argument of ATen reductions, shared by the shape rules
// (core/ops/reduction.cc) and the reference kernels so both agree on which
// dims an overload reduces.

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/bound_args.h"
#include "core/op_registry.h"
#include "core/shape_util.h"

namespace guardjit {

// What an empty `dim` list means. ATen's make_dim_mask reads `dim=[]` as
// "every dim" except for any.dims/all.dims (allow_empty_dims), where it
// reduces nothing.
enum class EmptyDims { kReduceAll, kReduceNone };

// The dims a reduction node reduces, one flag per dim of a rank-`rank` input.
// The `dim` argument is found by name: `int dim`, `int? dim`, `int[1] dim`
// and `int[1]? dim` all arrive as a list or None; overloads without one
// (sum.default) reduce every dim. Errors name the argument.
template <typename T>
absl::StatusOr<std::vector<bool>> ReadReductionMask(const BoundArgs<T>& args,
                                                    int rank,
                                                    EmptyDims empty_dims) {
  const int index = args.node().op->schema.ArgIndex("dim");
  std::optional<std::vector<int64_t>> dims;
  if (index >= 0) dims = args.optional_int_list(index);
  if (dims.has_value() && dims->empty() &&
      empty_dims == EmptyDims::kReduceNone) {
    return std::vector<bool>(rank, false);
  }
  auto mask = ReductionMask(dims, rank);
  if (!mask.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'dim': ", mask.status().message()));
  }
  // A 0-dim tensor accepts dim 0 and -1, both meaning its one implicit dim,
  // so two entries always repeat it (ATen's dim_list_to_bitset rejects that).
  if (rank == 0 && dims.has_value() && dims->size() > 1) {
    return absl::InvalidArgumentError(
        "argument 'dim': dim 0 appears multiple times in the list of dims");
  }
  return mask;
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_REDUCTION_ARGS_H_
