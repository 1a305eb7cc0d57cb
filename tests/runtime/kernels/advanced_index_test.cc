#include "runtime/kernels/advanced_index.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;
using testing::Iota;
using testing::MakeTensor;
using Offsets = std::vector<int64_t>;

Tensor Index(IntSpan sizes, const std::vector<double>& values,
             DType dtype = DType::kInt64) {
  return MakeTensor(dtype, sizes, values);
}

TEST(ComputeAdvancedIndexTest, FirstDimWithNegativeIndices) {
  const Tensor t = Iota({3, 4});
  absl::StatusOr<AdvancedIndexOffsets> r =
      ComputeAdvancedIndex(t, {Index({3}, {2, 0, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({3, 4}));
  EXPECT_EQ(r->offsets, Offsets({8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
}

TEST(ComputeAdvancedIndexTest, OffsetsFollowSelfsStrides) {
  // A [3, 4] view stored transposed: element (i, j) at i + 3 * j.
  std::vector<float> memory(12);
  const Tensor t =
      Tensor::Borrow(memory.data(), DType::kFloat32, {3, 4}, {1, 3});
  absl::StatusOr<AdvancedIndexOffsets> r =
      ComputeAdvancedIndex(t, {std::nullopt, Index({2}, {3, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({3, 2}));
  EXPECT_EQ(r->offsets, Offsets({9, 3, 10, 4, 11, 5}));
}

TEST(ComputeAdvancedIndexTest, IndicesBroadcastTogether) {
  // rows [[0], [2]] with columns [1, 3]: a [2, 2] result.
  const Tensor t = Iota({3, 4});
  absl::StatusOr<AdvancedIndexOffsets> r =
      ComputeAdvancedIndex(t, {Index({2, 1}, {0, 2}), Index({2}, {1, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({2, 2}));
  EXPECT_EQ(r->offsets, Offsets({1, 3, 9, 11}));
}

TEST(ComputeAdvancedIndexTest, SeparatedIndexedDimsGoFirst) {
  // t[[0, 1], :, [3, 2]] on [2, 3, 4]: the broadcast dim leads (ATen's rule
  // for indexed dims that are not adjacent): result [2, 3].
  const Tensor t = Iota({2, 3, 4});
  absl::StatusOr<AdvancedIndexOffsets> r = ComputeAdvancedIndex(
      t, {Index({2}, {0, 1}), std::nullopt, Index({2}, {3, 2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({2, 3}));
  EXPECT_EQ(r->offsets, Offsets({3, 7, 11, 14, 18, 22}));
}

TEST(ComputeAdvancedIndexTest, AdjacentIndexedDimsStayInPlace) {
  // t[:, [2, 0], [1, 1]] on [2, 3, 4]: result [2, 2], the broadcast dim
  // where the indexed dims were.
  const Tensor t = Iota({2, 3, 4});
  absl::StatusOr<AdvancedIndexOffsets> r = ComputeAdvancedIndex(
      t, {std::nullopt, Index({2}, {2, 0}), Index({2}, {1, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({2, 2}));
  EXPECT_EQ(r->offsets, Offsets({9, 1, 21, 13}));
}

TEST(ComputeAdvancedIndexTest, Int32IndicesAreCast) {
  const Tensor t = Iota({5});
  absl::StatusOr<AdvancedIndexOffsets> r =
      ComputeAdvancedIndex(t, {Index({3}, {4, -5, 2}, DType::kInt32)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->offsets, Offsets({4, 0, 2}));
}

TEST(ComputeAdvancedIndexTest, EmptyIndexSelectsNothing) {
  const Tensor t = Iota({3, 4});
  absl::StatusOr<AdvancedIndexOffsets> r =
      ComputeAdvancedIndex(t, {Index({0}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->result, Shape({0, 4}));
  EXPECT_TRUE(r->offsets.empty());
}

TEST(ComputeAdvancedIndexTest, OutOfRangeIndicesNameValueAndDim) {
  const Tensor t = Iota({3, 4});
  ExpectError(ComputeAdvancedIndex(t, {Index({2}, {0, 3})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'indices': index 3 is out of bounds for dimension 0 "
              "with size 3");
  ExpectError(ComputeAdvancedIndex(t, {std::nullopt, Index({1}, {-5})}),
              absl::StatusCode::kInvalidArgument,
              "index -5 is out of bounds for dimension 1 with size 4");
}

}  // namespace
}  // namespace guardjit
