#include "core/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace guardjit {

void* AllocateHostMemory(size_t bytes) {
  const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kHostAlign;
  if (bytes > SIZE_MAX - align) return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  const size_t rounded =
      bytes == 0 ? align : (bytes + align - 1) / align * align;
  void* block = std::aligned_alloc(align, rounded);
  if (block == nullptr || align != kHugePageBytes) return block;
  // The whole huge pages of `bytes` only: the rounding's slack is never
  // touched, and stays unbacked virtual memory.
  const size_t whole = bytes / kHugePageBytes * kHugePageBytes;
  // Advice only: a kernel without THP refuses it and the block works the
  // same with small pages.
  (void)madvise(block, whole, MADV_HUGEPAGE);
  return block;
}

void FreeHostMemory(void* block) { std::free(block); }

}  // namespace guardjit
