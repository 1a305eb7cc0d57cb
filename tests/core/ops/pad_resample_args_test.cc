#include "core/ops/pad_resample_args.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/bound_args.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;

Arg Floats(const std::vector<double>& values) {
  Arg::List list;
  for (double v : values) list.push_back(Arg::Float(v));
  return Arg::OfList(std::move(list));
}

Arg Ints(const std::vector<int64_t>& values) {
  Arg::List list;
  for (int64_t v : values) list.push_back(Arg::Int(v));
  return Arg::OfList(std::move(list));
}

TEST(PadOpsTest, TableMatchesTheSchemasPaddedDims) {
  for (const PadDef& def : kPadOps) {
    const std::string schema = def.schema;
    SCOPED_TRACE(schema);
    // reflection_padNd / replication_padNd pad N dims, 2N entries.
    const size_t d = schema.find("_pad") + 4;
    EXPECT_EQ(schema[d] - '0', def.dims);
    EXPECT_NE(schema.find("SymInt[" + std::to_string(2 * def.dims) + "]"),
              std::string::npos);
    EXPECT_EQ(def.reflect, schema.rfind("reflection", 0) == 0);
  }
}

TEST(PadSourceIndexTest, ReflectionMirrorsWithoutRepeatingTheEdge) {
  // n = 4, lo = 2: output 0..7 reads 2 1 0 1 2 3 2 1 (ATen's reflection).
  const std::vector<int64_t> expected = {2, 1, 0, 1, 2, 3, 2, 1};
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(PadSourceIndex(true, i, 2, 4), expected[i]) << i;
  }
}

TEST(PadSourceIndexTest, ReplicationClampsToTheEdge) {
  const std::vector<int64_t> expected = {0, 0, 0, 1, 2, 3, 3, 3};
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(PadSourceIndex(false, i, 2, 4), expected[i]) << i;
  }
}

TEST(PadSourceIndexTest, NoPaddingIsTheIdentity) {
  for (bool reflect : {false, true}) {
    for (int64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(PadSourceIndex(reflect, i, 0, 5), i);
    }
  }
}

TEST(ComputeScaleTest, PositiveScaleIsInvertedElseSizesRatio) {
  EXPECT_DOUBLE_EQ(ComputeScale<double>(2.0, 3, 7), 0.5);
  EXPECT_DOUBLE_EQ(ComputeScale<double>(std::nullopt, 3, 6), 0.5);
  // A zero or negative scale is "not given" (ATen's compute_scales_value).
  EXPECT_DOUBLE_EQ(ComputeScale<double>(0.0, 4, 2), 2.0);
  EXPECT_DOUBLE_EQ(ComputeScale<double>(-1.0, 4, 2), 2.0);
}

TEST(UpsampleScaleTest, FactorOfDimOrNone) {
  const std::optional<std::vector<double>> factors =
      std::vector<double>{1.5, 3.0};
  EXPECT_EQ(UpsampleScale(factors, 0), 1.5);
  EXPECT_EQ(UpsampleScale(factors, 1), 3.0);
  EXPECT_EQ(UpsampleScale(std::nullopt, 1), std::nullopt);
}

TEST(NearestSourceIndexTest, ExactForSameAndDoubleSize) {
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(NearestSourceIndex(i, 5, 5, 7.0), i);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(NearestSourceIndex(i, 5, 10, 3.0), i / 2);
  }
}

TEST(NearestSourceIndexTest, FloorsTheScaledIndexAndClamps) {
  // in 4, out 6: scale 2/3: 0 0 1 2 2 3.
  const std::vector<int64_t> expected = {0, 0, 1, 2, 2, 3};
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(NearestSourceIndex(i, 4, 6, std::nullopt), expected[i]) << i;
  }
  // A given scale factor wins over the sizes: factor 0.5 reads every 2nd.
  EXPECT_EQ(NearestSourceIndex(2, 5, 3, 0.5), 4);
  // Clamped to the last source index.
  EXPECT_EQ(NearestSourceIndex(3, 4, 3, 0.5), 3);
}

TEST(LinearScaleTest, AlignCornersMapsEndsToEnds) {
  EXPECT_DOUBLE_EQ(LinearScale<double>(5, 9, true, std::nullopt), 0.5);
  EXPECT_DOUBLE_EQ(LinearScale<double>(5, 1, true, 2.0), 0.0);
  EXPECT_DOUBLE_EQ(LinearScale<double>(5, 10, false, std::nullopt), 0.5);
  EXPECT_DOUBLE_EQ(LinearScale<double>(5, 10, false, 4.0), 0.25);
}

