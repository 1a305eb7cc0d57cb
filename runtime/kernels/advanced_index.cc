#include "runtime/kernels/advanced_index.h"

#include "absl/strings/str_cat.h"
#include "core/ops/advanced_index.h"
#include "core/status_macros.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {

absl::StatusOr<AdvancedIndexOffsets> ComputeAdvancedIndex(
    const Tensor& t, const std::vector<std::optional<Tensor>>& indices) {
  std::vector<std::optional<TensorMeta>> metas;
  for (const std::optional<Tensor>& index : indices) {
    metas.push_back(index.has_value()
                        ? std::optional<TensorMeta>(TensorMeta::Of(*index))
                        : std::nullopt);
  }
  const SymShape self_sizes(t.sizes().begin(), t.sizes().end());
  ASSIGN_OR_RETURN(AdvancedIndexLayout layout,
                   PlanAdvancedIndex(self_sizes, metas));
  Shape broadcast;
  for (const SymInt& s : layout.broadcast) broadcast.push_back(s.hint());
  AdvancedIndexOffsets out;
  for (const SymInt& s : layout.result) out.result.push_back(s.hint());
  int64_t broadcast_numel = 1;
  for (int64_t s : broadcast) broadcast_numel *= s;
  // Per indexed dim, its index values broadcast, wrapped and checked, as
  // element offsets along that dim.
  const size_t count = layout.indexed_dims.size();
  std::vector<std::vector<int64_t>> steps(count);
  for (size_t k = 0; k < count; ++k) {
    const int dim = layout.indexed_dims[k];
    ASSIGN_OR_RETURN(Tensor cast,
                     CastIfNeeded(*indices[layout.entry[k]], DType::kInt64));
    ASSIGN_OR_RETURN(Tensor values, Contiguous(ExpandTo(cast, broadcast)));
    const int64_t* p = values.data_as<int64_t>();
    const int64_t size = t.size(dim);
    steps[k].resize(broadcast_numel);
    for (int64_t b = 0; b < broadcast_numel; ++b) {
      int64_t i = p[b];
      if (i < -size || i >= size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument 'indices': index ", i, " is out of bounds for dimension ",
            dim, " with size ", size));
      }
      if (i < 0) i += size;
      steps[k][b] = i * t.stride(dim);
    }
  }
  int64_t numel = 1;
  for (int64_t s : out.result) numel *= s;
  out.offsets.resize(numel);
  const int rank = static_cast<int>(out.result.size());
  const int b_begin = layout.insert_at;
  const int b_end = b_begin + static_cast<int>(broadcast.size());
  // Stride in t of each result dim that is one of t's own dims.
  std::vector<int64_t> own_stride(rank, 0);
  for (int d = 0; d < t.dim(); ++d) {
    if (layout.result_dim[d] >= 0)
      own_stride[layout.result_dim[d]] = t.stride(d);
  }
  Shape pos(rank, 0);
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = 0;
    int64_t b = 0;
    for (int d = 0; d < rank; ++d) {
      if (d >= b_begin && d < b_end) {
        b = b * out.result[d] + pos[d];
      } else {
        offset += pos[d] * own_stride[d];
      }
    }
    for (size_t k = 0; k < count; ++k) offset += steps[k][b];
    out.offsets[n] = offset;
    for (int d = rank - 1; d >= 0; --d) {
      if (++pos[d] < out.result[d]) break;
      pos[d] = 0;
    }
  }
  return out;
}

}  // namespace guardjit
