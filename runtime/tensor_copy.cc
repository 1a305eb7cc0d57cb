#include "runtime/tensor_copy.h"

#include <cstring>

#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/strided_loop.h"

namespace guardjit {

void CopyInto(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  Tensor expanded = ExpandTo(src, dst.sizes());
  if (dst.dtype() == src.dtype() && dst.is_contiguous() &&
      expanded.is_contiguous()) {
    std::memcpy(dst.data(), expanded.data(),
                static_cast<size_t>(dst.numel()) * dst.item_size());
    return;
  }
  VisitDType(dst.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    VisitDType(src.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      MapElements<Out, In>(
          dst, [](In v) { return Convert<Out>(v); }, expanded);
    });
  });
}

absl::StatusOr<Tensor> CopyAs(const Tensor& src, DType dtype) {
  auto out = Tensor::Empty(dtype, src.sizes());
  if (!out.ok()) return out.status();
  CopyInto(*out, src);
  return out;
}

absl::StatusOr<Tensor> CastIfNeeded(const Tensor& src, DType dtype) {
  if (src.dtype() == dtype) return src;
  return CopyAs(src, dtype);
}

absl::StatusOr<Tensor> Contiguous(const Tensor& src) {
  if (src.is_contiguous()) return src;
  return CopyAs(src, src.dtype());
}

}  // namespace guardjit
