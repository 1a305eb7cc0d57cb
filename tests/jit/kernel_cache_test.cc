#include "jit/kernel_cache.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

using IntCache = KernelCache<std::shared_ptr<const int>>;

KernelCacheKey Key(const std::string& source) {
  return KernelCacheKey::Make("test", "cpu", "", source);
}

std::shared_ptr<const int> Int(int v) { return std::make_shared<const int>(v); }

TEST(KernelCacheTest, EvictsTheLeastRecentlyUsedPastItsCapacity) {
  IntCache cache(2);
  std::weak_ptr<const int> b;
  {
    auto value = Int(2);
    b = value;
    cache.Insert(Key("a"), Int(1));
    cache.Insert(Key("b"), std::move(value));
  }
  ASSERT_TRUE(cache.Lookup(Key("a")).has_value());  // a is now the newest
  // A value a program still holds survives its eviction.
  const std::shared_ptr<const int> c = Int(3);
  cache.Insert(Key("c"), c);
  EXPECT_FALSE(cache.Lookup(Key("b")).has_value());
  EXPECT_TRUE(b.expired());  // released with its eviction: nobody held it
  cache.Insert(Key("d"), Int(4));
  cache.Insert(Key("e"), Int(5));
  EXPECT_FALSE(cache.Lookup(Key("c")).has_value());
  EXPECT_EQ(*c, 3);
  EXPECT_EQ(c.use_count(), 1);
  const KernelCacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 5);
  EXPECT_EQ(stats.evictions, 3);
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(stats.hits, 1);
  // A key already cached keeps its value and is not counted again.
  cache.Insert(Key("e"), Int(50));
  EXPECT_EQ(**cache.Lookup(Key("e")), 5);
  EXPECT_EQ(cache.stats().compiles, 5);

  IntCache none(0);
  none.Insert(Key("a"), Int(1));
  EXPECT_FALSE(none.Lookup(Key("a")).has_value());
  EXPECT_EQ(none.stats().evictions, 1);
}

// The hash only picks the bucket: another source with the same hash (and
// the same source under another backend, target or options) is a miss.
TEST(KernelCacheTest, KeysCompareTheWholeSourceAndEveryField) {
  IntCache cache(8);
  KernelCacheKey a = Key("kernel a");
  KernelCacheKey collides = Key("kernel b");
  collides.source_hash = a.source_hash;
  cache.Insert(a, Int(1));
  EXPECT_FALSE(cache.Lookup(collides).has_value());
  cache.Insert(collides, Int(2));
  EXPECT_EQ(**cache.Lookup(a), 1);
  EXPECT_EQ(**cache.Lookup(collides), 2);
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("other", "cpu", "", "kernel a")));
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("test", "gpu", "", "kernel a")));
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("test", "cpu", "-O0", "kernel a")));
}

// Two threads missing one key compile it once: the second waits for the
// first's compile and takes its value as a hit.
TEST(KernelCacheTest, ConcurrentMissesOfOneKeyCompileOnce) {
  IntCache cache(8);
  std::atomic<int> compiles{0};
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto slow_compile = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    if (compiles.fetch_add(1) == 0) {
      started.set_value();
      released.wait();
    }
    return Int(7);
  };
  absl::StatusOr<std::shared_ptr<const int>> first, second;
  std::thread t1(
      [&] { first = cache.GetOrCompile(Key("k"), "k", slow_compile); });
  started.get_future().wait();  // t1 is compiling
  std::thread t2(
      [&] { second = cache.GetOrCompile(Key("k"), "k", slow_compile); });
  // t2 is waiting for t1's compile (it cannot have compiled: compiles is 1).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(compiles.load(), 1);
  release.set_value();
  t1.join();
  t2.join();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().hits, 1);
}

TEST(KernelCacheTest, AFailedCompileIsNotCached) {
  IntCache cache(8);
  auto fails = []() -> absl::StatusOr<std::shared_ptr<const int>> {
    return absl::InternalError("no");
  };
  EXPECT_EQ(cache.GetOrCompile(Key("k"), "k", fails).status().code(),
            absl::StatusCode::kInternal);
  auto works = []() -> absl::StatusOr<std::shared_ptr<const int>> {
    return Int(1);
  };
  auto value = cache.GetOrCompile(Key("k"), "k", works);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(cache.stats().compiles, 1);
}

TEST(KernelCacheTest, ForbiddenCompilesFailMissesAndServeHits) {
  IntCache cache(8);
  int compiles = 0;
  auto compile = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    ++compiles;
    return Int(1);
  };
  ASSERT_TRUE(cache.GetOrCompile(Key("warm"), "warm", compile).ok());
  {
    ScopedForbidKernelCompiles forbid;
    EXPECT_TRUE(KernelCompilesForbidden());
    EXPECT_TRUE(cache.GetOrCompile(Key("warm"), "warm", compile).ok());
    absl::StatusOr<std::shared_ptr<const int>> cold = cache.GetOrCompile(
        KernelCacheKey::Make("llvm", "x86_64-test", "", "cold"), "fused_0",
        compile);
    EXPECT_EQ(cold.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(IsKernelCacheMissError(cold.status()));
    EXPECT_THAT(cold.status().message(),
                HasSubstr("kernel cache miss for 'fused_0' on "
                          "llvm:x86_64-test with GJ_ASSERT_NO_COMPILE set"));
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_FALSE(KernelCompilesForbidden());
  EXPECT_FALSE(IsKernelCacheMissError(absl::FailedPreconditionError("x")));
}

}  // namespace
}  // namespace guardjit
