// The device caching allocator (runtime/cuda/cuda_allocator.h) on the
// emulated device: part of cuda_emulated_tests, whose main installs the
// emulated driver table. The allocator is process-wide, so each test
// releases the cache first and reads the statistics as differences.

#include "runtime/cuda/cuda_allocator.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/caching_host_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_driver.h"

namespace guardjit {
namespace {

class CudaAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<CudaCachingAllocator*> pool =
        CudaCachingAllocator::ForDevice(0);
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *pool;
    pool_->ReleaseCached();
    before_ = pool_->stats();
  }

  int64_t Class(size_t nbytes) {
    return static_cast<int64_t>(CachingHostAllocator::SizeClass(nbytes));
  }

  CudaCachingAllocator* pool_ = nullptr;
  CudaCachingAllocator::Stats before_;
};

TEST_F(CudaAllocatorTest, ForDeviceIsOnePerDevice) {
  EXPECT_EQ(*CudaCachingAllocator::ForDevice(0), pool_);
  EXPECT_EQ(&pool_->device(), *CudaDevice::Get(0));
  EXPECT_FALSE(CudaCachingAllocator::ForDevice(-1).ok());
}

TEST_F(CudaAllocatorTest, FreedBlockIsReusedOnTheSameStream) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  void* p = a->Allocate(1000);
  ASSERT_NE(p, nullptr);
  CudaCachingAllocator::Stats s = pool_->stats();
  EXPECT_EQ(s.device_allocations, before_.device_allocations + 1);
  EXPECT_EQ(s.bytes_in_use, before_.bytes_in_use + Class(1000));
  a->Free(p, 1000);
  s = pool_->stats();
  EXPECT_EQ(s.bytes_in_use, before_.bytes_in_use);
  EXPECT_EQ(s.bytes_cached, Class(1000));
  // Any size of the same class takes the cached block.
  void* again = a->Allocate(static_cast<size_t>(Class(1000)));
  EXPECT_EQ(again, p);
  s = pool_->stats();
  EXPECT_EQ(s.cache_hits, before_.cache_hits + 1);
  EXPECT_EQ(s.device_allocations, before_.device_allocations + 1);
  EXPECT_EQ(s.bytes_cached, 0);
  a->Free(again, static_cast<size_t>(Class(1000)));
}

TEST_F(CudaAllocatorTest, OtherSizeClassesAllocateAnew) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  void* p = a->Allocate(1000);
  a->Free(p, 1000);
  const size_t bigger = static_cast<size_t>(Class(1000)) + 1;
  ASSERT_GT(Class(bigger), Class(1000));
  void* q = a->Allocate(bigger);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  const CudaCachingAllocator::Stats s = pool_->stats();
  EXPECT_EQ(s.device_allocations, before_.device_allocations + 2);
  EXPECT_EQ(s.cache_hits, before_.cache_hits);
  EXPECT_EQ(s.bytes_cached, Class(1000));
  a->Free(q, bigger);
}

TEST_F(CudaAllocatorTest, PeakCountsBlocksInUseTogether) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  void* p = a->Allocate(4096);
  void* q = a->Allocate(4096);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_GE(pool_->stats().peak_bytes_in_use,
            before_.bytes_in_use + 2 * Class(4096));
  a->Free(p, 4096);
  a->Free(q, 4096);
  EXPECT_EQ(pool_->stats().bytes_cached, 2 * Class(4096));
}

TEST_F(CudaAllocatorTest, ReleaseCachedFreesTheDeviceMemory) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  void* p = a->Allocate(1 << 20);
  ASSERT_NE(p, nullptr);
  a->Free(p, 1 << 20);
  const int64_t live = EmulatedCudaDriver::counters().live_device_bytes;
  pool_->ReleaseCached();
  EXPECT_EQ(pool_->stats().bytes_cached, 0);
  EXPECT_EQ(EmulatedCudaDriver::counters().live_device_bytes,
            live - Class(1 << 20));
  // The next allocation is a new device block.
  void* q = a->Allocate(1 << 20);
  EXPECT_EQ(pool_->stats().device_allocations, before_.device_allocations + 2);
  a->Free(q, 1 << 20);
}

TEST_F(CudaAllocatorTest, CompletedBlocksMoveBetweenStreams) {
  const CudaDriver& driver = pool_->device().driver();
  CUstream stream = nullptr;
  ASSERT_EQ(driver.cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  std::shared_ptr<Allocator> b = pool_->OnStream(stream);
  const int64_t records = EmulatedCudaDriver::counters().event_records;
  void* p = a->Allocate(512);
  a->Free(p, 512);
  // The free records an event on the freeing stream; the emulated device
  // has finished everything, so the other stream may take the block.
  EXPECT_EQ(EmulatedCudaDriver::counters().event_records, records + 1);
  void* q = b->Allocate(512);
  EXPECT_EQ(q, p);
  EXPECT_EQ(pool_->stats().cache_hits, before_.cache_hits + 1);
  b->Free(q, 512);
  pool_->ReleaseCached();
  EXPECT_EQ(driver.cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST_F(CudaAllocatorTest, ForeignAndNullPointersAreIgnored) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  std::vector<char> host(64);
  a->Free(host.data(), host.size());
  a->Free(nullptr, 16);
  const CudaCachingAllocator::Stats s = pool_->stats();
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_in_use, before_.bytes_in_use);
}

TEST_F(CudaAllocatorTest, ZeroBytesIsAValidBlock) {
  std::shared_ptr<Allocator> a = pool_->OnStream(nullptr);
  void* p = a->Allocate(0);
  EXPECT_NE(p, nullptr);
  a->Free(p, 0);
}

}  // namespace
}  // namespace guardjit
