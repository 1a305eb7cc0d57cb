// One compiled specialization (core/cache_entry.h): the guards and the
// executable it owns, and the counters calls update concurrently.

#include "core/cache_entry.h"

#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/symbolic_inputs.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"

namespace guardjit {
namespace {

// Only the counters and the bookkeeping strings change after insertion.
static_assert(std::is_const_v<decltype(CacheEntry::guards)>);
static_assert(std::is_const_v<decltype(CacheEntry::executable)>);
static_assert(!std::is_copy_constructible_v<CacheEntry>);

// A float32 [n] input.
struct OneInput {
  explicit OneInput(int64_t n) : x(*Tensor::Zeros(DType::kFloat32, {n})) {
    view = InputView::Of(x);
  }
  CallSignature sig() const { return {absl::MakeConstSpan(&view, 1), {}}; }
  Tensor x;
  InputView view;
};

std::unique_ptr<CacheEntry> EntryFor(const OneInput& in, int id, int n) {
  return std::make_unique<CacheEntry>(
      id, StaticGuardTree({"x"}, in.sig()),
      std::make_unique<testing::RecordingCompiler::Numbered>(n));
}

TEST(CacheEntryTest, OwnsTheGuardsAndTheExecutableItWasMadeWith) {
  const OneInput three(3);
  const std::unique_ptr<CacheEntry> e = EntryFor(three, 4, 17);
  EXPECT_EQ(e->id, 4);
  EXPECT_TRUE(e->guards.Check(three.sig()));
  const OneInput five(5);
  EXPECT_FALSE(e->guards.Check(five.sig()));
  EXPECT_EQ(e->guards.FailureReason(five.sig()).value_or(""),
            "tensor 'x' size mismatch at index 0. expected 3, actual 5");
  absl::StatusOr<std::vector<Tensor>> out =
      RunToVector(*e->executable, {three.x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].Item().to_int(), 17);
}

TEST(CacheEntryTest, StartsWithNoReasonTimeOrUse) {
  const OneInput in(2);
  const std::unique_ptr<CacheEntry> e = EntryFor(in, 0, 0);
  EXPECT_TRUE(e->reason.empty());
  EXPECT_EQ(e->compile_ms, 0);
  EXPECT_EQ(e->hits.load(), 0);
  EXPECT_EQ(e->last_used.load(), 0u);
}

TEST(CacheEntryTest, ConcurrentHitsAreAllCounted) {
  const OneInput in(2);
  const std::unique_ptr<CacheEntry> e = EntryFor(in, 0, 0);
  constexpr int kThreads = 4, kHits = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&e] {
      for (int k = 0; k < kHits; ++k) {
        e->hits.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(e->hits.load(), int64_t{kThreads} * kHits);
}

}  // namespace
}  // namespace guardjit
