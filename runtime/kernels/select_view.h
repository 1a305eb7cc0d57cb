#ifndef GUARDJIT_RUNTIME_KERNELS_SELECT_VIEW_H_
#define GUARDJIT_RUNTIME_KERNELS_SELECT_VIEW_H_

// The slice view the kernels that move whole slices along a dim share
// (index_select, unique_consecutive over a dim).

#include <cstdint>

#include "core/tensor.h"

namespace guardjit {

// `t` at position `i` of `dim`, that dim dropped: a view, no copy.
Tensor SelectView(const Tensor& t, int dim, int64_t i);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_SELECT_VIEW_H_
