#include "runtime/strided_loop.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::ToDoubles;

TEST(StridedLoopTest, CoalescesContiguousDimsIntoOneRun) {
  Tensor t = *Tensor::Empty(DType::kFloat32, {4, 5, 6});
  int runs = 0;
  int64_t total = 0;
  std::vector<char*> bases = {static_cast<char*>(t.data())};
  Shape strides = ByteStrides(t);
  std::vector<IntSpan> spans = {strides};
  ForEachRun(t.sizes(), bases, spans, [&](char**, const int64_t* s, int64_t n) {
    ++runs;
    total += n;
    EXPECT_EQ(s[0], 4);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(total, 120);
}

TEST(StridedLoopTest, VisitsEveryElementOfStridedAndBroadcastOperands) {
  Tensor a = MakeTensor(DType::kFloat64, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor a_nc = NonContiguousCopy(a);
  Tensor row = MakeTensor(DType::kFloat64, {3}, {10, 20, 30});
  Tensor out = *Tensor::Empty(DType::kFloat64, {2, 3});
  MapElements<double, double, double>(
      out, [](double x, double y) { return x + y; }, a_nc,
      ExpandTo(row, out.sizes()));
  EXPECT_EQ(ToDoubles(out), (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(StridedLoopTest, EmptyShapesRunNothingAndScalarsRunOnce) {
  int calls = 0;
  Tensor e = *Tensor::Empty(DType::kInt32, {3, 0});
  Shape s = ByteStrides(e);
  std::vector<char*> b = {static_cast<char*>(e.data())};
  std::vector<IntSpan> sp = {s};
  ForEachRun(e.sizes(), b, sp,
             [&](char**, const int64_t*, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  Tensor z = *Tensor::Empty(DType::kInt32, {});
  Shape zs = ByteStrides(z);
  std::vector<char*> zb = {static_cast<char*>(z.data())};
  std::vector<IntSpan> zsp = {zs};
  ForEachRun(z.sizes(), zb, zsp,
             [&](char**, const int64_t*, int64_t n) { calls += n; });
  EXPECT_EQ(calls, 1);
}

TEST(StridedLoopTest, ExpandToSetsZeroStrides) {
  Tensor col = *Tensor::Empty(DType::kFloat32, {3, 1});
  Tensor e = ExpandTo(col, Shape{2, 3, 4});
  EXPECT_EQ(Shape(e.strides().begin(), e.strides().end()), (Shape{0, 1, 0}));
}

}  // namespace
}  // namespace guardjit
