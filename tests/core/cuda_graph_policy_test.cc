// Checks core/cuda_graph_policy.h: reduce-overhead mode's default limits
// (8 graphs per entry, a 1 GiB private pool, operands up to 1 MiB staged)
// and counters that start at zero and sum what every entry adds.

#include "core/cuda_graph_policy.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(CudaGraphPolicyTest, DefaultLimits) {
  const CudaGraphPolicy policy;
  EXPECT_EQ(kDefaultMaxGraphsPerEntry, 8);
  EXPECT_EQ(policy.max_graphs_per_entry, 8);
  EXPECT_EQ(policy.max_pool_bytes, 1073741824);
  EXPECT_EQ(policy.max_staged_bytes, 1048576);
  EXPECT_EQ(policy.counters, nullptr);
}

TEST(CudaGraphPolicyTest, CountersStartAtZero) {
  const CudaGraphCounters counters;
  EXPECT_EQ(counters.recorded.load(), 0);
  EXPECT_EQ(counters.replays.load(), 0);
  EXPECT_EQ(counters.pointer_updates.load(), 0);
  EXPECT_EQ(counters.recaptures.load(), 0);
  EXPECT_EQ(counters.evictions.load(), 0);
  EXPECT_EQ(counters.pool_bytes.load(), 0);
}

TEST(CudaGraphPolicyTest, EntriesCopyingAPolicyShareItsCounters) {
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.counters = &counters;
  // Each of 4 entries holds a copy of the function's policy and adds to the
  // one set of counters from its own thread.
  std::vector<std::thread> entries;
  for (int e = 0; e < 4; ++e) {
    entries.emplace_back([copy = policy] {
      for (int i = 0; i < 1000; ++i) {
        copy.counters->replays.fetch_add(1, std::memory_order_relaxed);
      }
      copy.counters->recorded.fetch_add(1, std::memory_order_relaxed);
      copy.counters->pool_bytes.fetch_add(4096, std::memory_order_relaxed);
    });
  }
  for (std::thread& t : entries) t.join();
  EXPECT_EQ(counters.replays.load(), 4000);
  EXPECT_EQ(counters.recorded.load(), 4);
  EXPECT_EQ(counters.pool_bytes.load(), 16384);
}

}  // namespace
}  // namespace guardjit
