// DeviceFaultPool's graph sets (jit/device_faults.h) over a module whose
// fault words are host counters: which key's set a call gets, when a set may
// be taken over by another key, and when it may not (lent to a call, or
// pending).

#include "runtime/program/device_faults.h"

#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/run_context.h"
#include "gtest/gtest.h"
#include "runtime/program/kernel_module.h"

namespace guardjit {
namespace {

// Words that fail nothing; MarkEnd leaves them not Done until `done` is set.
class FakeWords : public DeviceFaultWords {
 public:
  explicit FakeWords(const bool* done) : done_(done) {}
  uint64_t device_address(int index) const override {
    return reinterpret_cast<uintptr_t>(this) + index;
  }
  int size() const override { return 1; }
  std::pair<int, int64_t> Take() override { return {-1, 0}; }
  absl::Status Wait(const RunContext&) override { return absl::OkStatus(); }
  absl::Status MarkEnd(const RunContext&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> Done() const override { return *done_; }

 private:
  const bool* done_;
};

class FakeModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int, void* const*, absl::Span<const int64_t>,
                                 const DeviceFaultWords*,
                                 const RunContext&) const override {
    return 0;
  }
  absl::StatusOr<std::unique_ptr<DeviceFaultWords>> NewFaultWords()
      const override {
    ++made;
    return std::unique_ptr<DeviceFaultWords>(new FakeWords(&done));
  }
  mutable int made = 0;
  bool done = true;
};

const DeviceFaultWords* Words(DeviceFaultPool& pool, int64_t key,
                              size_t graphs_kept = 0) {
  const int64_t symbols[] = {key};
  absl::StatusOr<const DeviceFaultWords*> words =
      pool.GraphWords(symbols, graphs_kept);
  EXPECT_TRUE(words.ok()) << words.status();
  return words.ok() ? *words : nullptr;
}

void Replayed(DeviceFaultPool& pool, int64_t key, bool synchronize) {
  const int64_t symbols[] = {key};
  RunContext ctx;
  absl::StatusOr<DeviceFault> fault =
      pool.GraphReplayed(ctx, symbols, synchronize);
  ASSERT_TRUE(fault.ok()) << fault.status();
  EXPECT_EQ(fault->kernel, -1);
}

void Unused(DeviceFaultPool& pool, int64_t key) {
  const int64_t symbols[] = {key};
  pool.GraphUnused(symbols);
}

// Each key keeps its set; past kMinGraphSets keys a new key takes over the
// least recently used idle one instead of making another.
TEST(DeviceFaultPoolTest, GraphKeysKeepTheirSetsUntilTakenOver) {
  FakeModule module;
  DeviceFaultPool pool(&module);
  const size_t n = DeviceFaultPool::kMinGraphSets;
  std::vector<const DeviceFaultWords*> sets;
  for (size_t k = 0; k < n; ++k) {
    sets.push_back(Words(pool, static_cast<int64_t>(k)));
    Replayed(pool, static_cast<int64_t>(k), /*synchronize=*/true);
  }
  EXPECT_EQ(module.made, static_cast<int>(n));
  // Key 0 again: its own set.
  EXPECT_EQ(Words(pool, 0), sets[0]);
  Replayed(pool, 0, true);
  // A new key takes over key 1's set (the least recently used).
  EXPECT_EQ(Words(pool, 100), sets[1]);
  Replayed(pool, 100, true);
  EXPECT_EQ(module.made, static_cast<int>(n));
}

// A set lent to a call that has not given it back is never taken over,
// whether the call is between its replay and GraphReplayed or ended
// without replaying; GraphUnused gives it back.
TEST(DeviceFaultPoolTest, LentSetsAreNotTakenOverUntilGivenBack) {
  FakeModule module;
  DeviceFaultPool pool(&module);
  const size_t n = DeviceFaultPool::kMinGraphSets;
  std::vector<const DeviceFaultWords*> sets;
  for (size_t k = 0; k < n; ++k) {
    sets.push_back(Words(pool, static_cast<int64_t>(k)));  // all still lent
  }
  const DeviceFaultWords* fresh = Words(pool, 100);
  EXPECT_EQ(
      std::set<const DeviceFaultWords*>(sets.begin(), sets.end()).count(fresh),
      0u);
  EXPECT_EQ(module.made, static_cast<int>(n) + 1);
  Unused(pool, 100);
  // Key 3's call ended without a replay (a refusal): its set is idle again
  // and the next new key takes it over.
  Unused(pool, 3);
  EXPECT_EQ(Words(pool, 200), sets[3]);
  EXPECT_EQ(module.made, static_cast<int>(n) + 1);
}

// Two calls hold key 5's set at once: one giving it back leaves it lent to
// the other.
TEST(DeviceFaultPoolTest, ASetLentTwiceStaysLentUntilBothGiveItBack) {
  FakeModule module;
  DeviceFaultPool pool(&module);
  const size_t n = DeviceFaultPool::kMinGraphSets;
  std::vector<const DeviceFaultWords*> sets;
  for (size_t k = 0; k < n; ++k) {
    sets.push_back(Words(pool, static_cast<int64_t>(k)));
    if (k != 5) Unused(pool, static_cast<int64_t>(k));
  }
  EXPECT_EQ(Words(pool, 5), sets[5]);  // lent twice
  Replayed(pool, 5, true);
  // Every other set is older than key 5's and idle: taken in LRU order.
  for (size_t k = 0; k < n; ++k) {
    if (k == 5) continue;
    EXPECT_EQ(Words(pool, 100 + static_cast<int64_t>(k)), sets[k]) << k;
  }
  // Only key 5's is left, still lent once: a new key makes a new set.
  EXPECT_NE(Words(pool, 300), sets[5]);
  Replayed(pool, 5, true);
  Unused(pool, 300);
  EXPECT_EQ(module.made, static_cast<int>(n) + 1);
}

// A replay ended asynchronously leaves its set pending until the device is
// past it: not taken over before then.
TEST(DeviceFaultPoolTest, PendingSetsAreNotTakenOver) {
  FakeModule module;
  module.done = false;
  DeviceFaultPool pool(&module);
  const size_t n = DeviceFaultPool::kMinGraphSets;
  for (size_t k = 0; k < n; ++k) {
    Words(pool, static_cast<int64_t>(k));
    Replayed(pool, static_cast<int64_t>(k), /*synchronize=*/false);
  }
  Words(pool, 100);
  EXPECT_EQ(module.made, static_cast<int>(n) + 1);
}

// An entry keeping more graphs than kMinGraphSets keeps a set per graph:
// its keys' word addresses do not move (which would re-capture them).
TEST(DeviceFaultPoolTest, SetsFollowTheGraphsAnEntryKeeps) {
  FakeModule module;
  DeviceFaultPool pool(&module);
  const size_t kept = DeviceFaultPool::kMinGraphSets + 8;
  std::vector<const DeviceFaultWords*> sets;
  for (size_t k = 0; k < kept; ++k) {
    sets.push_back(Words(pool, static_cast<int64_t>(k), kept));
    Replayed(pool, static_cast<int64_t>(k), true);
  }
  EXPECT_EQ(module.made, static_cast<int>(kept));
  for (size_t k = 0; k < kept; ++k) {
    EXPECT_EQ(Words(pool, static_cast<int64_t>(k), kept), sets[k]) << k;
    Replayed(pool, static_cast<int64_t>(k), true);
  }
  // One key more than the entry keeps: a set is taken over.
  Words(pool, 1000, kept);
  EXPECT_EQ(module.made, static_cast<int>(kept));
}

}  // namespace
}  // namespace guardjit
