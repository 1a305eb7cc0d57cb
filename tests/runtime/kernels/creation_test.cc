// full, arange and scalar_tensor: values, inferred dtypes, and the argument
// checks ATen makes before allocating.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

using ::guardjit::testing::kAllDTypes;

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& result,
                 absl::StatusCode code, absl::string_view text) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(result.status().message().find(text), absl::string_view::npos)
      << result.status();
}

TEST(CreationFullTest, InfersDTypeFromFillValue) {
  ExpectTensor(RunOp1("aten.full.default", {{2, 3}, 1.5}), DType::kFloat32,
               {2, 3}, std::vector<double>(6, 1.5));
  ExpectTensor(RunOp1("aten.full.default", {{2}, 7}), DType::kInt64, {2},
               {7, 7});
  ExpectTensor(RunOp1("aten.full.default", {{1, 2}, true}), DType::kBool,
               {1, 2}, {1, 1});
  // An empty size list is a 0-dim tensor; a zero size an empty one.
  ExpectTensor(RunOp1("aten.full.default", {std::vector<int64_t>{}, -4}),
               DType::kInt64, {}, {-4});
  ExpectTensor(RunOp1("aten.full.default", {{0, 4}, 2.0}), DType::kFloat32,
               {0, 4}, {});
  // A single int is accepted for SymInt[] like in ATen.
  ExpectTensor(RunOp1("aten.full.default", {3, 0.25}), DType::kFloat32, {3},
               {0.25, 0.25, 0.25});
}

TEST(CreationFullLikeTest, TakesShapeAndDTypeOfSelfUnlessGiven) {
  const Tensor x = MakeTensor(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  // The fill converts to self's dtype (2.7 truncates for int32).
  ExpectTensor(RunOp1("aten.full_like.default", {x, 2.7}), DType::kInt32,
               {2, 2}, {2, 2, 2, 2});
  ExpectTensor(
      RunOp1("aten.full_like.default", {x, 2.5}, {{"dtype", DType::kFloat16}}),
      DType::kFloat16, {2, 2}, {2.5, 2.5, 2.5, 2.5});
  ExpectTensor(RunOp1("aten.full_like.default",
                      {MakeTensor(DType::kFloat32, {0, 3}, {}), 1.0}),
               DType::kFloat32, {0, 3}, {});
  const double inf = std::numeric_limits<double>::infinity();
  ExpectTensor(RunOp1("aten.full_like.default",
                      {MakeTensor(DType::kFloat32, {1}, {0}), -inf}),
               DType::kFloat32, {1}, {-inf});
  auto overflow = RunOp("aten.full_like.default",
                        {MakeTensor(DType::kUInt8, {1}, {0}), 300});
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("argument 'fill_value'"),
            std::string::npos)
      << overflow.status();
}

