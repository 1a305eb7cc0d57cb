#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_ALLOCATOR_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_ALLOCATOR_H_

// Device memory for outputs and intermediates of CUDA calls: a stream-ordered
// caching allocator, one per device per process (the host allocator's design,
// runtime/caching_host_allocator.h, and PyTorch's CUDA caching allocator's).
// Blocks are rounded to the host allocator's size classes and kept on free
// lists per class. A freed block records an event on the stream that used it
// last: the same stream reuses it at once (stream order makes that safe), any
// other stream once the event has completed. cuMemAlloc runs only on a miss;
// when it fails every cached block of the device is released and the
// allocation retried once.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/allocator.h"
#include "runtime/cuda/cuda_device.h"

namespace guardjit {

class CudaCachingAllocator {
 public:
  struct Stats {
    int64_t bytes_in_use = 0;  // blocks handed out, by class size
    int64_t bytes_cached = 0;  // free blocks kept for reuse
    int64_t peak_bytes_in_use = 0;
    int64_t device_allocations = 0;  // cuMemAlloc calls
    int64_t cache_hits = 0;
  };

  // The process-wide allocator of device `ordinal` (created on first use).
  static absl::StatusOr<CudaCachingAllocator*> ForDevice(int ordinal);

  // An Allocator whose blocks are used on `stream` (a CUstream; null = the
  // legacy default stream): what a call's RunContext gets. Cheap.
  std::shared_ptr<Allocator> OnStream(void* stream);

  Stats stats() const;
  // Frees every cached block (waiting for their events).
  void ReleaseCached();
  const CudaDevice& device() const { return *device_; }

 private:
  class StreamAllocator;
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;          // class size
    void* stream = nullptr;   // the stream that used it last
    CUevent event = nullptr;  // recorded on `stream` when freed
  };
  explicit CudaCachingAllocator(const CudaDevice* device) : device_(device) {}
  void* Allocate(size_t nbytes, void* stream);
  void Free(void* ptr, size_t nbytes, void* stream);
  void ReleaseCachedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const CudaDevice* device_;
  mutable std::mutex mu_;
  absl::flat_hash_map<size_t, std::vector<Block>> free_ ABSL_GUARDED_BY(mu_);
  // Events of blocks in use, by pointer (created with the block, kept).
  absl::flat_hash_map<void*, CUevent> events_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_ALLOCATOR_H_
