#include "runtime/kernels/select_view.h"

namespace guardjit {

Tensor SelectView(const Tensor& t, int dim, int64_t i) {
  Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape strides(t.strides().begin(), t.strides().end());
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return t.AsStrided(sizes, strides, i * t.stride(dim));
}

}  // namespace guardjit
