#ifndef GUARDJIT_CORE_HOST_MEMORY_H_
#define GUARDJIT_CORE_HOST_MEMORY_H_

// Host memory for tensors, intermediates and packed constants.
//
// A model's weights are loaded, folded (batch norms) and packed once per
// entry: tens of megabytes of fresh memory, each 4 KiB page a fault the
// kernel zeroes and charges on first touch. resnet18's first call from a
// warm compile cache took 38k minor faults. Blocks of kHugePageBytes or more
// are therefore aligned to it, and their whole huge pages advised as
// transparent huge pages (MADV_HUGEPAGE; honoured where the system's THP
// mode is "madvise" or "always"): a fault per 2 MiB instead of per 4 KiB.
// The tail past the last whole huge page keeps small pages, so a block
// never holds more resident memory than its bytes round up to 4 KiB.

#include <cstddef>
#include <memory>

namespace guardjit {

inline constexpr size_t kHostAlign = 64;
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` (0 gives a valid block) of uninitialized memory aligned to
// kHostAlign, or to kHugePageBytes for blocks of at least that many; null
// when out of memory. Free with FreeHostMemory.
void* AllocateHostMemory(size_t bytes);
void FreeHostMemory(void* block);

struct HostMemoryDeleter {
  void operator()(void* block) const { FreeHostMemory(block); }
};
using HostMemoryPtr = std::unique_ptr<void, HostMemoryDeleter>;

}  // namespace guardjit

#endif  // GUARDJIT_CORE_HOST_MEMORY_H_
