#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// Every index visited exactly once, chunks at least `grain` long.
void ExpectCovers(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> seen(n);
  std::atomic<int> short_chunks{0};
  pool.ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
    if (end - begin < grain && end != n) ++short_chunks;
    for (int64_t i = begin; i < end; ++i) ++seen[i];
  });
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  EXPECT_EQ(short_chunks.load(), 0);
}

TEST(ThreadPoolTest, CoversRangesExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    for (int64_t grain : {1, 16, 5000}) ExpectCovers(pool, n, grain);
  }
}

TEST(ThreadPoolTest, UsesWorkerThreads) {
  ThreadPool pool(3);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  pool.ParallelFor(64, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mu);
    ids.push_back(std::this_thread::get_id());
  });
  std::sort(ids.begin(), ids.end());
  EXPECT_GT(std::unique(ids.begin(), ids.end()) - ids.begin(), 1);
}

TEST(ThreadPoolTest, NestedAndConcurrentLoopsComplete) {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        pool.ParallelFor(10, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            pool.ParallelFor(10, 1,
                             [&](int64_t b, int64_t e) { total += e - b; });
          }
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 10 * 10);
}

TEST(ThreadPoolTest, SingleThreadPoolRunsInline) {
  ThreadPool pool(1);
  ExpectCovers(pool, 1000, 10);
  EXPECT_EQ(pool.parallel_loops(), 0u);
}

// Only loops split across the workers count: not one chunk, not a loop
// nested in a loop body (it runs on its caller's thread).
TEST(ThreadPoolTest, CountsLoopsSplitAcrossWorkers) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.parallel_loops(), 0u);
  pool.ParallelFor(100, 1, [](int64_t, int64_t) {});
  EXPECT_EQ(pool.parallel_loops(), 1u);
  pool.ParallelFor(100, 100, [](int64_t, int64_t) {});
  EXPECT_EQ(pool.parallel_loops(), 1u);
  pool.ParallelFor(10, 1, [&](int64_t, int64_t) {
    pool.ParallelFor(10, 1, [](int64_t, int64_t) {});
  });
  EXPECT_EQ(pool.parallel_loops(), 2u);
}

}  // namespace
}  // namespace guardjit
