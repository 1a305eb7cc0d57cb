#include "runtime/caching_host_allocator.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(CachingHostAllocatorTest, SizeClassesWasteAtMostAQuarter) {
  EXPECT_EQ(CachingHostAllocator::SizeClass(0), 512u);
  EXPECT_EQ(CachingHostAllocator::SizeClass(512), 512u);
  EXPECT_EQ(CachingHostAllocator::SizeClass(513), 640u);
  EXPECT_EQ(CachingHostAllocator::SizeClass(1024), 1024u);
  EXPECT_EQ(CachingHostAllocator::SizeClass(1025), 1280u);
  for (size_t n = 1; n < (size_t{1} << 30); n = n * 3 + 7) {
    const size_t c = CachingHostAllocator::SizeClass(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 64, 0u);
    if (n > 512) EXPECT_LE(c, n + n / 4 + 64) << n;
  }
}

TEST(CachingHostAllocatorTest, FreedBlocksAreReusedAndCounted) {
  CachingHostAllocator a;
  void* p = a.Allocate(1 << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 1, 1 << 20);
  EXPECT_EQ(a.stats().bytes_in_use, 1 << 20);
  a.Free(p, 1 << 20);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  EXPECT_EQ(a.stats().bytes_cached, 1 << 20);
  // A request of the same class gets the same block back.
  void* q = a.Allocate((1 << 20) - 100);
  EXPECT_EQ(q, p);
  const CachingHostAllocator::Stats s = a.stats();
  EXPECT_EQ(s.system_allocations, 1);
  EXPECT_EQ(s.cache_hits, 1);
  EXPECT_EQ(s.peak_bytes_in_use, 1 << 20);
  a.Free(q, (1 << 20) - 100);
  a.ReleaseCached();
  EXPECT_EQ(a.stats().bytes_cached, 0);
}

TEST(CachingHostAllocatorTest, CachedBytesStayUnderTheCap) {
  CachingHostAllocator a(/*max_cached_bytes=*/3 << 20);
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(a.Allocate(1 << 20));
  for (void* b : blocks) a.Free(b, 1 << 20);
  EXPECT_EQ(a.stats().bytes_cached, 3 << 20);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  CachingHostAllocator none(0);
  none.Free(none.Allocate(4096), 4096);
  EXPECT_EQ(none.stats().bytes_cached, 0);
}

TEST(CachingHostAllocatorTest, ThreadsShareOneAllocator) {
  CachingHostAllocator a;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&a, t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t n = 1000 + 4096 * ((i + t) % 5);
        void* p = a.Allocate(n);
        static_cast<char*>(p)[n - 1] = 1;
        a.Free(p, n);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  // At most 8 blocks of each of the 5 classes were ever live at once.
  EXPECT_LE(a.stats().system_allocations, 40);
}

}  // namespace
}  // namespace guardjit
