#include "runtime/caching_host_allocator.h"

#include <algorithm>
#include <cstdlib>

#include "absl/numeric/bits.h"
#include "core/host_memory.h"

namespace guardjit {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMinClass = 512;

}  // namespace

size_t CachingHostAllocator::SizeClass(size_t nbytes) {
  if (nbytes <= kMinClass) return kMinClass;
  // Four classes per power of two: 2^k * {1, 1.25, 1.5, 1.75}.
  const int top = 63 - absl::countl_zero(static_cast<uint64_t>(nbytes - 1));
  const size_t step = size_t{1} << (top - 2);
  const size_t rounded = (nbytes + step - 1) / step * step;
  return (rounded + kAlign - 1) / kAlign * kAlign;
}

CachingHostAllocator::~CachingHostAllocator() { ReleaseCached(); }

void* CachingHostAllocator::Allocate(size_t nbytes) {
  const size_t size = SizeClass(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
      stats_.bytes_in_use += static_cast<int64_t>(size);
      stats_.peak_bytes_in_use =
          std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      ++stats_.cache_hits;
      return block;
    }
  }
  void* block = AllocateHostMemory(size);
  if (block == nullptr) {
    // Cached blocks of other classes may be what the system lacks.
    ReleaseCached();
    block = AllocateHostMemory(size);
    if (block == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.peak_bytes_in_use =
      std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  ++stats_.system_allocations;
  return block;
}

void CachingHostAllocator::Free(void* block, size_t nbytes) {
  if (block == nullptr) return;
  const size_t size = SizeClass(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytes_in_use -= static_cast<int64_t>(size);
    if (stats_.bytes_cached + static_cast<int64_t>(size) <= max_cached_) {
      free_[size].push_back(block);
      stats_.bytes_cached += static_cast<int64_t>(size);
      return;
    }
  }
  FreeHostMemory(block);
}

CachingHostAllocator::Stats CachingHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingHostAllocator::ReleaseCached() {
  absl::flat_hash_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(free_);
    stats_.bytes_cached = 0;
  }
  for (auto& [size, list] : blocks) {
    for (void* block : list) FreeHostMemory(block);
  }
}

const std::shared_ptr<CachingHostAllocator>& CachingHostAllocator::Default() {
  static const auto* instance = new std::shared_ptr<CachingHostAllocator>(
      std::make_shared<CachingHostAllocator>());
  return *instance;
}

}  // namespace guardjit
