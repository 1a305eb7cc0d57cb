// The reduction kernels' layout helpers (runtime/kernels/reduction_util.h):
// reduced dims moved last without a copy, and the rows of values each
// output element reduces, contiguous, converted, copied only when needed.

#include "runtime/kernels/reduction_util.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::MakeTensor;
using ::testing::ElementsAre;

// x[i][j][k] = 100 i + 10 j + k over [2, 3, 4].
Tensor Cube(DType dtype = DType::kFloat64) {
  std::vector<double> v;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) v.push_back(100 * i + 10 * j + k);
    }
  }
  return MakeTensor(dtype, {2, 3, 4}, v);
}

TEST(ReductionUtilTest, MoveDimsLastKeepsBothGroupsInOrder) {
  const Tensor x = Cube();
  const Tensor moved = MoveDimsLast(x, {true, false, true});
  EXPECT_THAT(moved.sizes(), ElementsAre(3, 2, 4));
  EXPECT_THAT(moved.strides(), ElementsAre(4, 12, 1));
  EXPECT_EQ(moved.data(), x.data()) << "a view, not a copy";
  const Tensor same = MoveDimsLast(x, {false, false, true});
  EXPECT_THAT(same.strides(), ElementsAre(12, 4, 1));
}

TEST(ReductionUtilTest, RowsHoldEachOutputsValuesInOrder) {
  const Tensor x = Cube();
  // Reducing dims 0 and 2: output element j reduces x[i][j][k] over (i, k).
  auto rows = ToReductionRows(x, {true, false, true}, DType::kFloat64);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->outer, 3);
  EXPECT_EQ(rows->inner, 8);
  EXPECT_THAT(rows->row<double>(1),
              ElementsAre(10, 11, 12, 13, 110, 111, 112, 113));
  // Reducing nothing: one value per row.
  auto none = ToReductionRows(x, {false, false, false}, DType::kFloat64);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->outer, 24);
  EXPECT_EQ(none->inner, 1);
  EXPECT_THAT(none->row<double>(23), ElementsAre(123));
}

TEST(ReductionUtilTest, CopiesOnlyWhenTheLayoutOrDTypeDiffers) {
  const Tensor x = Cube();
  auto last = ToReductionRows(x, {false, false, true}, DType::kFloat64);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->values.data(), x.data()) << "already rows of the last dim";
  EXPECT_EQ(last->outer, 6);
  EXPECT_EQ(last->inner, 4);
  auto converted = ToReductionRows(Cube(DType::kInt32), {false, false, true},
                                   DType::kFloat32);
  ASSERT_TRUE(converted.ok()) << converted.status();
  EXPECT_EQ(converted->values.dtype(), DType::kFloat32);
  EXPECT_THAT(converted->row<float>(5), ElementsAre(120, 121, 122, 123));
}

TEST(ReductionUtilTest, EmptyReducedDimsGiveEmptyRows) {
  const Tensor empty = *Tensor::Empty(DType::kFloat64, {3, 0});
  auto rows = ToReductionRows(empty, {false, true}, DType::kFloat64);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->outer, 3);
  EXPECT_EQ(rows->inner, 0);
  EXPECT_TRUE(rows->row<double>(2).empty());
}

}  // namespace
}  // namespace guardjit
