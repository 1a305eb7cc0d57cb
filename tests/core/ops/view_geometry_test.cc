// The geometry of ATen's view ops (core/ops/view_geometry.h) on concrete
// sizes and strides: the (sizes, strides, offset) PyTorch gives each view,
// and the calls it refuses.

#include "core/ops/view_geometry.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using Ints = std::vector<int64_t>;

IntsOf<int64_t> S(const Ints& v) { return IntsOf<int64_t>(v); }

TEST(ViewGeometryTest, InferViewSizeFillsTheOneMinusOne) {
  const Ints two_by_any = {2, -1};
  auto size = InferViewSize<int64_t>(S(two_by_any), 12);
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_THAT(*size, ElementsAre(2, 6));
  const Ints any = {-1};
  EXPECT_THAT(*InferViewSize<int64_t>(S(any), 7), ElementsAre(7));
  const Ints two_unknowns = {-1, -1};
  EXPECT_FALSE(InferViewSize<int64_t>(S(two_unknowns), 12).ok());
  const Ints five_by_any = {5, -1};
  EXPECT_FALSE(InferViewSize<int64_t>(S(five_by_any), 12).ok());
  const Ints three_by_four = {3, 4};
  EXPECT_FALSE(InferViewSize<int64_t>(S(three_by_four), 13).ok());
}

TEST(ViewGeometryTest, ComputeViewStridesMergesAndSplitsChunks) {
  const Ints sizes = {2, 3, 4}, strides = {12, 4, 1};
  const Ints merged = {6, 4}, split = {2, 12}, flat = {24};
  EXPECT_THAT(*ComputeViewStrides<int64_t>(S(sizes), S(strides), S(merged)),
              ElementsAre(4, 1));
  EXPECT_THAT(*ComputeViewStrides<int64_t>(S(sizes), S(strides), S(split)),
              ElementsAre(12, 1));
  EXPECT_THAT(*ComputeViewStrides<int64_t>(S(sizes), S(strides), S(flat)),
              ElementsAre(1));
  // Rows 5 apart (a slice of a wider matrix): rows cannot merge, columns
  // can split.
  const Ints rows = {4, 3}, row_strides = {5, 1};
  const Ints split_rows = {2, 2, 3}, all = {12};
  EXPECT_THAT(
      *ComputeViewStrides<int64_t>(S(rows), S(row_strides), S(split_rows)),
      ElementsAre(10, 5, 1));
  EXPECT_EQ(ComputeViewStrides<int64_t>(S(rows), S(row_strides), S(all)),
            std::nullopt);
  // A transpose cannot be flattened in place.
  const Ints t_sizes = {3, 2}, t_strides = {1, 3}, six = {6};
  EXPECT_EQ(ComputeViewStrides<int64_t>(S(t_sizes), S(t_strides), S(six)),
            std::nullopt);
}

TEST(ViewGeometryTest, PermuteExpandUnsqueezeSqueeze) {
  const Ints sizes = {2, 3, 4}, strides = {12, 4, 1};
  auto permuted = PermuteGeometry<int64_t>(S(sizes), S(strides), {2, 0, -2});
  ASSERT_TRUE(permuted.ok()) << permuted.status();
  EXPECT_THAT(permuted->sizes, ElementsAre(4, 2, 3));
  EXPECT_THAT(permuted->strides, ElementsAre(1, 12, 4));
  EXPECT_EQ(permuted->offset, 0);
  EXPECT_FALSE(PermuteGeometry<int64_t>(S(sizes), S(strides), {0, 0, 1}).ok());
  EXPECT_FALSE(PermuteGeometry<int64_t>(S(sizes), S(strides), {0, 1}).ok());

  const Ints column = {3, 1}, column_strides = {1, 1};
  const Ints target = {2, 3, 4}, keep = {-1, 5}, bad = {4, 4};
  auto expanded =
      ExpandGeometry<int64_t>(S(column), S(column_strides), S(target));
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_THAT(expanded->sizes, ElementsAre(2, 3, 4));
  EXPECT_THAT(expanded->strides, ElementsAre(0, 1, 0));
  auto kept = ExpandGeometry<int64_t>(S(column), S(column_strides), S(keep));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(kept->sizes, ElementsAre(3, 5));
  EXPECT_THAT(kept->strides, ElementsAre(1, 0));
  EXPECT_FALSE(
      ExpandGeometry<int64_t>(S(column), S(column_strides), S(bad)).ok());

  const Ints matrix = {2, 3}, matrix_strides = {3, 1};
  auto middle = UnsqueezeGeometry<int64_t>(S(matrix), S(matrix_strides), 1);
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_THAT(middle->sizes, ElementsAre(2, 1, 3));
  EXPECT_THAT(middle->strides, ElementsAre(3, 3, 1));
  auto last = UnsqueezeGeometry<int64_t>(S(matrix), S(matrix_strides), -1);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(last->sizes, ElementsAre(2, 3, 1));
  EXPECT_FALSE(
      UnsqueezeGeometry<int64_t>(S(matrix), S(matrix_strides), 3).ok());

  const Ints ones = {2, 1, 3, 1}, ones_strides = {3, 3, 1, 1};
  auto all = SqueezeGeometry<int64_t>(S(ones), S(ones_strides), std::nullopt);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(all->sizes, ElementsAre(2, 3));
  EXPECT_THAT(all->strides, ElementsAre(3, 1));
  // Only the named dims, and only where they are 1.
  auto some = SqueezeGeometry<int64_t>(S(ones), S(ones_strides),
                                       std::vector<int64_t>{0, 1});
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_THAT(some->sizes, ElementsAre(2, 3, 1));
}

