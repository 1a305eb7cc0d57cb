#ifndef GUARDJIT_CORE_CONSTANT_ARENA_H_
#define GUARDJIT_CORE_CONSTANT_ARENA_H_

#include <atomic>
#include <cstddef>
#include <memory>

#include "core/allocator.h"

namespace guardjit {

// One block of host memory that a set of tensors made together is cut from:
// a graph's constants at load (core/graph_loader.cc), the weights folding
// makes (jit/fold_batch_norm.cc), a program's packed weights
// (jit/llvm/llvm_backend.cc). Tens of megabytes of weights in one block of
// whole huge pages (core/host_memory.h) fault a page per 2 MiB, where a
// block per tensor below 2 MiB faults per 4 KiB: `guardjit run` from a warm
// compile cache took 5.7k page faults instead of 10.3k for resnet18, 3.1k
// instead of 6.2k for a GPT-2-style model.
//
// Each tensor keeps its own Storage (its storage offset 0, its size its
// own, as a tensor allocated alone), whose allocator, this arena, keeps
// the block alive until the last of them is gone. Thread-safe.
class ConstantArena final : public Allocator {
 public:
  // An arena of `capacity` bytes (the tensors' bytes, each rounded up to
  // kHostAlign); null when out of memory.
  static std::shared_ptr<ConstantArena> Create(size_t capacity);
  ~ConstantArena() override;
  ConstantArena(const ConstantArena&) = delete;
  ConstantArena& operator=(const ConstantArena&) = delete;

  // The next kHostAlign-aligned `nbytes` of the block, or a block of its own
  // past the capacity (a caller that sized the arena short is slower, never
  // wrong).
  void* Allocate(size_t nbytes) override;
  // Frees a block of its own; a slice of the block goes with the arena.
  void Free(void* block, size_t nbytes) override;

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }

  // The bytes Allocate(nbytes) takes of the block: `nbytes` rounded up to
  // kHostAlign, at least kHostAlign (an empty tensor has a slice too); an
  // `nbytes` that overflows so is returned as it is (and never fits).
  static size_t Rounded(size_t nbytes);

 private:
  ConstantArena(char* block, size_t capacity)
      : block_(block), capacity_(capacity) {}
  bool Owns(const void* p) const;

  char* const block_;
  const size_t capacity_;
  std::atomic<size_t> used_{0};
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_CONSTANT_ARENA_H_
