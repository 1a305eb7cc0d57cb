#ifndef GUARDJIT_RUNTIME_CACHING_HOST_ALLOCATOR_H_
#define GUARDJIT_RUNTIME_CACHING_HOST_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "core/allocator.h"

namespace guardjit {

// Host memory with freed blocks kept for reuse, as PyTorch's caching
// allocators do: a call that allocates the same sizes as the last one gets
// the same pages back, with no system call, page fault or zeroing. Sizes are
// rounded up to size classes (512 B, then four classes per power of two:
// at most 25% waste) and free blocks are binned by class. Cached bytes stay
// below `max_cached_bytes` (a block freed past it goes back to the system);
// ReleaseCached() returns every cached block. Thread-safe.
class CachingHostAllocator : public Allocator {
 public:
  struct Stats {
    int64_t bytes_in_use = 0;       // blocks handed out, by class size
    int64_t bytes_cached = 0;       // free blocks kept for reuse
    int64_t peak_bytes_in_use = 0;  // since creation
    int64_t system_allocations = 0;
    int64_t cache_hits = 0;
  };

  static constexpr int64_t kDefaultMaxCachedBytes = int64_t{1} << 30;
  explicit CachingHostAllocator(
      int64_t max_cached_bytes = kDefaultMaxCachedBytes)
      : max_cached_(max_cached_bytes) {}
  ~CachingHostAllocator() override;

  void* Allocate(size_t nbytes) override;
  void Free(void* block, size_t nbytes) override;

  Stats stats() const;
  void ReleaseCached();

  // The class `nbytes` is served from (for tests).
  static size_t SizeClass(size_t nbytes);

  // A process-wide instance, for executables run without a context's.
  static const std::shared_ptr<CachingHostAllocator>& Default();

 private:
  const int64_t max_cached_;
  mutable std::mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CACHING_HOST_ALLOCATOR_H_
