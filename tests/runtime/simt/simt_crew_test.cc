// The SIMT emulator's crew (runtime/simt/simt_crew.h) running plain C++
// entry points: every thread of every block once, with CUDA's builtin
// variables; __syncthreads and its count/and/or forms; threads that return
// early leaving the barrier and the warp; warp shuffles and ballots. The
// crew starts real threads (one per thread of a block).

#include "runtime/simt/simt_crew.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/simt/simt_emulation_header.h"

namespace guardjit {
namespace {

uint32_t LinearThread(const SimtThreadState* s) {
  return s->thread_idx.x +
         s->block_dim.x * (s->thread_idx.y + s->block_dim.y * s->thread_idx.z);
}
uint32_t LinearBlock(const SimtThreadState* s) {
  return s->block_idx.x +
         s->grid_dim.x * (s->block_idx.y + s->grid_dim.y * s->block_idx.z);
}
uint32_t BlockThreads(const SimtThreadState* s) {
  return s->block_dim.x * s->block_dim.y * s->block_dim.z;
}

// params[0]: int[blocks * threads] counting the runs of each thread;
// params[1]: uint32_t[blocks * threads] recording its lane.
void CountRuns(SimtThreadState* s, void* const* params) {
  const uint32_t i = LinearBlock(s) * BlockThreads(s) + LinearThread(s);
  static_cast<std::atomic<int>*>(params[0])[i].fetch_add(1);
  static_cast<uint32_t*>(params[1])[i] = s->lane;
}

TEST(SimtCrewThreadsTest, EveryThreadOfEveryBlockRunsOnce) {
  SimtCrew crew;
  const SimtUint3 grid{3, 2, 2}, block{8, 4, 2};
  const size_t n = 12 * 64;
  std::vector<std::atomic<int>> runs(n);
  std::vector<uint32_t> lanes(n, 99);
  void* params[] = {runs.data(), lanes.data()};
  crew.Run(CountRuns, params, grid, block);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(runs[i].load(), 1) << i;
    EXPECT_EQ(lanes[i], (i % 64) % 32) << i;
  }
  // The same crew runs another shape (its threads are kept).
  std::vector<std::atomic<int>> again(5 * 3);
  std::vector<uint32_t> lanes2(5 * 3);
  void* params2[] = {again.data(), lanes2.data()};
  crew.Run(CountRuns, params2, {5, 1, 1}, {3, 1, 1});
  for (const std::atomic<int>& r : again) EXPECT_EQ(r.load(), 1);
}

// params[0]: int shared[threads] (reused by every block, as __shared__ is);
// params[1]: int out[blocks * threads]: each thread's right neighbour's
// value, read after __syncthreads; params[2]: int counts[blocks * threads].
void NeighbourAfterSync(SimtThreadState* s, void* const* params) {
  int* shared = static_cast<int*>(params[0]);
  const uint32_t t = LinearThread(s), n = BlockThreads(s);
  const uint32_t i = LinearBlock(s) * n + t;
  shared[t] = static_cast<int>(LinearBlock(s) * 1000 + t);
  const int even = s->ops->sync_threads(s, kSimtSyncCount, t % 2 == 0);
  static_cast<int*>(params[1])[i] = shared[(t + 1) % n];
  static_cast<int*>(params[2])[i] = even;
  // Nobody overwrites shared[] before every thread has read it.
  s->ops->sync_threads(s, kSimtSyncCount, 0);
}

TEST(SimtCrewThreadsTest, SyncThreadsIsABlockBarrier) {
  SimtCrew crew;
  const uint32_t threads = 64, blocks = 4;
  std::vector<int> shared(threads), out(threads * blocks, -1),
      counts(threads * blocks, -1);
  void* params[] = {shared.data(), out.data(), counts.data()};
  crew.Run(NeighbourAfterSync, params, {blocks, 1, 1}, {threads, 1, 1});
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < threads; ++t) {
      EXPECT_EQ(out[b * threads + t],
                static_cast<int>(b * 1000 + (t + 1) % threads))
          << b << " " << t;
      EXPECT_EQ(counts[b * threads + t], 32);
    }
  }
}

// Threads t >= half return at once; the others meet at a barrier whose
// and/or/count see only them. params[0]: int out[threads * 3].
void HalfReturnEarly(SimtThreadState* s, void* const* params) {
  const uint32_t t = LinearThread(s), n = BlockThreads(s);
  if (t >= n / 2) return;
  int* out = static_cast<int*>(params[0]);
  out[t * 3] = s->ops->sync_threads(s, kSimtSyncCount, 1);
  out[t * 3 + 1] = s->ops->sync_threads(s, kSimtSyncAnd, t != 0);
  out[t * 3 + 2] = s->ops->sync_threads(s, kSimtSyncOr, t == 5);
}

TEST(SimtCrewThreadsTest, ReturnedThreadsLeaveTheBarrier) {
  SimtCrew crew;
  const uint32_t threads = 48;
  std::vector<int> out(threads * 3, -1);
  void* params[] = {out.data()};
  crew.Run(HalfReturnEarly, params, {2, 1, 1}, {threads, 1, 1});
  for (uint32_t t = 0; t < threads / 2; ++t) {
    EXPECT_EQ(out[t * 3], static_cast<int>(threads / 2)) << t;
    EXPECT_EQ(out[t * 3 + 1], 0) << t;  // thread 0's predicate is false
    EXPECT_EQ(out[t * 3 + 2], 1) << t;  // thread 5's is true
  }
  for (uint32_t t = threads / 2; t < threads; ++t) EXPECT_EQ(out[t * 3], -1);
}

// params[0]: unsigned long long out[threads * 2]: the value shuffled from
// the next lane, and the ballot of lanes divisible by 3.
void ShuffleAndBallot(SimtThreadState* s, void* const* params) {
  const uint32_t t = LinearThread(s);
  auto* out = static_cast<unsigned long long*>(params[0]);
  const int src = static_cast<int>((s->lane + 1) % 32);
  out[t * 2] =
      s->ops->warp(s, kSimtWarpShuffle, 0xffffffffu, 100ull * t + s->lane, src);
  out[t * 2 + 1] =
      s->ops->warp(s, kSimtWarpBallot, 0xffffffffu, s->lane % 3 == 0, 0);
}

TEST(SimtCrewThreadsTest, WarpShuffleAndBallotStayInTheirWarp) {
  SimtCrew crew;
  const uint32_t threads = 64;  // two warps
  std::vector<unsigned long long> out(threads * 2);
  void* params[] = {out.data()};
  crew.Run(ShuffleAndBallot, params, {1, 1, 1}, {threads, 1, 1});
  unsigned long long every_third = 0;
  for (uint32_t lane = 0; lane < 32; lane += 3) every_third |= 1ull << lane;
  for (uint32_t t = 0; t < threads; ++t) {
    const uint32_t warp = t / 32, src_lane = (t % 32 + 1) % 32;
    EXPECT_EQ(out[t * 2], 100ull * (warp * 32 + src_lane) + src_lane) << t;
    EXPECT_EQ(out[t * 2 + 1], every_third) << t;
  }
}

}  // namespace
}  // namespace guardjit