TEST(CreationFullTest, ConvertsToTheRequestedDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectTensor(RunOp1("aten.full.default", {{2, 2}, 3}, {{"dtype", dtype}}),
                 dtype, {2, 2},
                 std::vector<double>(4, dtype == DType::kBool ? 1.0 : 3.0));
    ExpectTensor(RunOp1("aten.full.default", {{1}, false}, {{"dtype", dtype}}),
                 dtype, {1}, {0});
  }
  // Floats truncate toward zero for integers; negative ints wrap into uint8.
  ExpectTensor(
      RunOp1("aten.full.default", {{2}, -2.7}, {{"dtype", DType::kInt32}}),
      DType::kInt32, {2}, {-2, -2});
  ExpectTensor(
      RunOp1("aten.full.default", {{1}, -1}, {{"dtype", DType::kUInt8}}),
      DType::kUInt8, {1}, {255});
  ExpectTensor(
      RunOp1("aten.full.default", {{1}, 0.1}, {{"dtype", DType::kFloat16}}),
      DType::kFloat16, {1}, {0.0999755859375});
  ExpectTensor(
      RunOp1("aten.full.default", {{1}, 0.5}, {{"dtype", DType::kBool}}),
      DType::kBool, {1}, {1});
  // Infinities and NaN fit floating dtypes.
  ExpectTensor(RunOp1("aten.full.default", {{1}, INFINITY},
                      {{"dtype", DType::kFloat16}}),
               DType::kFloat16, {1}, {INFINITY});
  ExpectTensor(RunOp1("aten.full.default", {{1}, NAN}), DType::kFloat32, {1},
               {NAN});
  ExpectTensor(
      RunOp1("aten.full.default", {{1}, NAN}, {{"dtype", DType::kBool}}),
      DType::kBool, {1}, {1});
  // int64 extremes are exact.
  Tensor big =
      RunOp1("aten.full.default", {{1}, std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(big.data_as<int64_t>()[0], std::numeric_limits<int64_t>::min());
  // Explicit cpu device and layout/pin_memory are accepted.
  ExpectTensor(
      RunOp1(
          "aten.full.default", {{1}, 2},
          {{"device", "cpu"}, {"layout", Arg::None()}, {"pin_memory", false}}),
      DType::kInt64, {1}, {2});
}

TEST(CreationFullTest, RejectsBadArguments) {
  ExpectError(RunOp("aten.full.default", {{2, -1}, 1.0}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': negative dimension -1");
  // Sizes whose element or byte count overflow int64 fail before allocating.
  ExpectError(
      RunOp("aten.full.default", {{int64_t{1} << 40, int64_t{1} << 40}, 1.0}),
      absl::StatusCode::kOutOfRange, "argument 'size'");
  ExpectError(RunOp("aten.full.default", {{int64_t{1} << 62}, 1.0}),
              absl::StatusCode::kOutOfRange, "argument 'size'");
  ExpectError(
      RunOp("aten.full.default", {{2}, 300}, {{"dtype", DType::kUInt8}}),
      absl::StatusCode::kInvalidArgument,
      "argument 'fill_value': value 300 cannot be converted to type uint8");
  ExpectError(
      RunOp("aten.full.default", {{2}, -0.5}, {{"dtype", DType::kUInt8}}),
      absl::StatusCode::kInvalidArgument, "argument 'fill_value'");
  ExpectError(
      RunOp("aten.full.default", {{2}, 1e300}, {{"dtype", DType::kFloat32}}),
      absl::StatusCode::kInvalidArgument, "argument 'fill_value'");
  ExpectError(
      RunOp("aten.full.default", {{2}, 70000}, {{"dtype", DType::kFloat16}}),
      absl::StatusCode::kInvalidArgument, "argument 'fill_value'");
  ExpectError(
      RunOp("aten.full.default", {{2}, NAN}, {{"dtype", DType::kInt32}}),
      absl::StatusCode::kInvalidArgument, "argument 'fill_value'");
  ExpectError(
      RunOp("aten.full.default", {{2}, 9.3e18}, {{"dtype", DType::kInt64}}),
      absl::StatusCode::kInvalidArgument, "argument 'fill_value'");
  ExpectError(RunOp("aten.full.default", {{2}, 1.0}, {{"device", "cuda"}}),
              absl::StatusCode::kUnimplemented, "argument 'device'");
}

TEST(CreationArangeTest, ValuesAndInferredDTypes) {
  ExpectTensor(RunOp1("aten.arange.default", {5}), DType::kInt64, {5},
               {0, 1, 2, 3, 4});
  ExpectTensor(RunOp1("aten.arange.default", {2.5}), DType::kFloat32, {3},
               {0, 1, 2});
  ExpectTensor(RunOp1("aten.arange.start", {-2, 2}), DType::kInt64, {4},
               {-2, -1, 0, 1});
  ExpectTensor(RunOp1("aten.arange.start_step", {0, 1, 0.25}), DType::kFloat32,
               {4}, {0, 0.25, 0.5, 0.75});
  ExpectTensor(RunOp1("aten.arange.start_step", {10, 0, -3}), DType::kInt64,
               {4}, {10, 7, 4, 1});
  ExpectTensor(RunOp1("aten.arange.start_step", {0, 10, 3}), DType::kInt64, {4},
               {0, 3, 6, 9});
  ExpectTensor(RunOp1("aten.arange.start_step", {1.0, 2.0, 0.3},
                      {{"dtype", DType::kFloat64}}),
               DType::kFloat64, {4}, {1.0, 1.3, 1.6, 1.9}, 1e-15);
  // An empty range.
  ExpectTensor(RunOp1("aten.arange.start", {3, 3}), DType::kInt64, {0}, {});
  // Integral dtypes read the bounds as int64: 0.5 starts at 0, step 2.5 is 2,
  // but the size comes from the original values: ceil(10 / 2.5) = 4.
  ExpectTensor(
      RunOp1("aten.arange.start", {0.5, 3}, {{"dtype", DType::kInt32}}),
      DType::kInt32, {3}, {0, 1, 2});
  ExpectTensor(RunOp1("aten.arange.start_step", {0, 10, 2.5},
                      {{"dtype", DType::kInt16}}),
               DType::kInt16, {4}, {0, 2, 4, 6});
  // int64 bounds near the limits are exact.
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor top = RunOp1("aten.arange.start", {max - 2, max});
  ASSERT_EQ(top.numel(), 2);
  EXPECT_EQ(top.data_as<int64_t>()[1], max - 1);
}

TEST(CreationArangeTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    ExpectTensor(
        RunOp1("aten.arange.start_step", {1, 9, 2}, {{"dtype", dtype}}), dtype,
        {4}, {1, 3, 5, 7});
    ExpectTensor(RunOp1("aten.arange.default", {3}, {{"dtype", dtype}}), dtype,
                 {3}, {0, 1, 2});
  }
  ExpectTensor(RunOp1("aten.arange.start_step", {0, 2, 0.5},
                      {{"dtype", DType::kFloat16}}),
               DType::kFloat16, {4}, {0, 0.5, 1, 1.5});
  // Integral values wrap like ATen's int64 accumulation cast to int8.
  ExpectTensor(
      RunOp1("aten.arange.start", {126, 130}, {{"dtype", DType::kInt8}}),
      DType::kInt8, {4}, {126, 127, -128, -127});
}

TEST(CreationArangeTest, RejectsBadRanges) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError(RunOp("aten.arange.start_step", {0, 5, 0}), kInvalid,
              "argument 'step': step must be nonzero");
  ExpectError(RunOp("aten.arange.start_step", {0.0, 5.0, 0.0}), kInvalid,
              "argument 'step': step must be nonzero");
  // Step 0.5 truncates to 0 for an integral dtype.
  ExpectError(
      RunOp("aten.arange.start_step", {0, 5, 0.5}, {{"dtype", DType::kInt32}}),
      kInvalid, "argument 'step': step must be nonzero");
  ExpectError(RunOp("aten.arange.start_step", {0, 5, -1}), kInvalid,
              "argument 'step': upper bound and larger bound inconsistent with "
              "step sign");
  ExpectError(RunOp("aten.arange.start", {5, 0}), kInvalid,
              "argument 'end': upper bound and larger bound inconsistent");
  ExpectError(RunOp("aten.arange.default", {-3}), kInvalid, "argument 'end'");
  ExpectError(RunOp("aten.arange.start", {0.0, NAN}), kInvalid,
              "argument 'end': unsupported range");
  ExpectError(RunOp("aten.arange.start", {-INFINITY, 1.0}), kInvalid,
              "argument 'start': unsupported range");
  ExpectError(RunOp("aten.arange.default", {5}, {{"dtype", DType::kBool}}),
              kInvalid, "argument 'dtype': arange is not defined for bool");
  ExpectError(RunOp("aten.arange.default", {1e30}, {{"dtype", DType::kInt64}}),
              kInvalid, "argument 'end': value 1e+30 cannot be converted");
  ExpectError(
      RunOp("aten.arange.default", {1e39}, {{"dtype", DType::kFloat16}}),
      kInvalid, "argument 'end'");
  // Sizes past int64 or past 2^63 bytes fail before allocating.
  const int64_t min = std::numeric_limits<int64_t>::min();
  const int64_t max = std::numeric_limits<int64_t>::max();
  ExpectError(RunOp("aten.arange.start", {min, max}),
              absl::StatusCode::kOutOfRange, "argument 'end': invalid size");
  ExpectError(RunOp("aten.arange.start_step", {0.0, 1e30, 1e-10}),
              absl::StatusCode::kOutOfRange, "argument 'step': invalid size");
  ExpectError(RunOp("aten.arange.default", {int64_t{1} << 61}),
              absl::StatusCode::kOutOfRange, "argument 'end'");
  ExpectError(RunOp("aten.arange.default", {5}, {{"device", "cuda:1"}}),
              absl::StatusCode::kUnimplemented,
              "argument 'device': the eager interpreter creates tensors on cpu "
              "only, got cuda:1");
}

TEST(CreationScalarTensorTest, ValuesAndDTypes) {
  // The default dtype is float32 whatever the scalar's kind.
  ExpectTensor(RunOp1("aten.scalar_tensor.default", {3}), DType::kFloat32, {},
               {3});
  ExpectTensor(RunOp1("aten.scalar_tensor.default", {true}), DType::kFloat32,
               {}, {1});
  ExpectTensor(RunOp1("aten.scalar_tensor.default", {-1.25}), DType::kFloat32,
               {}, {-1.25});
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectTensor(RunOp1("aten.scalar_tensor.default", {2}, {{"dtype", dtype}}),
                 dtype, {}, {dtype == DType::kBool ? 1.0 : 2.0});
  }
  ExpectError(RunOp("aten.scalar_tensor.default", {1e300}),
              absl::StatusCode::kInvalidArgument,
              "argument 's': value 1e+300 cannot be converted to type float32");
  ExpectError(
      RunOp("aten.scalar_tensor.default", {128}, {{"dtype", DType::kInt8}}),
      absl::StatusCode::kInvalidArgument, "argument 's'");
  ExpectError(RunOp("aten.scalar_tensor.default", {1}, {{"device", "cuda"}}),
              absl::StatusCode::kUnimplemented, "argument 'device'");
}

}  // namespace
}  // namespace guardjit
