#include "runtime/kernels/storage_offset.h"

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(StorageOffsetTest, OwnedTensorStartsAtZeroAndSpansItsStorage) {
  absl::StatusOr<Tensor> t = Tensor::Empty(DType::kFloat32, {2, 3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(StorageOffsetOf(*t), 0);
  EXPECT_EQ(StorageElementsOf(*t), 6);
}

TEST(StorageOffsetTest, ViewOffsetIsInElementsOfItsDType) {
  absl::StatusOr<Tensor> t = Tensor::Empty(DType::kInt16, {4, 5});
  ASSERT_TRUE(t.ok()) << t.status();
  const Tensor row = t->AsStrided({5}, {1}, /*offset=*/10);
  EXPECT_EQ(StorageOffsetOf(row), 10);
  const Tensor inner = row.AsStrided({2}, {2}, /*offset=*/3);
  EXPECT_EQ(StorageOffsetOf(inner), 13);
  // A view shares its base's storage, so it spans the same elements.
  EXPECT_EQ(StorageElementsOf(inner), StorageElementsOf(*t));
}

TEST(StorageOffsetTest, BorrowedTensorIsItsOwnStorage) {
  std::vector<double> memory(64);
  // Sizes [3, 4] with strides [10, 2]: the last element is 2*10 + 3*2 = 26.
  const Tensor t =
      Tensor::Borrow(memory.data() + 5, DType::kFloat64, {3, 4}, {10, 2});
  EXPECT_EQ(StorageOffsetOf(t), 0);
  EXPECT_EQ(StorageElementsOf(t), 27);
}

TEST(StorageOffsetTest, BorrowedContiguousAndBroadcastTensors) {
  std::vector<float> memory(24);
  EXPECT_EQ(StorageElementsOf(Tensor::Borrow(memory.data(), DType::kFloat32,
                                             {2, 3, 4}, {12, 4, 1})),
            24);
  // An expanded dim (stride 0) reaches no further element.
  EXPECT_EQ(StorageElementsOf(
                Tensor::Borrow(memory.data(), DType::kFloat32, {5, 4}, {0, 1})),
            4);
  // A 0-dim tensor holds its one element.
  EXPECT_EQ(
      StorageElementsOf(Tensor::Borrow(memory.data(), DType::kFloat32, {}, {})),
      1);
}

TEST(StorageOffsetTest, BorrowedEmptyTensorHoldsNothing) {
  std::vector<float> memory(4);
  EXPECT_EQ(StorageElementsOf(Tensor::Borrow(memory.data(), DType::kFloat32,
                                             {3, 0, 2}, {2, 2, 1})),
            0);
}

}  // namespace
}  // namespace guardjit
