// The pointwise kernels' plumbing (runtime/kernels/pointwise_util.h): dtype
// of a storage type, Scalar conversion, cast-and-broadcast of operands, the
// output buffer choice and MapPointwise's element loop and errors.

#include "runtime/kernels/pointwise_util.h"

#include <cstdint>
#include <string>

#include "core/tensor_meta.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

static_assert(DTypeOf<bool>() == DType::kBool);
static_assert(DTypeOf<uint8_t>() == DType::kUInt8);
static_assert(DTypeOf<int8_t>() == DType::kInt8);
static_assert(DTypeOf<int16_t>() == DType::kInt16);
static_assert(DTypeOf<int32_t>() == DType::kInt32);
static_assert(DTypeOf<int64_t>() == DType::kInt64);
static_assert(DTypeOf<Half>() == DType::kFloat16);
static_assert(DTypeOf<BFloat16>() == DType::kBFloat16);
static_assert(DTypeOf<float>() == DType::kFloat32);
static_assert(DTypeOf<double>() == DType::kFloat64);
static_assert(IntegralElement<int32_t> && !IntegralElement<bool>);
static_assert(IntegralOrBoolElement<bool> && !IntegralOrBoolElement<float>);
static_assert(FloatElement<Half> && FloatElement<double> &&
              !FloatElement<int64_t>);
static_assert(NumericElement<float> && !NumericElement<bool>);

TEST(PointwiseUtilTest, ScalarAsConvertsEachKind) {
  EXPECT_EQ(ScalarAs<float>(Scalar(int64_t{3})), 3.0f);
  EXPECT_EQ(ScalarAs<int64_t>(Scalar(true)), 1);
  EXPECT_EQ(ScalarAs<bool>(Scalar(0.0)), false);
  EXPECT_EQ(ScalarAs<bool>(Scalar(0.5)), true);
  EXPECT_EQ(ScalarAs<double>(Scalar(-1.25)), -1.25);
  EXPECT_EQ(ScalarAs<int32_t>(Scalar(int64_t{-7})), -7);
}

TEST(PointwiseUtilTest, CastAndExpandBroadcastsWithoutCopying) {
  Tensor t = MakeTensor(DType::kInt32, {3}, {1, 2, 3});
  auto e = CastAndExpand(t, DType::kFloat32, Shape{2, 3});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->sizes(), (IntSpan{2, 3}));
  EXPECT_EQ(e->strides(), (IntSpan{0, 1}));
  ExpectTensor(*e, DType::kFloat32, {2, 3}, {1, 2, 3, 1, 2, 3});
  // Already the dtype: a view of the same memory.
  Tensor f = MakeTensor(DType::kFloat32, {2, 1}, {5, 6});
  auto g = CastAndExpand(f, DType::kFloat32, Shape{2, 2});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->data(), f.data());
  ExpectTensor(*g, DType::kFloat32, {2, 2}, {5, 5, 6, 6});
}

TEST(PointwiseUtilTest, OutputForReusesAFittingDestinationOnly) {
  TensorMeta meta(DType::kFloat32, Shape{2, 3});
  // Fits: same dtype and sizes, strides free (a transposed buffer).
  Tensor base = Iota({3, 2});
  Tensor dest = base.AsStrided({2, 3}, {1, 2});
  auto out = OutputFor(&dest, meta);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->data(), dest.data());
  EXPECT_EQ(out->strides(), (IntSpan{1, 2}));
  // Wrong dtype or sizes, or none: a new contiguous tensor.
  const Tensor wrong_dtype = Iota({2, 3}, DType::kFloat64);
  const Tensor wrong_sizes = Iota({3, 2});
  for (const Tensor* d :
       {&wrong_dtype, &wrong_sizes, static_cast<const Tensor*>(nullptr)}) {
    auto fresh = OutputFor(d, meta);
    ASSERT_TRUE(fresh.ok());
    if (d != nullptr) EXPECT_NE(fresh->data(), d->data());
    EXPECT_EQ(fresh->dtype(), DType::kFloat32);
    EXPECT_EQ(fresh->sizes(), (IntSpan{2, 3}));
    EXPECT_TRUE(fresh->is_contiguous());
  }
}

TEST(PointwiseUtilTest, MapPointwiseBroadcastsAndConverts) {
  const Tensor inputs[2] = {MakeTensor(DType::kInt64, {2, 1}, {10, 20}),
                            MakeTensor(DType::kFloat32, {3}, {0.5, 1, 2})};
  auto out =
      MapPointwise(inputs, DType::kFloat64,
                   TensorMeta(DType::kFloat64, Shape{2, 3}), [](auto tag) {
                     using T = typename decltype(tag)::type;
                     return [](T a, T b) { return a * b; };
                   });
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor(*out, DType::kFloat64, {2, 3}, {5, 10, 20, 10, 20, 40});
}

TEST(PointwiseUtilTest, MapPointwiseWritesTheDestination) {
  const Tensor inputs[1] = {MakeTensor(DType::kFloat32, {2, 2}, {1, 2, 3, 4})};
  Tensor base = *Tensor::Zeros(DType::kFloat32, {2, 2});
  Tensor dest = base.AsStrided({2, 2}, {1, 2});  // column-major
  auto out = MapPointwise(
      inputs, DType::kFloat32, TensorMeta(DType::kFloat32, Shape{2, 2}),
      [](TypeTag<float>) { return [](float a) { return -a; }; }, &dest);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->data(), dest.data());
  ExpectTensor(dest, DType::kFloat32, {2, 2}, {-1, -2, -3, -4});
  // The buffer in memory order.
  ExpectTensor(base, DType::kFloat32, {2, 2}, {-1, -3, -2, -4});
}

TEST(PointwiseUtilTest, MapPointwiseComparesIntoBool) {
  const Tensor inputs[2] = {MakeTensor(DType::kInt32, {3}, {1, 5, 3}),
                            MakeTensor(DType::kInt32, {}, {3})};
  auto out =
      MapPointwise(inputs, DType::kInt32, TensorMeta(DType::kBool, Shape{3}),
                   [](TypeTag<int32_t>) {
                     return [](int32_t a, int32_t b) { return a < b; };
                   });
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor(*out, DType::kBool, {3}, {1, 0, 0});
}

TEST(PointwiseUtilTest,
     MapPointwiseReportsMismatchedAndMissingElementFunctions) {
  const Tensor inputs[1] = {MakeTensor(DType::kFloat32, {2}, {1, 2})};
  // Returns double for a float32 output.
  auto wrong = MapPointwise(
      inputs, DType::kFloat32, TensorMeta(DType::kFloat32, Shape{2}),
      [](TypeTag<float>) { return [](float a) { return double{a}; }; });
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("element function returns float64, output is float32"));
  // Only a float element function; computed in int64.
  auto missing =
      MapPointwise(inputs, DType::kInt64, TensorMeta(DType::kFloat32, Shape{2}),
                   [](TypeTag<float>) { return [](float a) { return a; }; });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("no element function for int64"));
}

}  // namespace
}  // namespace guardjit::testing
