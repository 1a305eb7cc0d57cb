#ifndef GUARDJIT_CORE_ALLOCATOR_H_
#define GUARDJIT_CORE_ALLOCATOR_H_

#include <cstddef>

namespace guardjit {

// Where tensors' host memory comes from (implemented in runtime/: the
// caching allocator). Thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // 64-byte aligned, uninitialized memory of at least `nbytes` (0 gives a
  // valid block too); null when out of memory.
  virtual void* Allocate(size_t nbytes) = 0;
  // Returns a block from Allocate(nbytes) with the same `nbytes`.
  virtual void Free(void* block, size_t nbytes) = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ALLOCATOR_H_
