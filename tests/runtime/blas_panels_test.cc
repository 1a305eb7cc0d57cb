// What BLAS callers share (runtime/blas_panels.h): which strided matrices
// BLAS reads in place and how, per-thread panel scratch, and OpenBLAS held
// at one thread for the nesting regions that run panels in parallel.

#include "runtime/blas_panels.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(BlasPanelsTest, RowMajorAndTransposedLayouts) {
  // [3, 4] contiguous: rows 4 apart.
  std::optional<BlasMatrix> m = BlasLayout(3, 4, 4, 1);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->trans, CblasNoTrans);
  EXPECT_EQ(m->ld, 4);
  // Rows of a wider matrix: ld is the row stride.
  m = BlasLayout(3, 4, 10, 1);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->ld, 10);
  // Its transpose ([4, 3] with strides (1, 4)) is read column by column.
  m = BlasLayout(4, 3, 1, 4);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->trans, CblasTrans);
  EXPECT_EQ(m->ld, 4);
}

TEST(BlasPanelsTest, SizeOneDimsIgnoreTheirStride) {
  // One row: its stride is never read; ld is the row's length.
  std::optional<BlasMatrix> m = BlasLayout(1, 5, 12345, 1);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->trans, CblasNoTrans);
  EXPECT_EQ(m->ld, 5);
  // One column with rows 7 apart.
  m = BlasLayout(6, 1, 7, 99);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->trans, CblasNoTrans);
  EXPECT_EQ(m->ld, 7);
}

TEST(BlasPanelsTest, LayoutsBlasCannotReadInPlace) {
  // Neither dim unit-strided.
  EXPECT_FALSE(BlasLayout(3, 4, 8, 2).has_value());
  // Rows overlapping (ld below the row length).
  EXPECT_FALSE(BlasLayout(3, 4, 2, 1).has_value());
  // A broadcast row (stride 0) of more than one row.
  EXPECT_FALSE(BlasLayout(3, 4, 0, 1).has_value());
  // A leading dimension past blasint.
  const int64_t huge = int64_t{std::numeric_limits<blasint>::max()} + 1;
  EXPECT_FALSE(BlasLayout(2, 4, huge, 1).has_value());
}

TEST(BlasPanelsTest, ThreadScratchIsAlignedAndReused) {
  PanelScratch scratch;
  void* small = scratch.Get(1000);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  std::memset(small, 1, 1000);
  // A smaller request on the same thread gets the same buffer.
  EXPECT_EQ(scratch.Get(10), small);
  // Past the 32 MiB the thread keeps: memory this object owns.
  const size_t big = (size_t{32} << 20) + 64;
  void* large = scratch.Get(big);
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  std::memset(large, 2, big);
  EXPECT_NE(large, small);
}

TEST(BlasPanelsTest, NestedRegionsHoldOpenBlasAtOneThread) {
  const int before = openblas_get_num_threads();
  {
    SingleThreadedBlas outer;
    EXPECT_EQ(openblas_get_num_threads(), 1);
    {
      SingleThreadedBlas inner;
      EXPECT_EQ(openblas_get_num_threads(), 1);
    }
    EXPECT_EQ(openblas_get_num_threads(), 1) << "the outer region holds";
  }
  EXPECT_EQ(openblas_get_num_threads(), before);
}

}  // namespace
}  // namespace guardjit
