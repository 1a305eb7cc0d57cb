#include "core/shape_util.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(ShapeUtilTest, Broadcasting) {
  EXPECT_EQ(*BroadcastShapes(Shape{2, 1, 3}, Shape{4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(*BroadcastShapes(Shape{}, Shape{5}), (Shape{5}));
  EXPECT_EQ(*BroadcastShapes(Shape{0, 1}, Shape{3}), (Shape{0, 3}));
  auto bad = BroadcastShapes(Shape{2, 3}, Shape{4});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("[2, 3] and [4]"));
  EXPECT_EQ(*BroadcastShapes({Shape{3, 1}, Shape{1, 4}, Shape{4}}),
            (Shape{3, 4}));
}

TEST(ShapeUtilTest, Dims) {
  EXPECT_EQ(*NormalizeDim(-1, 3), 2);
  EXPECT_EQ(*NormalizeDim(0, 0), 0);
  EXPECT_EQ(*NormalizeDim(-1, 0), 0);
  EXPECT_THAT(std::string(NormalizeDim(3, 3).status().message()),
              HasSubstr("dimension 3 out of range [-3, 2]"));
  auto mask = ReductionMask(std::vector<int64_t>{0, -1}, 3);
  EXPECT_EQ(*mask, (std::vector<bool>{true, false, true}));
  EXPECT_FALSE(ReductionMask(std::vector<int64_t>{1, -2}, 3).ok());
  EXPECT_EQ(*ReductionMask(std::nullopt, 2), (std::vector<bool>{true, true}));
  EXPECT_EQ(HintShape(ReducedShape(ToSymShape(Shape{2, 3, 4}),
                                   {true, false, true}, false)),
            (Shape{3}));
  EXPECT_EQ(HintShape(ReducedShape(ToSymShape(Shape{2, 3, 4}),
                                   {true, false, true}, true)),
            (Shape{1, 3, 1}));
}

TensorMeta T(DType d, Shape s) { return {d, std::move(s)}; }
TensorMeta Wrapped(DType d) { return {d, {}, Device::Cpu(), true}; }

TEST(ShapeUtilTest, ResultTypeFollowsTorch) {
  // torch.result_type cases.
  EXPECT_EQ(ResultType({T(DType::kInt32, {2}), Wrapped(DType::kInt64)}),
            DType::kInt32);
  EXPECT_EQ(ResultType({T(DType::kInt32, {2}), Wrapped(DType::kFloat64)}),
            DType::kFloat32);
  EXPECT_EQ(ResultType({T(DType::kFloat16, {2}), Wrapped(DType::kFloat64)}),
            DType::kFloat16);
  EXPECT_EQ(ResultType({T(DType::kBool, {2}), Wrapped(DType::kInt64)}),
            DType::kInt64);
  EXPECT_EQ(ResultType({T(DType::kUInt8, {2}), T(DType::kInt8, {2})}),
            DType::kInt16);
  // A 0-dim tensor does not promote a dimensioned one of the same category...
  EXPECT_EQ(ResultType({T(DType::kFloat16, {2}), T(DType::kFloat64, {})}),
            DType::kFloat16);
  EXPECT_EQ(ResultType({T(DType::kInt8, {2}), T(DType::kInt64, {})}),
            DType::kInt8);
  // ...but does across categories.
  EXPECT_EQ(ResultType({T(DType::kInt32, {2}), T(DType::kFloat64, {})}),
            DType::kFloat64);
  EXPECT_EQ(ResultType({T(DType::kFloat64, {}), Wrapped(DType::kInt64)}),
            DType::kFloat64);
  EXPECT_EQ(ResultType({T(DType::kInt64, {}), Wrapped(DType::kFloat64)}),
            DType::kFloat32);
  EXPECT_EQ(ResultType({Wrapped(DType::kInt64), Wrapped(DType::kFloat64)}),
            DType::kFloat32);
}

}  // namespace
}  // namespace guardjit
