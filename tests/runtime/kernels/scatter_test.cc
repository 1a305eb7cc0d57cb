// Tests of index.Tensor, index_put, scatter.src/.value, scatter_add and
// scatter_reduce.two (expected values computed by hand and checked against
// torch 2.15 on CPU).

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::Iota;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor Ints(IntSpan sizes, const std::vector<double>& v,
            DType dtype = DType::kInt64) {
  return MakeTensor(dtype, sizes, v);
}

Tensor F(IntSpan sizes, const std::vector<double>& v,
         DType dtype = DType::kFloat32) {
  return MakeTensor(dtype, sizes, v);
}

const Tensor kNone;  // a None element of Tensor?[]

void ExpectError(const absl::Status& status, absl::StatusCode code,
                 absl::string_view needle) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(status.message().find(needle), absl::string_view::npos) << status;
}

TEST(IndexTensorTest, AdjacentIndicesReplaceTheirDims) {
  Tensor x = Iota({2, 3, 4});
  // x[:, [0, -1]]: shape (2, 2, 4); an int32 index wraps negatives too.
  ExpectTensor(
      RunOp1(
          "aten.index.Tensor",
          {x, std::vector<Tensor>{kNone, Ints({2}, {0, -1}, DType::kInt32)}}),
      DType::kFloat32, {2, 2, 4},
      {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23});
  // x[[1, 0], [2, 0]]: pairs (1, 2) and (0, 0).
  ExpectTensor(
      RunOp1("aten.index.Tensor",
             {x, std::vector<Tensor>{Ints({2}, {1, 0}), Ints({2}, {2, 0})}}),
      DType::kFloat32, {2, 4}, {20, 21, 22, 23, 0, 1, 2, 3});
}

TEST(IndexTensorTest, SeparatedIndicesBroadcastAndGoFirst) {
  Tensor x = Iota({2, 3, 4});
  // x[[0, 1], :, [[1], [2]]]: indices broadcast to (2, 2), placed first.
  Tensor out = RunOp1(
      "aten.index.Tensor",
      {x, std::vector<Tensor>{Ints({2}, {0, 1}), kNone, Ints({2, 1}, {1, 2})}});
  // out[i, j, k] = x[I0[i, j], k, I2[i, j]] with I0 = [[0, 1], [0, 1]],
  // I2 = [[1, 1], [2, 2]].
  ExpectTensor(out, DType::kFloat32, {2, 2, 3},
               {1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22});
}

TEST(IndexTensorTest, NonContiguousSelfAndIndex) {
  Tensor x = NonContiguousCopy(Iota({3, 4}));
  Tensor base = Ints({4}, {2, 9, 0, 9});
  Tensor every_other = base.AsStrided({2}, {2});  // {2, 0}
  ExpectTensor(
      RunOp1("aten.index.Tensor", {x, std::vector<Tensor>{kNone, every_other}}),
      DType::kFloat32, {3, 2}, {2, 0, 6, 4, 10, 8});
}

TEST(IndexTensorTest, Errors) {
  Tensor x = Iota({2, 3});
  ExpectError(
      RunOp("aten.index.Tensor", {x, std::vector<Tensor>{Ints({2}, {0, 2})}})
          .status(),
      absl::StatusCode::kInvalidArgument,
      "index 2 is out of bounds for dimension 0 with size 2");
  ExpectError(
      RunOp("aten.index.Tensor", {x, std::vector<Tensor>{Ints({1}, {-3})}})
          .status(),
      absl::StatusCode::kInvalidArgument,
      "index -3 is out of bounds for dimension 0 with size 2");
  ExpectError(RunOp("aten.index.Tensor",
                    {x, std::vector<Tensor>{Ints({1}, {0}), Ints({1}, {0}),
                                            Ints({1}, {0})}})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "too many indices for tensor of dimension 2 (got 3)");
  ExpectError(
      RunOp("aten.index.Tensor",
            {x, std::vector<Tensor>{Ints({2}, {0, 1}), Ints({3}, {0, 1, 2})}})
          .status(),
      absl::StatusCode::kInvalidArgument,
      "could not be broadcast together with shapes [2], [3]");
  ExpectError(RunOp("aten.index.Tensor", {x, std::vector<Tensor>{F({1}, {0})}})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "must be long, int, byte or bool");
  ExpectError(
      RunOp("aten.index.Tensor", {x, std::vector<Tensor>{kNone}}).status(),
      absl::StatusCode::kInvalidArgument,
      "at least one index must be provided");
  // A mask's result size depends on its values: rejected, naming the arg.
  ExpectError(RunOp("aten.index.Tensor",
                    {x, std::vector<Tensor>{Ints({2}, {1, 0}, DType::kBool)}})
                  .status(),
              absl::StatusCode::kUnimplemented, "argument 'indices'");
}

