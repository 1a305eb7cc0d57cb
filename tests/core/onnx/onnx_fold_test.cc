// Shape arithmetic folded at load (core/onnx/onnx_fold.h): int64 Add, Sub,
// Mul and Div with numpy broadcasting and ONNX's truncating division; what
// it does not fold (other dtypes, other ops, large tensors, overflow) is left
// to the graph, and a division by zero is an error.

#include "core/onnx/onnx_fold.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

Tensor Int64s(IntSpan sizes, const std::vector<double>& values) {
  return MakeTensor(DType::kInt64, sizes, values);
}

TEST(OnnxFoldTest, BroadcastsAndComputesEachOp) {
  const Tensor a = Int64s({2, 1}, {7, -7});
  const Tensor b = Int64s({3}, {2, -2, 3});
  struct Case {
    const char* op;
    std::vector<double> values;
  };
  for (const Case& c : std::vector<Case>{
           {"Add", {9, 5, 10, -5, -9, -4}},
           {"Sub", {5, 9, 4, -9, -5, -10}},
           {"Mul", {14, -14, 21, -14, 14, -21}},
           // Truncating toward zero, not flooring: -7 / 2 is -3.
           {"Div", {3, -3, 2, -3, 3, -2}},
       }) {
    auto folded = FoldIntBinary(c.op, a, b);
    ASSERT_TRUE(folded.ok()) << folded.status();
    ASSERT_TRUE(folded->has_value()) << c.op;
    EXPECT_EQ((*folded)->sizes(), (Shape{2, 3})) << c.op;
    EXPECT_EQ(ToDoubles(**folded), c.values) << c.op;
  }
}

TEST(OnnxFoldTest, WhatItDoesNotFoldIsLeftToTheGraph) {
  const Tensor two = Int64s({1}, {2});
  auto not_folded = [](const absl::StatusOr<std::optional<Tensor>>& r) {
    return r.ok() && !r->has_value();
  };
  EXPECT_TRUE(not_folded(FoldIntBinary("Pow", two, two)));
  EXPECT_TRUE(not_folded(
      FoldIntBinary("Add", MakeTensor(DType::kInt32, {1}, {2}), two)));
  EXPECT_TRUE(not_folded(FoldIntBinary("Add", Iota({65}, DType::kInt64), two)))
      << "more than 64 elements";
  EXPECT_TRUE(not_folded(FoldIntBinary("Add", Iota({8}, DType::kInt64),
                                       Iota({9, 1}, DType::kInt64))))
      << "a 72-element result";
  EXPECT_TRUE(not_folded(
      FoldIntBinary("Add", Int64s({2}, {1, 2}), Int64s({3}, {1, 2, 3}))))
      << "shapes that do not broadcast";
  Tensor max = Tensor::FromScalar(Scalar(INT64_MAX), DType::kInt64);
  EXPECT_TRUE(not_folded(FoldIntBinary("Add", max, two))) << "overflow";
  Tensor min = Tensor::FromScalar(Scalar(INT64_MIN), DType::kInt64);
  EXPECT_TRUE(not_folded(FoldIntBinary(
      "Div", min, Tensor::FromScalar(Scalar(int64_t{-1}), DType::kInt64))));
}

TEST(OnnxFoldTest, DivisionByZeroIsInvalid) {
  ExpectError(FoldIntBinary("Div", Int64s({2}, {4, 5}), Int64s({2}, {1, 0})),
              absl::StatusCode::kInvalidArgument, "integer division by zero");
}

}  // namespace
}  // namespace guardjit::testing