TEST(LinearSourceTest, HalfPixelCentersWithoutAlignCorners) {
  // in 2, out 4, ratio 0.5: real = 0.5 * (i + 0.5) - 0.5 = -0.25 (clamped
  // to 0), 0.25, 0.75, 1.25 (no source past the last: i1 = i0).
  const LinearTap<float> t0 = LinearSource<float>(0.5f, 0, 2, 4, false);
  EXPECT_EQ(t0.i0, 0);
  EXPECT_EQ(t0.i1, 1);
  EXPECT_FLOAT_EQ(t0.w0, 1.0f);
  EXPECT_FLOAT_EQ(t0.w1, 0.0f);
  const LinearTap<float> t1 = LinearSource<float>(0.5f, 1, 2, 4, false);
  EXPECT_EQ(t1.i0, 0);
  EXPECT_EQ(t1.i1, 1);
  EXPECT_FLOAT_EQ(t1.w0, 0.75f);
  EXPECT_FLOAT_EQ(t1.w1, 0.25f);
  const LinearTap<float> t3 = LinearSource<float>(0.5f, 3, 2, 4, false);
  EXPECT_EQ(t3.i0, 1);
  EXPECT_EQ(t3.i1, 1);
  EXPECT_FLOAT_EQ(t3.w0, 0.75f);
  EXPECT_FLOAT_EQ(t3.w1, 0.25f);
}

TEST(LinearSourceTest, AlignCornersAndSameSize) {
  // in 3, out 5, ratio 0.5: i = 3 reads 1.5.
  const LinearTap<double> t = LinearSource<double>(0.5, 3, 3, 5, true);
  EXPECT_EQ(t.i0, 1);
  EXPECT_EQ(t.i1, 2);
  EXPECT_DOUBLE_EQ(t.w0, 0.5);
  EXPECT_DOUBLE_EQ(t.w1, 0.5);
  const LinearTap<double> same = LinearSource<double>(1.0, 2, 4, 4, false);
  EXPECT_EQ(same.i0, 2);
  EXPECT_EQ(same.i1, 2);
  EXPECT_DOUBLE_EQ(same.w0, 1.0);
  EXPECT_DOUBLE_EQ(same.w1, 0.0);
}

// upsample_nearest2d.vec(input, output_size, scale_factors) as bound.
absl::StatusOr<UpsampleArgs<int64_t>> ReadNearest(Arg output_size,
                                                  Arg factors) {
  Node node;
  node.name = "up";
  node.target = "aten.upsample_nearest2d.vec";
  node.op = OpRegistry::Global().Find(node.target);
  EXPECT_NE(node.op, nullptr);
  node.args = {Arg::Value(ValueRef{0, 0}), std::move(output_size),
               std::move(factors)};
  const BoundArgs<Tensor> args(
      node, [](ValueRef) { return Tensor(); },
      [](const Scalar& s) { return Tensor::WrappedNumber(s); });
  return ReadUpsampleArgs(args, 2);
}

TEST(ReadUpsampleArgsTest, OutputSizeOrScaleFactors) {
  absl::StatusOr<UpsampleArgs<int64_t>> sized =
      ReadNearest(Ints({6, 8}), Arg::None());
  ASSERT_TRUE(sized.ok()) << sized.status();
  EXPECT_EQ(sized->output_size, std::vector<int64_t>({6, 8}));
  EXPECT_FALSE(sized->scale_factors.has_value());
  absl::StatusOr<UpsampleArgs<int64_t>> scaled =
      ReadNearest(Arg::None(), Floats({2.0, 0.5}));
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_FALSE(scaled->output_size.has_value());
  EXPECT_EQ(scaled->scale_factors, std::vector<double>({2.0, 0.5}));
}

TEST(ReadUpsampleArgsTest, ExactlyOneOfTheTwo) {
  ExpectError(ReadNearest(Arg::None(), Arg::None()),
              absl::StatusCode::kInvalidArgument,
              "argument 'output_size': Must specify exactly one of "
              "output_size and scale_factors");
  ExpectError(ReadNearest(Ints({2, 2}), Floats({2.0, 2.0})),
              absl::StatusCode::kInvalidArgument,
              "Must specify exactly one of output_size and scale_factors");
}

TEST(ReadUpsampleArgsTest, TwoEntriesEach) {
  ExpectError(ReadNearest(Ints({4, 4, 4}), Arg::None()),
              absl::StatusCode::kInvalidArgument,
              "argument 'output_size': expected 2 entries (H, W)");
  ExpectError(ReadNearest(Arg::None(), Floats({2.0})),
              absl::StatusCode::kInvalidArgument,
              "argument 'scale_factors': expected 2 entries (H, W)");
}

}  // namespace
}  // namespace guardjit
