#include "core/guard_table.h"

#include <deque>
#include <memory>
#include <vector>

#include "core/symbolic_inputs.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

// Metadata-only inputs: one float32 tensor [n, 4] (data pointers distinct).
struct Call {
  explicit Call(int64_t n) : sizes{n, 4}, strides{4, 1} {
    view = {DType::kFloat32, Device::Cpu(), false, 2, sizes, strides, &sizes};
  }
  CallSignature sig() const {
    return {absl::Span<const InputView>(&view, 1), {}};
  }
  int64_t sizes[2];
  int64_t strides[2];
  InputView view;
};

std::unique_ptr<CacheEntry> Entry(int id, GuardTree guards, uint64_t tick) {
  auto e = std::make_unique<CacheEntry>(id, std::move(guards), nullptr);
  e->last_used = tick;
  return e;
}

TEST(GuardTableTest, FindsTheMatchingStaticEntryAmongMany) {
  std::deque<Call> calls;
  std::vector<std::unique_ptr<CacheEntry>> owned;
  std::vector<CacheEntry*> entries;
  for (int i = 0; i < 8; ++i) {
    calls.emplace_back(i + 1);
    owned.push_back(Entry(i, StaticGuardTree({"x"}, calls.back().sig()), i));
    entries.push_back(owned.back().get());
  }
  GuardTable table(entries);
  for (int i = 0; i < 8; ++i) {
    CacheEntry* hit = table.Lookup(calls[i].sig());
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(hit->id, i);
  }
  Call other(42);
  EXPECT_EQ(table.Lookup(other.sig()), nullptr);
  EXPECT_EQ(GuardTable().Lookup(other.sig()), nullptr);
}

TEST(GuardTableTest, PrefersTheMostRecentlyUsedOfSeveralMatches) {
  Call c(3);
  GuardTree stat = StaticGuardTree({"x"}, c.sig());
  std::vector<TensorGuard> dyn_tensors = stat.tensors();
  dyn_tensors[0].sizes[0] = std::nullopt;
  dyn_tensors[0].strides[0] = std::nullopt;
  GuardTree dyn(stat.ambient(), dyn_tensors, stat.alias_of());
  auto a = Entry(0, stat, 1);
  auto b = Entry(1, dyn, 2);
  GuardTable table({a.get(), b.get()});
  EXPECT_EQ(table.Lookup(c.sig())->id, 1);  // both match; b is more recent
  // Recency changes only through lookups between compiles (each compile
  // publishes a new table), so a table takes its first answer from the ticks
  // and then keeps checking its last hit first.
  a->last_used = 5;
  GuardTable fresh({a.get(), b.get()});
  EXPECT_EQ(fresh.Lookup(c.sig())->id, 0);
  EXPECT_EQ(fresh.Lookup(c.sig())->id, 0);
  Call bigger(9);
  EXPECT_EQ(fresh.Lookup(bigger.sig())->id,
            1);  // only the dynamic entry matches: the last hit is not taken
  EXPECT_EQ(fresh.Lookup(bigger.sig())->id, 1);
  EXPECT_EQ(fresh.Lookup(c.sig())->id, 1);  // the last hit accepts it too
}

TEST(GuardTableTest, LastHitShortcutNeverReturnsAnEntryThatRejects) {
  // Entries for [1] .. [8]; calls cycle through them and each must get its
  // own entry although the previous call's entry is tried first.
  std::vector<std::unique_ptr<Call>> calls;
  std::vector<std::unique_ptr<CacheEntry>> owned;
  std::vector<CacheEntry*> raw;
  for (int e = 0; e < 8; ++e) {
    calls.push_back(std::make_unique<Call>(e + 1));
    owned.push_back(Entry(e, StaticGuardTree({"x"}, calls.back()->sig()), e));
    raw.push_back(owned.back().get());
  }
  GuardTable table(raw);
  for (int round = 0; round < 3; ++round) {
    for (int e = 0; e < 8; ++e) {
      CacheEntry* hit = table.Lookup(calls[e]->sig());
      ASSERT_NE(hit, nullptr);
      EXPECT_EQ(hit->id, e);
      EXPECT_EQ(table.Lookup(calls[e]->sig())->id, e);  // now the last hit
    }
  }
  Call none(20);
  EXPECT_EQ(table.Lookup(none.sig()), nullptr);
}

}  // namespace
}  // namespace guardjit
