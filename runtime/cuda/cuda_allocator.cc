#include "runtime/cuda/cuda_allocator.h"

#include <algorithm>
#include <utility>

#include "core/status_macros.h"
#include "runtime/caching_host_allocator.h"

namespace guardjit {

class CudaCachingAllocator::StreamAllocator : public Allocator {
 public:
  StreamAllocator(CudaCachingAllocator* owner, void* stream)
      : owner_(owner), stream_(stream) {}
  void* Allocate(size_t nbytes) override {
    return owner_->Allocate(nbytes, stream_);
  }
  void Free(void* block, size_t nbytes) override {
    owner_->Free(block, nbytes, stream_);
  }

 private:
  CudaCachingAllocator* owner_;
  void* stream_;
};

std::shared_ptr<Allocator> CudaCachingAllocator::OnStream(void* stream) {
  return std::make_shared<StreamAllocator>(this, stream);
}

absl::StatusOr<CudaCachingAllocator*> CudaCachingAllocator::ForDevice(
    int ordinal) {
  ASSIGN_OR_RETURN(const CudaDevice* device, CudaDevice::Get(ordinal));
  static std::mutex mu;
  // Leaked on purpose, as the devices are: blocks may be freed by tensors
  // the host releases at any time, up to process exit.
  static auto* const allocators =
      new absl::flat_hash_map<int, CudaCachingAllocator*>();
  std::lock_guard<std::mutex> lock(mu);
  CudaCachingAllocator*& slot = (*allocators)[ordinal];
  if (slot == nullptr) slot = new CudaCachingAllocator(device);
  return slot;
}

void* CudaCachingAllocator::Allocate(size_t nbytes, void* stream) {
  const size_t size = CachingHostAllocator::SizeClass(nbytes);
  const CudaDriver& driver = device_->driver();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Block>& list = free_[size];
  // Newest first: the same stream's most recent block is the warmest.
  for (size_t i = list.size(); i-- > 0;) {
    Block& b = list[i];
    if (b.stream != stream && driver.cuEventQuery(b.event) != CUDA_SUCCESS) {
      continue;
    }
    void* ptr = b.ptr;
    events_[ptr] = b.event;
    list.erase(list.begin() + static_cast<ptrdiff_t>(i));
    stats_.bytes_cached -= static_cast<int64_t>(size);
    stats_.bytes_in_use += static_cast<int64_t>(size);
    stats_.peak_bytes_in_use =
        std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    ++stats_.cache_hits;
    return ptr;
  }
  absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
  if (!scope.ok()) return nullptr;
  CUdeviceptr ptr = 0;
  if (driver.cuMemAlloc(&ptr, size) != CUDA_SUCCESS) {
    ReleaseCachedLocked();
    if (driver.cuMemAlloc(&ptr, size) != CUDA_SUCCESS) return nullptr;
  }
  CUevent event = nullptr;
  if (driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    (void)driver.cuMemFree(ptr);
    return nullptr;
  }
  void* block = reinterpret_cast<void*>(ptr);
  events_[block] = event;
  ++stats_.device_allocations;
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.peak_bytes_in_use =
      std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return block;
}

void CudaCachingAllocator::Free(void* ptr, size_t nbytes, void* stream) {
  if (ptr == nullptr) return;
  const size_t size = CachingHostAllocator::SizeClass(nbytes);
  const CudaDriver& driver = device_->driver();
  absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(ptr);
  if (it == events_.end()) return;  // not ours: nothing sane to do
  CUevent event = it->second;
  events_.erase(it);
  // Work on `stream` enqueued before the free may still read or write the
  // block: other streams wait for this event before taking it.
  (void)driver.cuEventRecord(event, static_cast<CUstream>(stream));
  free_[size].push_back(Block{ptr, size, stream, event});
  stats_.bytes_in_use -= static_cast<int64_t>(size);
  stats_.bytes_cached += static_cast<int64_t>(size);
}

void CudaCachingAllocator::ReleaseCachedLocked() {
  const CudaDriver& driver = device_->driver();
  for (auto& [size, list] : free_) {
    for (Block& b : list) {
      (void)driver.cuEventSynchronize(b.event);
      (void)driver.cuEventDestroy(b.event);
      (void)driver.cuMemFree(reinterpret_cast<CUdeviceptr>(b.ptr));
      stats_.bytes_cached -= static_cast<int64_t>(size);
    }
    list.clear();
  }
}

void CudaCachingAllocator::ReleaseCached() {
  absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
  std::lock_guard<std::mutex> lock(mu_);
  ReleaseCachedLocked();
}

CudaCachingAllocator::Stats CudaCachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace guardjit
