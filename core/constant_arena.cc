#include "core/constant_arena.h"

#include <cstdint>

#include "core/host_memory.h"

namespace guardjit {

std::shared_ptr<ConstantArena> ConstantArena::Create(size_t capacity) {
  void* block = AllocateHostMemory(capacity);
  if (block == nullptr) return nullptr;
  return std::shared_ptr<ConstantArena>(
      new ConstantArena(static_cast<char*>(block), capacity));
}

ConstantArena::~ConstantArena() { FreeHostMemory(block_); }

size_t ConstantArena::Rounded(size_t nbytes) {
  if (nbytes == 0) return kHostAlign;  // a slice of its own, like any block
  const size_t rounded = (nbytes + kHostAlign - 1) / kHostAlign * kHostAlign;
  return rounded < nbytes ? nbytes : rounded;
}

void* ConstantArena::Allocate(size_t nbytes) {
  const size_t size = Rounded(nbytes);
  size_t at = used_.load(std::memory_order_relaxed);
  while (size <= capacity_ && at <= capacity_ - size) {
    if (used_.compare_exchange_weak(at, at + size, std::memory_order_relaxed)) {
      return block_ + at;
    }
  }
  return AllocateHostMemory(size);
}

void ConstantArena::Free(void* block, size_t /*nbytes*/) {
  if (!Owns(block)) FreeHostMemory(block);
}

bool ConstantArena::Owns(const void* p) const {
  // Compared as integers: pointers into different objects are unordered.
  const auto at = reinterpret_cast<uintptr_t>(p);
  const auto begin = reinterpret_cast<uintptr_t>(block_);
  return at >= begin && at - begin < capacity_;
}

}  // namespace guardjit