TEST(ViewGeometryTest, SliceSelectDiagonalSplit) {
  const Ints ten = {10}, unit = {1};
  auto stepped = SliceGeometry<int64_t>(S(ten), S(unit), 0, 2, std::nullopt, 3);
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  EXPECT_THAT(stepped->sizes, ElementsAre(3));  // 2, 5, 8
  EXPECT_THAT(stepped->strides, ElementsAre(3));
  EXPECT_EQ(stepped->offset, 2);
  // Python's clamping: from the end, and past it.
  auto tail = SliceGeometry<int64_t>(S(ten), S(unit), 0, -3, 100, 1);
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_THAT(tail->sizes, ElementsAre(3));
  EXPECT_EQ(tail->offset, 7);
  auto empty = SliceGeometry<int64_t>(S(ten), S(unit), 0, 8, 2, 1);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(empty->sizes, ElementsAre(0));
  EXPECT_FALSE(SliceGeometry<int64_t>(S(ten), S(unit), 0, 0, 5, 0).ok());

  const Ints grid = {4, 5}, grid_strides = {5, 1};
  auto row = SelectGeometry<int64_t>(S(grid), S(grid_strides), 0, -1);
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_THAT(row->sizes, ElementsAre(5));
  EXPECT_THAT(row->strides, ElementsAre(1));
  EXPECT_EQ(row->offset, 15);
  auto col = SelectGeometry<int64_t>(S(grid), S(grid_strides), 1, 2);
  ASSERT_TRUE(col.ok()) << col.status();
  EXPECT_THAT(col->sizes, ElementsAre(4));
  EXPECT_THAT(col->strides, ElementsAre(5));
  EXPECT_EQ(col->offset, 2);
  EXPECT_FALSE(SelectGeometry<int64_t>(S(grid), S(grid_strides), 0, 4).ok());
  EXPECT_FALSE(SelectGeometry<int64_t>(S(grid), S(grid_strides), 0, -5).ok());

  const Ints square = {3, 4}, square_strides = {4, 1};
  auto above = DiagonalGeometry<int64_t>(S(square), S(square_strides), 1, 0, 1);
  ASSERT_TRUE(above.ok()) << above.status();
  EXPECT_THAT(above->sizes, ElementsAre(3));  // (0,1) (1,2) (2,3)
  EXPECT_THAT(above->strides, ElementsAre(5));
  EXPECT_EQ(above->offset, 1);
  auto below =
      DiagonalGeometry<int64_t>(S(square), S(square_strides), -1, 0, 1);
  ASSERT_TRUE(below.ok()) << below.status();
  EXPECT_THAT(below->sizes, ElementsAre(2));  // (1,0) (2,1)
  EXPECT_EQ(below->offset, 4);

  const Ints rows = {5, 2}, row_strides = {2, 1}, parts = {2, 3},
             wrong = {2, 2};
  auto split =
      SplitWithSizesGeometry<int64_t>(S(rows), S(row_strides), S(parts), 0);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->size(), 2u);
  EXPECT_THAT((*split)[0].sizes, ElementsAre(2, 2));
  EXPECT_EQ((*split)[0].offset, 0);
  EXPECT_THAT((*split)[1].sizes, ElementsAre(3, 2));
  EXPECT_EQ((*split)[1].offset, 4);
  EXPECT_FALSE(
      SplitWithSizesGeometry<int64_t>(S(rows), S(row_strides), S(wrong), 0)
          .ok());
}

TEST(ViewGeometryTest, ContiguousStrides) {
  const Ints sizes = {2, 3, 4};
  EXPECT_THAT(ContiguousStridesOf<int64_t>(S(sizes)), ElementsAre(12, 4, 1));
}

}  // namespace
}  // namespace guardjit
