// ConstantArena (core/constant_arena.h): slices that are aligned, disjoint
// and hold their bytes, from any thread; blocks of their own past the
// capacity; tensors cut from it that keep it alive and start their own
// storage, as tensors allocated alone do.

#include "core/constant_arena.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "core/host_memory.h"
#include "core/tensor.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(ConstantArenaTest, RoundsToTheAlignmentAndGivesEmptyTensorsASlice) {
  EXPECT_EQ(ConstantArena::Rounded(0), kHostAlign);
  EXPECT_EQ(ConstantArena::Rounded(1), kHostAlign);
  EXPECT_EQ(ConstantArena::Rounded(64), 64u);
  EXPECT_EQ(ConstantArena::Rounded(65), 128u);
  EXPECT_EQ(ConstantArena::Rounded(SIZE_MAX - 3), SIZE_MAX - 3);
}

TEST(ConstantArenaTest, SlicesAreAlignedDisjointAndHoldTheirBytes) {
  const std::vector<size_t> sizes = {0, 1, 63, 64, 65, 4096, 1000, 3};
  size_t capacity = 0;
  for (size_t s : sizes) capacity += ConstantArena::Rounded(s);
  std::shared_ptr<ConstantArena> arena = ConstantArena::Create(capacity);
  ASSERT_NE(arena, nullptr);
  std::vector<std::pair<char*, size_t>> slices;
  for (size_t s : sizes) {
    auto* p = static_cast<char*>(arena->Allocate(s));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Address(p) % kHostAlign, 0u) << s;
    std::memset(p, static_cast<int>(slices.size() + 1), s);
    slices.emplace_back(p, s);
  }
  EXPECT_EQ(arena->used(), capacity);
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto [p, s] = slices[i];
    for (size_t j = 0; j < s; ++j) {
      ASSERT_EQ(p[j], static_cast<char>(i + 1)) << "slice " << i;
    }
    for (size_t k = i + 1; k < slices.size(); ++k) {
      const auto [q, t] = slices[k];
      // [p, p + max(s, 1)) and [q, q + max(t, 1)) do not meet.
      EXPECT_TRUE(p + std::max<size_t>(s, 1) <= q ||
                  q + std::max<size_t>(t, 1) <= p)
          << i << " and " << k;
    }
  }
  for (const auto& [p, s] : slices) arena->Free(p, s);
}

TEST(ConstantArenaTest, PastTheCapacityBlocksAreTheirOwn) {
  std::shared_ptr<ConstantArena> arena = ConstantArena::Create(128);
  ASSERT_NE(arena, nullptr);
  void* inside = arena->Allocate(100);
  void* outside = arena->Allocate(100);  // 128 - 128 left: its own block
  void* big = arena->Allocate(size_t{1} << 20);
  ASSERT_NE(inside, nullptr);
  ASSERT_NE(outside, nullptr);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(arena->used(), 128u);
  std::memset(outside, 7, 100);
  std::memset(big, 7, size_t{1} << 20);
  // Freed as blocks of their own (ASan reports a leak or a bad free else).
  arena->Free(outside, 100);
  arena->Free(big, size_t{1} << 20);
  arena->Free(inside, 100);
}

TEST(ConstantArenaTest, TensorsKeepTheArenaAliveAndStartTheirOwnStorage) {
  Tensor a, b;
  {
    std::shared_ptr<ConstantArena> arena =
        ConstantArena::Create(2 * ConstantArena::Rounded(6 * sizeof(float)));
    ASSERT_NE(arena, nullptr);
    auto ta = Tensor::Empty(DType::kFloat32, {2, 3}, arena);
    auto tb = Tensor::Empty(DType::kFloat32, {6}, arena);
    ASSERT_TRUE(ta.ok() && tb.ok());
    a = *std::move(ta);
    b = *std::move(tb);
  }
  for (int i = 0; i < 6; ++i) {
    a.data_as<float>()[i] = static_cast<float>(i);
    b.data_as<float>()[i] = static_cast<float>(-i);
  }
  EXPECT_NE(a.storage(), b.storage());
  for (const Tensor* t : {&a, &b}) {
    EXPECT_EQ(t->data(), t->storage()->data());  // storage offset 0
    EXPECT_EQ(t->storage()->nbytes(), 6 * sizeof(float));
  }
  EXPECT_EQ(a.data_as<float>()[5], 5.0f);
  EXPECT_EQ(b.data_as<float>()[5], -5.0f);
}

TEST(ConstantArenaTest, ThreadsTakeDisjointSlices) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::shared_ptr<ConstantArena> arena =
      ConstantArena::Create(kThreads * kPerThread * 128);
  ASSERT_NE(arena, nullptr);
  std::vector<std::vector<char*>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto* p = static_cast<char*>(arena->Allocate(100));
        std::memset(p, t, 100);
        taken[t].push_back(p);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<char*> all;
  for (int t = 0; t < kThreads; ++t) {
    for (char* p : taken[t]) {
      EXPECT_EQ(p[0], static_cast<char>(t));
      EXPECT_EQ(p[99], static_cast<char>(t));
      all.push_back(p);
    }
  }
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_GE(all[i] - all[i - 1], 128);
  }
  EXPECT_EQ(arena->used(), size_t{kThreads * kPerThread * 128});
}

}  // namespace
}  // namespace guardjit
