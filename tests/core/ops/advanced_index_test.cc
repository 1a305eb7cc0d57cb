// The layout of ATen's advanced indexing (core/ops/advanced_index.h): which
// dims the index tensors take, NumPy's rule for where their broadcast shape
// lands (at the first indexed dim when those are adjacent, else in front),
// and the refusals naming 'indices'.

#include "core/ops/advanced_index.h"

#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;

std::optional<TensorMeta> Index(Shape sizes, DType dtype = DType::kInt64) {
  return TensorMeta(dtype, sizes);
}

TEST(AdvancedIndexTest, AdjacentIndexedDimsKeepTheirPlace) {
  // x[:, i, j] with i [5, 1] and j [4] over self [2, 3, 7, 6].
  auto layout = PlanAdvancedIndex(ToSymShape({2, 3, 7, 6}),
                                  {std::nullopt, Index({5, 1}), Index({4})});
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->indexed_dims, (std::vector<int>{1, 2}));
  EXPECT_EQ(layout->entry, (std::vector<int>{1, 2}));
  EXPECT_EQ(layout->broadcast, ToSymShape({5, 4}));
  EXPECT_EQ(layout->insert_at, 1);
  EXPECT_EQ(layout->result, ToSymShape({2, 5, 4, 6}));
  EXPECT_EQ(layout->result_dim, (std::vector<int>{0, -1, -1, 3}));
}

TEST(AdvancedIndexTest, SeparatedIndexedDimsGoInFront) {
  // x[i, :, j] with i, j [4] (int32 allowed) over self [2, 3, 5].
  auto layout =
      PlanAdvancedIndex(ToSymShape({2, 3, 5}),
                        {Index({4}, DType::kInt32), std::nullopt, Index({4})});
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->insert_at, 0);
  EXPECT_EQ(layout->result, ToSymShape({4, 3}));
  EXPECT_EQ(layout->result_dim, (std::vector<int>{-1, 1, -1}));
}

TEST(AdvancedIndexTest, RefusalsNameTheIndices) {
  const SymShape self = ToSymShape({2, 3});
  ExpectError(PlanAdvancedIndex(self, {Index({1}), Index({1}), Index({1})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'indices': too many indices for tensor of dimension 2 "
              "(got 3)");
  ExpectError(PlanAdvancedIndex(self, {std::nullopt, std::nullopt}),
              absl::StatusCode::kInvalidArgument,
              "argument 'indices': at least one index must be provided");
  ExpectError(PlanAdvancedIndex(self, {Index({2}), Index({3})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'indices': shape mismatch: indexing tensors could not "
              "be broadcast together with shapes [2], [3]");
  ExpectError(PlanAdvancedIndex(self, {Index({2}, DType::kFloat32)}),
              absl::StatusCode::kInvalidArgument,
              "tensors used as indices must be long, int, byte or bool "
              "tensors, entry 0 is float32");
  // Masks give value-dependent sizes: not here.
  ExpectError(PlanAdvancedIndex(self, {std::nullopt, Index({3}, DType::kBool)}),
              absl::StatusCode::kUnimplemented,
              "argument 'indices': entry 1 is a bool mask");
}

}  // namespace
}  // namespace guardjit
