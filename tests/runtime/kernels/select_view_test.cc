// SelectView (runtime/kernels/select_view.h): the slice of a tensor at one
// index of a dim, that dim dropped, as a view of the same memory.

#include "runtime/kernels/select_view.h"

#include <vector>

#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TEST(SelectViewTest, MiddleDimOfAContiguousTensor) {
  Tensor t = Iota({2, 3, 4});
  Tensor v = SelectView(t, 1, 2);
  EXPECT_EQ(v.sizes(), (IntSpan{2, 4}));
  EXPECT_EQ(v.strides(), (IntSpan{12, 1}));
  EXPECT_EQ(v.data(), static_cast<void*>(t.data_as<float>() + 8));
  EXPECT_EQ(v.storage(), t.storage());
  ExpectTensor(v, DType::kFloat32, {2, 4}, {8, 9, 10, 11, 20, 21, 22, 23});
}

TEST(SelectViewTest, FirstAndLastDims) {
  Tensor t = Iota({2, 3});
  Tensor row = SelectView(t, 0, 1);
  EXPECT_EQ(row.sizes(), (IntSpan{3}));
  EXPECT_EQ(row.strides(), (IntSpan{1}));
  ExpectTensor(row, DType::kFloat32, {3}, {3, 4, 5});
  Tensor col = SelectView(t, 1, 2);
  EXPECT_EQ(col.sizes(), (IntSpan{2}));
  EXPECT_EQ(col.strides(), (IntSpan{3}));
  ExpectTensor(col, DType::kFloat32, {2}, {2, 5});
}

TEST(SelectViewTest, OneDimGivesAZeroDimView) {
  Tensor t = Iota({5}, DType::kInt64);
  Tensor v = SelectView(t, 0, 3);
  EXPECT_EQ(v.dim(), 0);
  EXPECT_EQ(v.numel(), 1);
  EXPECT_EQ(v.Item().to_int(), 3);
}

TEST(SelectViewTest, FollowsTheStridesOfANonContiguousTensor) {
  // The transpose of Iota({3, 2}): [[0, 2, 4], [1, 3, 5]], strides [1, 2].
  Tensor base = Iota({3, 2});
  Tensor t = base.AsStrided({2, 3}, {1, 2});
  Tensor v = SelectView(t, 0, 1);
  EXPECT_EQ(v.sizes(), (IntSpan{3}));
  EXPECT_EQ(v.strides(), (IntSpan{2}));
  ExpectTensor(v, DType::kFloat32, {3}, {1, 3, 5});
  Tensor w = SelectView(t, 1, 2);
  EXPECT_EQ(w.strides(), (IntSpan{1}));
  ExpectTensor(w, DType::kFloat32, {2}, {4, 5});
}

TEST(SelectViewTest, WritesGoThroughToTheTensor) {
  Tensor t = Iota({2, 2});
  Tensor v = SelectView(t, 1, 0);
  v.data_as<float>()[v.stride(0)] = 42;
  ExpectTensor(t, DType::kFloat32, {2, 2}, {0, 1, 42, 3});
}

TEST(SelectViewTest, KeepsDimsOfSizeZero) {
  auto t = Tensor::Empty(DType::kFloat32, {3, 0, 2});
  ASSERT_TRUE(t.ok());
  Tensor v = SelectView(*t, 0, 2);
  EXPECT_EQ(v.sizes(), (IntSpan{0, 2}));
  EXPECT_EQ(v.numel(), 0);
}

}  // namespace
}  // namespace guardjit::testing
