// Tests of cumsum, sort and topk (expected values computed by hand and
// checked against torch 2.15 on CPU).

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor T(IntSpan sizes, const std::vector<double>& v,
         DType dtype = DType::kFloat32) {
  return MakeTensor(dtype, sizes, v);
}

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 absl::string_view needle) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(status.message().find(needle), absl::string_view::npos) << status;
}

TEST(CumsumTest, AlongEachDimAnyStrides) {
  Tensor x = NonContiguousCopy(T({2, 3}, {3, 1, 2, 0, 5, 4}));
  ExpectTensor(RunOp1("aten.cumsum.default", {x, 0}), DType::kFloat32, {2, 3},
               {3, 1, 2, 3, 6, 6});
  ExpectTensor(RunOp1("aten.cumsum.default", {x, -1}), DType::kFloat32, {2, 3},
               {3, 4, 6, 0, 5, 9});
}

TEST(CumsumTest, DTypes) {
  // Integral and bool inputs accumulate in int64 unless dtype says otherwise.
  Tensor i8 = T({2}, {100, 100}, DType::kInt8);
  ExpectTensor(RunOp1("aten.cumsum.default", {i8, 0}), DType::kInt64, {2},
               {100, 200});
  ExpectTensor(
      RunOp1("aten.cumsum.default", {i8, 0}, {{"dtype", DType::kInt8}}),
      DType::kInt8, {2}, {100, -56});
  ExpectTensor(RunOp1("aten.cumsum.default", {T({2}, {1, 1}, DType::kBool), 0}),
               DType::kInt64, {2}, {1, 2});
  ExpectTensor(
      RunOp1("aten.cumsum.default", {i8, 0}, {{"dtype", DType::kFloat16}}),
      DType::kFloat16, {2}, {100, 200});
  ExpectError(RunOp("aten.cumsum.default", {i8, 1}).status(),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
}

TEST(SortTest, AscendingDescendingAndNaN) {
  Tensor x = T({2, 3}, {3, 1, 2, 0, 5, 4});
  auto desc = RunOp("aten.sort.default", {x, 0, true});
  ASSERT_TRUE(desc.ok()) << desc.status();
  ExpectTensor((*desc)[0], DType::kFloat32, {2, 3}, {3, 5, 4, 0, 1, 2});
  ExpectTensor((*desc)[1], DType::kInt64, {2, 3}, {0, 1, 1, 1, 0, 0});
  auto asc = RunOp("aten.sort.default", {x, 1, false});
  ASSERT_TRUE(asc.ok()) << asc.status();
  ExpectTensor((*asc)[0], DType::kFloat32, {2, 3}, {1, 2, 3, 0, 4, 5});
  ExpectTensor((*asc)[1], DType::kInt64, {2, 3}, {1, 2, 0, 0, 2, 1});
  // NaN is greater than every number: last ascending, first descending.
  Tensor n = T({4}, {1, kNaN, -1, 0});
  auto up = RunOp("aten.sort.default", {n});
  ASSERT_TRUE(up.ok()) << up.status();
  ExpectTensor((*up)[0], DType::kFloat32, {4}, {-1, 0, 1, kNaN});
  ExpectTensor((*up)[1], DType::kInt64, {4}, {2, 3, 0, 1});
  auto down = RunOp("aten.sort.default", {n, 0, true});
  ASSERT_TRUE(down.ok()) << down.status();
  ExpectTensor((*down)[0], DType::kFloat32, {4}, {kNaN, 1, 0, -1});
  // Integers.
  auto ints = RunOp("aten.sort.default", {T({3}, {2, -5, 1}, DType::kInt16)});
  ASSERT_TRUE(ints.ok()) << ints.status();
  ExpectTensor((*ints)[0], DType::kInt16, {3}, {-5, 1, 2});
}

TEST(TopkTest, LargestSmallestAndErrors) {
  Tensor x = NonContiguousCopy(T({2, 3}, {3, 1, 2, 0, 5, 4}));
  auto top = RunOp("aten.topk.default", {x, 2, 1});
  ASSERT_TRUE(top.ok()) << top.status();
  ExpectTensor((*top)[0], DType::kFloat32, {2, 2}, {3, 2, 5, 4});
  ExpectTensor((*top)[1], DType::kInt64, {2, 2}, {0, 2, 1, 2});
  auto low = RunOp("aten.topk.default", {x, 1, 0, false});
  ASSERT_TRUE(low.ok()) << low.status();
  ExpectTensor((*low)[0], DType::kFloat32, {1, 3}, {0, 1, 2});
  ExpectTensor((*low)[1], DType::kInt64, {1, 3}, {1, 0, 0});
  // NaN counts as the largest value.
  auto nan = RunOp("aten.topk.default", {T({3}, {1, kNaN, 2}), 1});
  ASSERT_TRUE(nan.ok()) << nan.status();
  ExpectTensor((*nan)[0], DType::kFloat32, {1}, {kNaN});
  ExpectTensor((*nan)[1], DType::kInt64, {1}, {1});
  ExpectError(RunOp("aten.topk.default", {T({2}, {1, 2}), 3}).status(),
              absl::StatusCode::kInvalidArgument,
              "selected index k out of range");
}

}  // namespace
}  // namespace guardjit
