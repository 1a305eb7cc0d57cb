#include "core/onnx/onnx_fold.h"

#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// Shape arithmetic works on a handful of values; more runs in the graph.
constexpr int64_t kMaxFoldedElements = 64;

// Offset into `t` (contiguous) of output index `index` under broadcasting.
int64_t BroadcastOffset(const Tensor& t, IntSpan out_sizes,
                        const Shape& index) {
  int64_t offset = 0, stride = 1;
  for (int d = t.dim() - 1; d >= 0; --d) {
    const size_t od = out_sizes.size() - (t.dim() - d);
    if (t.size(d) != 1) offset += index[od] * stride;
    stride *= t.size(d);
  }
  return offset;
}

}  // namespace

absl::StatusOr<std::optional<Tensor>> FoldIntBinary(absl::string_view op,
                                                    const Tensor& a,
                                                    const Tensor& b) {
  if (a.dtype() != DType::kInt64 || b.dtype() != DType::kInt64 ||
      a.numel() > kMaxFoldedElements || b.numel() > kMaxFoldedElements ||
      (op != "Add" && op != "Sub" && op != "Mul" && op != "Div")) {
    return std::optional<Tensor>();
  }
  auto sizes = BroadcastShapes(a.sizes(), b.sizes());
  if (!sizes.ok()) return std::optional<Tensor>();
  ASSIGN_OR_RETURN(Tensor out, Tensor::Empty(DType::kInt64, *sizes));
  if (out.numel() > kMaxFoldedElements) return std::optional<Tensor>();
  Shape index(sizes->size(), 0);
  for (int64_t k = 0; k < out.numel(); ++k) {
    const int64_t x = a.data_as<int64_t>()[BroadcastOffset(a, *sizes, index)];
    const int64_t y = b.data_as<int64_t>()[BroadcastOffset(b, *sizes, index)];
    int64_t r = 0;
    bool overflow = false;
    if (op == "Add") {
      overflow = __builtin_add_overflow(x, y, &r);
    } else if (op == "Sub") {
      overflow = __builtin_sub_overflow(x, y, &r);
    } else if (op == "Mul") {
      overflow = __builtin_mul_overflow(x, y, &r);
    } else {
      if (y == 0) {
        return absl::InvalidArgumentError("integer division by zero");
      }
      overflow = x == INT64_MIN && y == -1;
      if (!overflow) r = x / y;
    }
    if (overflow) return std::optional<Tensor>();
    out.data_as<int64_t>()[k] = r;
    for (int d = static_cast<int>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < (*sizes)[d]) break;
      index[d] = 0;
    }
  }
  return std::optional<Tensor>(std::move(out));
}

}  // namespace guardjit
