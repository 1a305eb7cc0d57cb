#ifndef GUARDJIT_CORE_TENSOR_META_H_
#define GUARDJIT_CORE_TENSOR_META_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace guardjit {

// What shape and dtype inference knows of a tensor: PyTorch's "meta" tensor.
struct TensorMeta {
  DType dtype = DType::kFloat32;
  Shape sizes;
  Device device;
  bool wrapped_number = false;  // a Python number literal in a Tensor slot

  static TensorMeta Of(const Tensor& t) {
    return {t.dtype(), Shape(t.sizes().begin(), t.sizes().end()), t.device(),
            t.is_wrapped_number()};
  }
  int dim() const { return static_cast<int>(sizes.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  std::string ToString() const {
    return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(sizes, ", "), "]");
  }
  friend bool operator==(const TensorMeta& a, const TensorMeta& b) {
    return a.dtype == b.dtype && a.sizes == b.sizes && a.device == b.device;
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_TENSOR_META_H_
