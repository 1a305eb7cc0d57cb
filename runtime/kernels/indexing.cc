// Reference kernels of index_select, embedding, gather and index.Tensor. Every
// index is range-checked before any element is read, so a bad index is an error
// naming the argument and the value, never an out-of-bounds read.

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/advanced_index.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/kernels/select_view.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

// The values of `index` (int32 or int64, any strides) in row-major order,
// each checked to lie in [0, size): PyTorch's gathering ops do not wrap
// negative indices.
absl::StatusOr<std::vector<int64_t>> LoadIndices(const Tensor& index,
                                                 absl::string_view arg, int dim,
                                                 int64_t size) {
  ASSIGN_OR_RETURN(Tensor values, CopyAs(index, DType::kInt64));
  const int64_t* p = values.data_as<int64_t>();
  std::vector<int64_t> out(p, p + values.numel());
  for (int64_t i : out) {
    if (i < 0 || i >= size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument '", arg, "': index ", i, " is out of range for dimension ",
          dim, " with size ", size));
    }
  }
  return out;
}

// out[..., k, ...] = self[..., indices[k], ...] along `dim` of both.
void IndexSelectInto(const Tensor& out, const Tensor& self, int dim,
                     const std::vector<int64_t>& indices) {
  for (size_t k = 0; k < indices.size(); ++k) {
    CopyInto(SelectView(out, dim, static_cast<int64_t>(k)),
             SelectView(self, dim, indices[k]));
  }
}

absl::StatusOr<std::vector<Tensor>> IndexSelectKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  Tensor self = args.tensor(0);
  Tensor index = args.tensor(2);
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (self.dim() == 0) {
    // A 0-dim tensor is indexed like a 1-element vector.
    RETURN_IF_ERROR(LoadIndices(index, "index", 0, 1).status());
    CopyInto(out, self);
    return std::vector<Tensor>{out};
  }
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), self.dim()));
  ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                   LoadIndices(index, "index", dim, self.size(dim)));
  IndexSelectInto(out, self, dim, indices);
  return std::vector<Tensor>{out};
}

absl::StatusOr<std::vector<Tensor>> EmbeddingKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  Tensor weight = args.tensor(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                   LoadIndices(args.tensor(1), "indices", 0, weight.size(0)));
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  // Rows of the output in the indices' row-major order.
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t width = weight.size(1);
  IndexSelectInto(out.AsStrided({n, width}, {width, 1}), weight, 0, indices);
  return std::vector<Tensor>{out};
}

absl::StatusOr<std::vector<Tensor>> GatherKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  Tensor self = args.tensor(0);
  Tensor index = args.tensor(2);
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (out.numel() == 0) return std::vector<Tensor>{out};
  // 0-dim operands take part as 1-D tensors of one element.
  if (self.dim() == 0) self = self.AsStrided({1}, {0});
  Shape shape(index.sizes().begin(), index.sizes().end());
  if (shape.empty()) shape.push_back(1);
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), self.dim()));
  ASSIGN_OR_RETURN(std::vector<int64_t> indices,
                   LoadIndices(index, "index", dim, self.size(dim)));
  // out[p] = self[p with p[dim] replaced by index[p]], walking p in
  // row-major order; the shape rule checked index's sizes fit in self's.
  const int rank = static_cast<int>(shape.size());
  const size_t item = static_cast<size_t>(self.item_size());
  const char* src = static_cast<const char*>(self.data());
  char* dst = static_cast<char*>(out.data());
  Shape pos(rank, 0);
  int64_t base = 0;  // offset in self of pos, dim excluded
  for (int64_t n = 0; n < out.numel(); ++n) {
    const int64_t offset = base + indices[n] * self.stride(dim);
    std::memcpy(dst + n * item, src + offset * static_cast<int64_t>(item),
                item);
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t step = d == dim ? 0 : self.stride(d);
      if (++pos[d] < shape[d]) {
        base += step;
        break;
      }
      base -= step * (shape[d] - 1);
      pos[d] = 0;
    }
  }
  return std::vector<Tensor>{out};
}

// index.Tensor: one element copy per result element, from the offsets of
// ComputeAdvancedIndex (every index checked before anything is read).
absl::StatusOr<std::vector<Tensor>> IndexTensorKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(AdvancedIndexOffsets at,
                   ComputeAdvancedIndex(self, args.optional_tensor_list(1)));
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (out.numel() != static_cast<int64_t>(at.offsets.size())) {
    return absl::InternalError(
        "index.Tensor: result size disagrees with the "
        "shape rule");
  }
  const size_t item = static_cast<size_t>(self.item_size());
  const char* src = static_cast<const char*>(self.data());
  char* dst = static_cast<char*>(out.data());
  for (size_t n = 0; n < at.offsets.size(); ++n) {
    std::memcpy(dst + n * item,
                src + at.offsets[n] * static_cast<int64_t>(item), item);
  }
  return std::vector<Tensor>{out};
}

}  // namespace

absl::Status RegisterIndexingKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(
      registry.Register("aten.index_select.default", IndexSelectKernel));
  RETURN_IF_ERROR(registry.Register("aten.embedding.default", EmbeddingKernel));
  RETURN_IF_ERROR(registry.Register("aten.gather.default", GatherKernel));
  RETURN_IF_ERROR(registry.Register("aten.index.Tensor", IndexTensorKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
