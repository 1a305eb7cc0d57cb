#ifndef GUARDJIT_RUNTIME_KERNELS_STORAGE_OFFSET_H_
#define GUARDJIT_RUNTIME_KERNELS_STORAGE_OFFSET_H_

// Where a tensor starts in its storage, in elements, and how many elements
// the storage holds, as aten.sym_storage_offset and aten.as_strided read
// them. A borrowed tensor (a host input) has no Storage: it is its own
// storage, starting at its first element and ending after the last element
// its strides reach.

#include <cstdint>

#include "core/tensor.h"

namespace guardjit {

inline int64_t StorageOffsetOf(const Tensor& t) {
  if (t.storage() == nullptr) return 0;
  return (static_cast<const char*>(t.data()) -
          static_cast<const char*>(t.storage()->data())) /
         t.item_size();
}

inline int64_t StorageElementsOf(const Tensor& t) {
  if (t.storage() != nullptr) {
    return static_cast<int64_t>(t.storage()->nbytes()) / t.item_size();
  }
  if (t.numel() == 0) return 0;
  int64_t extent = 1;
  for (int d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  return extent;
}

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_STORAGE_OFFSET_H_