TEST(IndexPutTest, AssignAndAccumulate) {
  Tensor x = F({3}, {0, 0, 0});
  Tensor idx = Ints({3}, {0, 0, -1});
  // Accumulate sums duplicates; a 0-dim value broadcasts.
  ExpectTensor(RunOp1("aten.index_put.default",
                      {x, std::vector<Tensor>{idx}, F({}, {1}), true}),
               DType::kFloat32, {3}, {2, 0, 1});
  // Without accumulate the last write wins.
  ExpectTensor(RunOp1("aten.index_put.default",
                      {x, std::vector<Tensor>{idx}, F({3}, {1, 2, 3}), false}),
               DType::kFloat32, {3}, {2, 0, 3});
  // Rows of a 2-D tensor, self non-contiguous; self is not modified.
  Tensor m = NonContiguousCopy(Iota({2, 3}, DType::kInt32));
  ExpectTensor(RunOp1("aten.index_put.default",
                      {m, std::vector<Tensor>{Ints({1}, {1})},
                       Ints({3}, {10, 20, 30}, DType::kInt32), true}),
               DType::kInt32, {2, 3}, {0, 1, 2, 13, 24, 35});
  ExpectTensor(m, DType::kInt32, {2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(IndexPutTest, Errors) {
  Tensor x = F({3}, {0, 0, 0});
  ExpectError(
      RunOp("aten.index_put.default",
            {x, std::vector<Tensor>{Ints({2}, {0, 3})}, F({}, {1}), true})
          .status(),
      absl::StatusCode::kInvalidArgument,
      "index 3 is out of bounds for dimension 0 with size 3");
  ExpectError(RunOp("aten.index_put.default",
                    {x, std::vector<Tensor>{Ints({2}, {0, 1})},
                     F({2}, {1, 2}, DType::kFloat64), false})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "Index put requires the source and destination dtypes match");
  ExpectError(RunOp("aten.index_put.default",
                    {x, std::vector<Tensor>{Ints({2}, {0, 1})},
                     F({3}, {1, 2, 3}), false})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "value tensor of shape [3] cannot be broadcast to indexing "
              "result of shape [2]");
}

TEST(ScatterTest, SrcValueAndAdd) {
  Tensor s = F({3, 4}, std::vector<double>(12, 0));
  Tensor idx = Ints({2, 2}, {0, 1, 2, 0}, DType::kInt32);
  ExpectTensor(RunOp1("aten.scatter.src", {s, 0, idx, F({2, 2}, {1, 2, 3, 4})}),
               DType::kFloat32, {3, 4}, {1, 4, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0});
  // Along dim 1 (given as -1), src larger than index.
  ExpectTensor(RunOp1("aten.scatter.src", {s, -1, Ints({1, 2}, {3, 1}),
                                           F({2, 3}, {5, 6, 7, 8, 9, 10})}),
               DType::kFloat32, {3, 4}, {0, 6, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0});
  // A float value into int32 truncates.
  ExpectTensor(RunOp1("aten.scatter.value", {Ints({2}, {0, 0}, DType::kInt32),
                                             0, Ints({1}, {1}), 1.7}),
               DType::kInt32, {2}, {0, 1});
  // scatter_add sums duplicates onto self; src read through its strides.
  Tensor src = NonContiguousCopy(F({3}, {5, 6, -7}));
  ExpectTensor(RunOp1("aten.scatter_add.default",
                      {F({4}, {1, 2, 3, 4}), 0, Ints({3}, {0, 0, 2}), src}),
               DType::kFloat32, {4}, {12, 2, -4, 4});
}

TEST(ScatterTest, ReduceEveryModeWithAndWithoutSelf) {
  Tensor x = F({4}, {1, 2, 3, 4});
  Tensor idx = Ints({3}, {0, 0, 2});
  Tensor src = F({3}, {5, 6, -7});
  const struct {
    const char* reduce;
    bool include_self;
    std::vector<double> expected;
  } kCases[] = {
      {"sum", true, {12, 2, -4, 4}},   {"sum", false, {11, 2, -7, 4}},
      {"prod", true, {30, 2, -21, 4}}, {"prod", false, {30, 2, -7, 4}},
      {"mean", true, {4, 2, -2, 4}},   {"mean", false, {5.5, 2, -7, 4}},
      {"amax", true, {6, 2, 3, 4}},    {"amax", false, {6, 2, -7, 4}},
      {"amin", true, {1, 2, -7, 4}},   {"amin", false, {5, 2, -7, 4}},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(std::string(c.reduce) + (c.include_self ? " self" : ""));
    ExpectTensor(RunOp1("aten.scatter_reduce.two", {x, 0, idx, src, c.reduce},
                        {{"include_self", c.include_self}}),
                 DType::kFloat32, {4}, c.expected);
  }
  // Integral mean floors: (1 + 5 + 6) / 3 = 4, (3 - 8) / 2 = -2.5 -> -3.
  ExpectTensor(
      RunOp1("aten.scatter_reduce.two",
             {Ints({4}, {1, 2, 3, 4}), 0, idx, Ints({3}, {5, 6, -8}), "mean"}),
      DType::kInt64, {4}, {4, 2, -3, 4});
  // NaN propagates through amax.
  ExpectTensor(RunOp1("aten.scatter_reduce.two",
                      {x, 0, idx, F({3}, {5, kNaN, -7}), "amax"}),
               DType::kFloat32, {4}, {kNaN, 2, 3, 4});
}

TEST(ScatterTest, Errors) {
  Tensor s = F({3, 4}, std::vector<double>(12, 0));
  ExpectError(
      RunOp("aten.scatter.src", {s, 0, Ints({1, 1}, {-1}), F({1, 1}, {1})})
          .status(),
      absl::StatusCode::kInvalidArgument,
      "argument 'index': index -1 is out of bounds for dimension 0 "
      "with size 3");
  ExpectError(RunOp("aten.scatter.src",
                    {s, 0, Ints({1, 1}, {0}), F({1, 1}, {1}, DType::kFloat64)})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "Expected self.dtype to be equal to src.dtype");
  ExpectError(RunOp("aten.scatter.src",
                    {s, 0, Ints({2, 2}, {0, 0, 0, 0}), F({1, 2}, {1, 1})})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "Expected index [2, 2] to be no larger than self [3, 4] apart "
              "from dimension 0 and to be no larger size than src [1, 2]");
  ExpectError(RunOp("aten.scatter.src",
                    {s, 0, Ints({1, 1}, {0}, DType::kInt16), F({1, 1}, {1})})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "Expected dtype int32/int64 for index");
  ExpectError(RunOp("aten.scatter_reduce.two",
                    {s, 0, Ints({1, 1}, {0}), F({1, 1}, {1}), "max2"})
                  .status(),
              absl::StatusCode::kInvalidArgument,
              "reduce argument must be either sum, prod, mean, amax or amin, "
              "got max2");
  ExpectError(
      RunOp("aten.scatter.value", {s, 2, Ints({1, 1}, {0}), 1.0}).status(),
      absl::StatusCode::kInvalidArgument, "argument 'dim'");
}

}  // namespace
}  // namespace guardjit
