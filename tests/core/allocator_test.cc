// The Allocator interface (core/allocator.h) as tensors use it: a tensor made
// with an allocator takes its memory from Allocate and hands the same block
// and size back to Free once its last view is gone; a null block is an
// out-of-memory error.

#include "core/allocator.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// Records every call; hands out 64-byte aligned blocks (or null once
// `fail` is set).
class RecordingAllocator : public Allocator {
 public:
  void* Allocate(size_t nbytes) override {
    allocated.push_back(nbytes);
    if (fail) return nullptr;
    size_t rounded = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    blocks.push_back(p);
    return p;
  }
  void Free(void* block, size_t nbytes) override {
    freed.emplace_back(block, nbytes);
    std::free(block);
  }

  bool fail = false;
  std::vector<size_t> allocated;
  std::vector<void*> blocks;
  std::vector<std::pair<void*, size_t>> freed;
};

TEST(AllocatorTest, TensorTakesItsMemoryFromTheAllocator) {
  auto alloc = std::make_shared<RecordingAllocator>();
  {
    auto t = Tensor::Empty(DType::kFloat32, {2, 3}, alloc);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_EQ(alloc->allocated, std::vector<size_t>{24});
    ASSERT_EQ(alloc->blocks.size(), 1u);
    EXPECT_EQ(t->data(), alloc->blocks[0]);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    EXPECT_TRUE(alloc->freed.empty());
  }
  ASSERT_EQ(alloc->freed.size(), 1u);
  EXPECT_EQ(alloc->freed[0].first, alloc->blocks[0]);
  EXPECT_EQ(alloc->freed[0].second, 24u);
}

TEST(AllocatorTest, FreeWaitsForTheLastView) {
  auto alloc = std::make_shared<RecordingAllocator>();
  Tensor view;
  {
    auto t = Tensor::Empty(DType::kInt64, {4}, alloc);
    ASSERT_TRUE(t.ok()) << t.status();
    view = t->AsStrided({2}, {2}, 1);
  }
  EXPECT_TRUE(alloc->freed.empty());
  view = Tensor();
  ASSERT_EQ(alloc->freed.size(), 1u);
  EXPECT_EQ(alloc->freed[0].second, 32u);
}

TEST(AllocatorTest, EmptyTensorAsksForZeroBytes) {
  auto alloc = std::make_shared<RecordingAllocator>();
  {
    auto t = Tensor::Empty(DType::kFloat64, {0, 5}, alloc);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->numel(), 0);
  }
  EXPECT_EQ(alloc->allocated, std::vector<size_t>{0});
  ASSERT_EQ(alloc->freed.size(), 1u);
  EXPECT_EQ(alloc->freed[0].second, 0u);
}

TEST(AllocatorTest, NullBlockIsResourceExhausted) {
  auto alloc = std::make_shared<RecordingAllocator>();
  alloc->fail = true;
  ExpectError(Tensor::Empty(DType::kFloat32, {10}, alloc),
              absl::StatusCode::kResourceExhausted,
              "out of memory allocating 40 bytes");
  EXPECT_EQ(alloc->allocated, std::vector<size_t>{40});
  EXPECT_TRUE(alloc->freed.empty());
}

TEST(AllocatorTest, OverflowingShapeNeverReachesTheAllocator) {
  auto alloc = std::make_shared<RecordingAllocator>();
  auto t = Tensor::Empty(DType::kFloat64, {int64_t{1} << 61, 8}, alloc);
  EXPECT_FALSE(t.ok());
  EXPECT_TRUE(alloc->allocated.empty());
}

}  // namespace
}  // namespace guardjit::testing
