// _softmax, _log_softmax, native_layer_norm and the _native_batch_norm_legit
// family run through the graph builder and the eager interpreter, checked
// against loops over the input's values.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16,
                              DType::kFloat32, DType::kFloat64};

double TolFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1e-2;
    case DType::kFloat32:
      return 1e-6;
    default:
      return 1e-12;
  }
}

// Softmax (or log-softmax) along `dim` of a row-major tensor of `sizes`,
// straight from the definition: exp(x) / sum(exp(x)) over each line.
std::vector<double> ExpectedSoftmax(const std::vector<double>& x, IntSpan sizes,
                                    int dim, bool log) {
  int64_t inner = 1;
  for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t n = sizes.empty() ? 1 : sizes[dim];
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    // First element of i's line along `dim`.
    const int64_t start = (static_cast<int64_t>(i) / (inner * n)) * inner * n +
                          static_cast<int64_t>(i) % inner;
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += std::exp(x[start + k * inner]);
    y[i] = log ? x[i] - std::log(sum) : std::exp(x[i]) / sum;
  }
  return y;
}

void ExpectInvalid(const absl::Status& status, const std::string& argument,
                   const std::string& detail) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_NE(message.find("argument '" + argument + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find(detail), std::string::npos) << message;
}

// ---------------------------------------------------------------------------
// Softmax.

TEST(NormalizationSoftmax, EveryDimAndDTypeMatchesDefinition) {
  for (DType dtype : kFloatDTypes) {
    const Tensor x = RandomTensor(dtype, {2, 3, 4}, 1);
    for (int64_t dim : {0, 1, 2, -1, -2, -3}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " dim " +
                   std::to_string(dim));
      const int d = static_cast<int>(dim < 0 ? dim + 3 : dim);
      for (bool log : {false, true}) {
        const Tensor y =
            RunOp1(log ? "aten._log_softmax.default" : "aten._softmax.default",
                   {x, dim, false});
        ExpectTensor(y, dtype, {2, 3, 4},
                     ExpectedSoftmax(ToDoubles(x), x.sizes(), d, log),
                     TolFor(dtype), TolFor(dtype));
      }
    }
  }
}

TEST(NormalizationSoftmax, RowsSumToOneWithoutOverflow) {
  // exp(1000) overflows even double; subtracting the row max keeps it finite.
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3},
                              {1000.0, 1001.0, 1002.0, -1000.0, 0.0, 1000.0});
  const std::vector<double> y =
      ToDoubles(RunOp1("aten._softmax.default", {x, 1, false}));
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0);
  const double s = 1.0 + e1 + e2;
  ExpectTensor(RunOp1("aten._softmax.default", {x, 1, false}), DType::kFloat32,
               {2, 3}, {e2 / s, e1 / s, 1.0 / s, 0.0, 0.0, 1.0});
  for (int r = 0; r < 2; ++r)
    EXPECT_NEAR(y[3 * r] + y[3 * r + 1] + y[3 * r + 2], 1.0, 1e-6);
  ExpectTensor(RunOp1("aten._log_softmax.default", {x, 1, false}),
               DType::kFloat32, {2, 3},
               {-2.0 - std::log(s), -1.0 - std::log(s), -std::log(s), -2000.0,
                -1000.0, 0.0},
               1e-4, 1e-6);
  const Tensor h =
      MakeTensor(DType::kFloat16, {4}, {60000.0, 60000.0, -60000.0, 0.0});
  ExpectTensor(RunOp1("aten._softmax.default", {h, 0, false}), DType::kFloat16,
               {4}, {0.5, 0.5, 0.0, 0.0});
}

TEST(NormalizationSoftmax, InfinitiesAndNaN) {
  const Tensor x = MakeTensor(DType::kFloat64, {3, 2},
                              {-kInf, 0.0, -kInf, -kInf, kNaN, 1.0});
  ExpectTensor(RunOp1("aten._softmax.default", {x, 1, false}), DType::kFloat64,
               {3, 2}, {0.0, 1.0, kNaN, kNaN, kNaN, kNaN});
  ExpectTensor(RunOp1("aten._log_softmax.default", {x, -1, false}),
               DType::kFloat64, {3, 2}, {-kInf, 0.0, kNaN, kNaN, kNaN, kNaN});
}

TEST(NormalizationSoftmax, NonContiguousAndOffsetInputs) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4, 5}, 2);
  const Tensor storage = RandomTensor(DType::kFloat32, {200}, 3);
  const Tensor sliced = storage.AsStrided({3, 4, 5}, {50, 11, 2}, 7);
  for (const Tensor& t : {NonContiguousCopy(x), sliced}) {
    for (int64_t dim : {0, 1, 2}) {
      for (bool log : {false, true}) {
        const Tensor y =
            RunOp1(log ? "aten._log_softmax.default" : "aten._softmax.default",
                   {t, dim, false});
        EXPECT_TRUE(y.is_contiguous());
        ExpectTensor(y, DType::kFloat32, {3, 4, 5},
                     ExpectedSoftmax(ToDoubles(t), t.sizes(),
                                     static_cast<int>(dim), log));
      }
    }
  }
}

TEST(NormalizationSoftmax, EmptyAndZeroDim) {
  const Tensor empty = *Tensor::Empty(DType::kFloat32, {2, 0, 3});
  for (int64_t dim : {0, 1, 2}) {
    ExpectTensor(RunOp1("aten._softmax.default", {empty, dim, false}),
                 DType::kFloat32, {2, 0, 3}, {});
  }
  const Tensor scalar = MakeTensor(DType::kFloat64, {}, {-7.5});
  ExpectTensor(RunOp1("aten._softmax.default", {scalar, 0, false}),
               DType::kFloat64, {}, {1.0});
  ExpectTensor(RunOp1("aten._log_softmax.default", {scalar, -1, false}),
               DType::kFloat64, {}, {0.0});
}

TEST(NormalizationSoftmax, Errors) {
  const Tensor f = RandomTensor(DType::kFloat32, {2, 3}, 4);
  ExpectInvalid(RunOp("aten._softmax.default", {f, 1, true}).status(),
                "half_to_float", "conversion is supported for Half type only");
  const Tensor h = RandomTensor(DType::kFloat16, {2, 3}, 5);
  ExpectInvalid(
      RunOp("aten._log_softmax.default", {h, 1, true}).status(),
      "half_to_float",
      "log_softmax with half to float conversion is not supported on CPU");
  ExpectInvalid(RunOp("aten._softmax.default", {f, 2, false}).status(), "dim",
                "dimension 2 out of range [-2, 1]");
  ExpectInvalid(RunOp("aten._log_softmax.default", {f, -3, false}).status(),
                "dim", "out of range");
  const Tensor ints = MakeTensor(DType::kInt32, {2}, {1, 2});
  ExpectInvalid(RunOp("aten._softmax.default", {ints, 0, false}).status(),
                "self", "softmax expects a floating point input, got int32");
  const Tensor b = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectInvalid(RunOp("aten._log_softmax.default", {b, 0, false}).status(),
                "self", "floating point");
}

// ---------------------------------------------------------------------------
// Layer norm.

struct LayerNormExpected {
  std::vector<double> out, mean, rstd;
};

// Layer norm over the last `n` elements of each row, from the definition.
LayerNormExpected ExpectedLayerNorm(const std::vector<double>& x, int64_t n,
                                    const std::vector<double>& weight,
                                    const std::vector<double>& bias,
                                    double eps) {
  LayerNormExpected e;
  for (size_t start = 0; start < x.size(); start += n) {
    double mean = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += x[start + i] / n;
    double var = 0.0;
    for (int64_t i = 0; i < n; ++i)
      var += (x[start + i] - mean) * (x[start + i] - mean) / n;
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      e.out.push_back((x[start + i] - mean) * rstd *
                          (weight.empty() ? 1.0 : weight[i]) +
                      (bias.empty() ? 0.0 : bias[i]));
    }
    e.mean.push_back(mean);
    e.rstd.push_back(rstd);
  }
  return e;
}

TEST(NormalizationLayerNorm, MatchesDefinitionForEveryDType) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {2, 3, 4}, 6);
    const Tensor w = RandomTensor(dtype, {3, 4}, 7);
    const Tensor b = RandomTensor(dtype, {3, 4}, 8);
    auto got =
        RunOp("aten.native_layer_norm.default", {x, OpArg({3, 4}), w, b, 1e-5});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 3u);
    const LayerNormExpected e =
        ExpectedLayerNorm(ToDoubles(x), 12, ToDoubles(w), ToDoubles(b), 1e-5);
    const double tol =
        TolFor(dtype) * 4;  // out ~ |x - mean| * rstd * w spans a few units
    ExpectTensor((*got)[0], dtype, {2, 3, 4}, e.out, tol, tol);
    ExpectTensor((*got)[1], dtype, {2, 1, 1}, e.mean, tol, tol);
    ExpectTensor((*got)[2], dtype, {2, 1, 1}, e.rstd, tol, tol);
  }
}

TEST(NormalizationLayerNorm, LastDimWithoutAffineAndNonContiguous) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 5}, 9);
  const Tensor storage = RandomTensor(DType::kFloat32, {100}, 10);
  const Tensor sliced = storage.AsStrided({3, 5}, {20, 3}, 4);
  for (const Tensor& t : {x, NonContiguousCopy(x), sliced}) {
    const OpArg none = Arg::None();
    auto got = RunOp("aten.native_layer_norm.default",
                     {t, OpArg({5}), none, none, 0.1});
    ASSERT_TRUE(got.ok()) << got.status();
    const LayerNormExpected e = ExpectedLayerNorm(ToDoubles(t), 5, {}, {}, 0.1);
    ExpectTensor((*got)[0], DType::kFloat32, {3, 5}, e.out);
    ExpectTensor((*got)[1], DType::kFloat32, {3, 1}, e.mean);
    ExpectTensor((*got)[2], DType::kFloat32, {3, 1}, e.rstd);
  }
  // Weight only, then bias only.
  const Tensor w = MakeTensor(DType::kFloat32, {5}, {1, 2, 3, 4, 5});
  const OpArg none = Arg::None();
  auto weighted =
      RunOp("aten.native_layer_norm.default", {x, OpArg({5}), w, none, 1e-5});
  ASSERT_TRUE(weighted.ok()) << weighted.status();
  ExpectTensor((*weighted)[0], DType::kFloat32, {3, 5},
               ExpectedLayerNorm(ToDoubles(x), 5, ToDoubles(w), {}, 1e-5).out);
  auto biased =
      RunOp("aten.native_layer_norm.default", {x, OpArg({5}), none, w, 1e-5});
  ASSERT_TRUE(biased.ok()) << biased.status();
  ExpectTensor((*biased)[0], DType::kFloat32, {3, 5},
               ExpectedLayerNorm(ToDoubles(x), 5, {}, ToDoubles(w), 1e-5).out);
}

TEST(NormalizationLayerNorm, HandComputedRow) {
  // Row [1, 2, 3, 6]: mean 3, biased var 14/4 = 3.5, eps 0.5 -> rstd 1/2.
  const Tensor x = MakeTensor(DType::kFloat64, {1, 4}, {1, 2, 3, 6});
  const OpArg none = Arg::None();
  auto got =
      RunOp("aten.native_layer_norm.default", {x, OpArg({4}), none, none, 0.5});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectTensor((*got)[0], DType::kFloat64, {1, 4}, {-1.0, -0.5, 0.0, 1.5});
  ExpectTensor((*got)[1], DType::kFloat64, {1, 1}, {3.0});
  ExpectTensor((*got)[2], DType::kFloat64, {1, 1}, {0.5});
  // The whole tensor normalized: stats have every dim set to 1.
  auto whole = RunOp("aten.native_layer_norm.default",
                     {x, OpArg({1, 4}), none, none, 0.5});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ExpectTensor((*whole)[1], DType::kFloat64, {1, 1}, {3.0});
}

TEST(NormalizationLayerNorm, MixedPrecisionParamsKeepStatsInFloat32) {
  // A half/bfloat16 input with float32 weight and bias: ATen's mixed-dtype
  // path returns mean and rstd as float32.
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = RandomTensor(dtype, {2, 4}, 11);
    const Tensor w = RandomTensor(DType::kFloat32, {4}, 12);
    const Tensor b = RandomTensor(DType::kFloat32, {4}, 13);
    auto got =
        RunOp("aten.native_layer_norm.default", {x, OpArg({4}), w, b, 1e-5});
    ASSERT_TRUE(got.ok()) << got.status();
    const LayerNormExpected e =
        ExpectedLayerNorm(ToDoubles(x), 4, ToDoubles(w), ToDoubles(b), 1e-5);
    ExpectTensor((*got)[0], dtype, {2, 4}, e.out, 4 * TolFor(dtype),
                 4 * TolFor(dtype));
    ExpectTensor((*got)[1], DType::kFloat32, {2, 1}, e.mean, 1e-6, 1e-6);
    ExpectTensor((*got)[2], DType::kFloat32, {2, 1}, e.rstd, 1e-6, 1e-6);
  }
}

TEST(NormalizationLayerNorm, EmptyInputs) {
  const Tensor x = *Tensor::Empty(DType::kFloat32, {0, 4});
  const OpArg none = Arg::None();
  auto got = RunOp("aten.native_layer_norm.default",
                   {x, OpArg({4}), none, none, 1e-5});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectTensor((*got)[0], DType::kFloat32, {0, 4}, {});
  ExpectTensor((*got)[1], DType::kFloat32, {0, 1}, {});
  // Empty normalized slices: mean 0 and rstd NaN, as ATen's RowwiseMoments.
  const Tensor rows = *Tensor::Empty(DType::kFloat64, {2, 0});
  auto empty_rows = RunOp("aten.native_layer_norm.default",
                          {rows, OpArg({0}), none, none, 1e-5});
  ASSERT_TRUE(empty_rows.ok()) << empty_rows.status();
  ExpectTensor((*empty_rows)[0], DType::kFloat64, {2, 0}, {});
  ExpectTensor((*empty_rows)[1], DType::kFloat64, {2, 1}, {0.0, 0.0});
  ExpectTensor((*empty_rows)[2], DType::kFloat64, {2, 1}, {kNaN, kNaN});
}

TEST(NormalizationLayerNorm, Errors) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 14);
  const OpArg none = Arg::None();
  const auto run = [&](std::vector<OpArg> args) {
    return RunOp("aten.native_layer_norm.default", std::move(args)).status();
  };
  ExpectInvalid(
      run({x, OpArg({2}), none, none, 1e-5}), "normalized_shape",
      "Given normalized_shape=[2], expected input with shape [*, 2], but got "
      "input of size[2, 3]");
  ExpectInvalid(run({x, OpArg({4, 2, 3}), none, none, 1e-5}),
                "normalized_shape", "expected input with shape [*, 4, 2, 3]");
  ExpectInvalid(run({x, OpArg(std::vector<int64_t>{}), none, none, 1e-5}),
                "normalized_shape", "at least 1-dimensional");
  const Tensor w2 = RandomTensor(DType::kFloat32, {2}, 15);
  ExpectInvalid(
      run({x, OpArg({3}), w2, none, 1e-5}), "weight",
      "Expected weight to be of same shape as normalized_shape, but got weight "
      "of shape [2] and normalized_shape = [3]");
  ExpectInvalid(run({x, OpArg({3}), none, w2, 1e-5}), "bias",
                "Expected bias to be of same shape as normalized_shape");
  const Tensor w64 = RandomTensor(DType::kFloat64, {3}, 16);
  ExpectInvalid(run({x, OpArg({3}), w64, none, 1e-5}), "weight",
                "expected dtype float32");
  const Tensor h = RandomTensor(DType::kFloat16, {2, 3}, 17);
  const Tensor w32 = RandomTensor(DType::kFloat32, {3}, 18);
  const Tensor b16 = RandomTensor(DType::kFloat16, {3}, 19);
  ExpectInvalid(run({h, OpArg({3}), w32, b16, 1e-5}), "bias",
                "expected dtype float32");
  const Tensor ints = MakeTensor(DType::kInt64, {2}, {1, 2});
  ExpectInvalid(run({ints, OpArg({2}), none, none, 1e-5}), "input",
                "floating point");
  const Tensor scalar = MakeTensor(DType::kFloat32, {}, {1.0});
  ExpectInvalid(run({scalar, OpArg({1}), none, none, 1e-5}), "normalized_shape",
                "expected input with shape [*, 1]");
}

// ---------------------------------------------------------------------------
// Batch norm.

constexpr char kBatchNormEval[] =
    "aten._native_batch_norm_legit_no_training.default";

// (N=2, C=2, 2) input; per channel mean, var, weight, bias.
TEST(NormalizationBatchNorm, EvalUsesRunningStatsAndReturnsEmptyStats) {
  const Tensor x = MakeTensor(DType::kFloat64, {2, 2, 2},
                              {1, 2, 3, 4,  //
                               5, 6, 7, 8});
  const Tensor mean = MakeTensor(DType::kFloat64, {2}, {1, 2});
  const Tensor var = MakeTensor(DType::kFloat64, {2}, {4, 0.25});
  const Tensor weight = MakeTensor(DType::kFloat64, {2}, {2, 1});
  const Tensor bias = MakeTensor(DType::kFloat64, {2}, {0.5, -1});
  const double eps = 1e-5;
  auto out = RunOp(kBatchNormEval, {x, weight, bias, mean, var, 0.1, eps});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  std::vector<double> expected;
  const double in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const double m[2] = {1, 2}, v[2] = {4, 0.25}, w[2] = {2, 1}, b[2] = {0.5, -1};
  for (int i = 0; i < 8; ++i) {
    const int c = (i / 2) % 2;
    expected.push_back((in[i] - m[c]) / std::sqrt(v[c] + eps) * w[c] + b[c]);
  }
  ExpectTensor((*out)[0], DType::kFloat64, {2, 2, 2}, expected, 1e-12, 1e-12);
  ExpectTensor((*out)[1], DType::kFloat64, {0}, {});
  ExpectTensor((*out)[2], DType::kFloat64, {0}, {});
  // Without weight and bias; NaN and inf pass through.
  const Tensor y = MakeTensor(DType::kFloat32, {1, 2}, {kNaN, kInf});
  auto plain = RunOp(kBatchNormEval, {y, Arg(), Arg(), mean, var, 0.1, 0.0});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ExpectTensor((*plain)[0], DType::kFloat32, {1, 2}, {kNaN, kInf});
}

TEST(NormalizationBatchNorm, MixedFloat16InputWithFloat32Params) {
  const Tensor x = MakeTensor(DType::kFloat16, {1, 1, 2}, {2, 4});
  const Tensor one = MakeTensor(DType::kFloat32, {1}, {1});
  const Tensor zero = MakeTensor(DType::kFloat32, {1}, {0});
  auto out = RunOp(kBatchNormEval, {x, one, zero, zero, one, 0.1, 0.0});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat16, {1, 1, 2}, {2, 4});
  EXPECT_EQ((*out)[1].dtype(), DType::kFloat32);
}

TEST(NormalizationBatchNorm, TrainingNoStatsUsesBatchStatistics) {
  // Channel 0: {1, 3, 5, 7} (mean 4, biased var 5); channel 1: {2, 2, 2, 2}.
  const Tensor x = MakeTensor(DType::kFloat64, {2, 2, 2},
                              {1, 3, 2, 2,  //
                               5, 7, 2, 2});
  auto out = RunOp("aten._native_batch_norm_legit.no_stats",
                   {x, Arg(), Arg(), true, 0.1, 1e-5});
  ASSERT_TRUE(out.ok()) << out.status();
  const double s0 = 1 / std::sqrt(5 + 1e-5), s1 = 1 / std::sqrt(1e-5);
  ExpectTensor((*out)[0], DType::kFloat64, {2, 2, 2},
               {-3 * s0, -s0, 0, 0, s0, 3 * s0, 0, 0}, 1e-12, 1e-12);
  ExpectTensor((*out)[1], DType::kFloat64, {2}, {4, 2}, 1e-12, 1e-12);
  ExpectTensor((*out)[2], DType::kFloat64, {2}, {s0, s1}, 1e-9, 1e-9);
}

TEST(NormalizationBatchNorm, LegitEvalMatchesNoTrainingAndTrainingIsAnError) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 2}, {3, 5});
  const Tensor mean = MakeTensor(DType::kFloat32, {2}, {1, 1});
  const Tensor var = MakeTensor(DType::kFloat32, {2}, {1, 1});
  auto eval = RunOp("aten._native_batch_norm_legit.default",
                    {x, Arg(), Arg(), mean, var, false, 0.1, 0.0});
  ASSERT_TRUE(eval.ok()) << eval.status();
  ExpectTensor((*eval)[0], DType::kFloat32, {1, 2}, {2, 4});
  auto train = RunOp("aten._native_batch_norm_legit.default",
                     {x, Arg(), Arg(), mean, var, true, 0.1, 0.0});
  ASSERT_FALSE(train.ok());
  EXPECT_EQ(train.status().code(), absl::StatusCode::kUnimplemented)
      << train.status();
}

TEST(NormalizationBatchNorm, ShapeRules) {
  const Tensor x =
      MakeTensor(DType::kFloat32, {2, 3, 4}, std::vector<double>(24, 1.0));
  const Tensor c3 = MakeTensor(DType::kFloat32, {3}, {1, 1, 1});
  const Tensor c4 = MakeTensor(DType::kFloat32, {4}, {1, 1, 1, 1});
  auto wrong = RunOp(kBatchNormEval, {x, Arg(), Arg(), c4, c3, 0.1, 1e-5});
  ExpectInvalid(wrong.status(), "running_mean",
                "running_mean should contain 3 elements not 4");
  EXPECT_NE(wrong.status().message().find("node '"), std::string::npos);
  auto ints =
      RunOp(kBatchNormEval, {MakeTensor(DType::kInt64, {1, 3}, {1, 2, 3}),
                             Arg(), Arg(), c3, c3, 0.1, 1e-5});
  ExpectInvalid(ints.status(), "input", "floating point");
  auto one_dim = RunOp(kBatchNormEval, {c3, Arg(), Arg(), c3, c3, 0.1, 1e-5});
  ExpectInvalid(one_dim.status(), "input", "at least 2 dims");
  auto no_stats_eval = RunOp("aten._native_batch_norm_legit.no_stats",
                             {x, Arg(), Arg(), false, 0.1, 1e-5});
  ExpectInvalid(no_stats_eval.status(), "training", "evaluation mode");
  // Training shapes: save_mean and save_invstd are [C].
  auto train = RunOp("aten._native_batch_norm_legit.no_stats",
                     {x, c3, c3, true, 0.1, 1e-5});
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ((*train)[1].sizes(), (Shape{3}));
}

TEST(GroupNormTest, StatsPerGroupAndAffine) {
  // N=2, C=2, HxW=2, one group: x[0] = {0, 2, 4, 6}, x[1] = {1, 1, 1, 3}.
  Tensor x = MakeTensor(DType::kFloat32, {2, 2, 2}, {0, 2, 4, 6, 1, 1, 1, 3});
  Tensor w = MakeTensor(DType::kFloat32, {2}, {1, 2});
  Tensor b = MakeTensor(DType::kFloat32, {2}, {0, 1});
  auto out = RunOp("aten.native_group_norm.default",
                   {NonContiguousCopy(x), w, b, 2, 2, 2, 1, 0.0});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat32, {2, 2, 2},
               {-1.3416407, -0.4472135, 1.8944272, 3.6832814, -0.5773503,
                -0.5773503, -0.1547005, 4.4641018},
               1e-5, 1e-5);
  ExpectTensor((*out)[1], DType::kFloat32, {2, 1}, {3.0, 1.5});
  ExpectTensor((*out)[2], DType::kFloat32, {2, 1}, {0.4472136, 1.1547005}, 1e-6,
               1e-6);
  // Two groups of one channel each, no affine parameters; the constant
  // group {1, 1} has rstd inf with eps 0, so 0 * inf = NaN as in ATen.
  auto two = RunOp("aten.native_group_norm.default",
                   {x, Arg::None(), Arg::None(), 2, 2, 2, 2, 0.0});
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectTensor((*two)[0], DType::kFloat32, {2, 2, 2},
               {-1, 1, -1, 1, kNaN, kNaN, -1, 1}, 1e-6, 1e-6);
  ExpectTensor((*two)[1], DType::kFloat32, {2, 2}, {1, 5, 1, 2});
}

TEST(GroupNormTest, HalfStatsFollowTheParameters) {
  Tensor x = RandomTensor(DType::kFloat16, {2, 4, 3}, 7);
  auto plain = RunOp("aten.native_group_norm.default",
                     {x, Arg::None(), Arg::None(), 2, 4, 3, 2, 1e-5});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)[1].dtype(), DType::kFloat16);
  Tensor w = MakeTensor(DType::kFloat32, {4}, {1, 1, 1, 1});
  auto mixed = RunOp(
      "aten.native_group_norm.default",
      {x.AsStrided({2, 4, 3}, {12, 3, 1}), w, Arg::None(), 2, 4, 3, 2, 1e-5});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ((*mixed)[0].dtype(), DType::kFloat16);
  EXPECT_EQ((*mixed)[1].dtype(), DType::kFloat32);
  EXPECT_EQ((*mixed)[2].dtype(), DType::kFloat32);
}

TEST(GroupNormTest, Errors) {
  Tensor x = MakeTensor(DType::kFloat32, {2, 4, 3}, std::vector<double>(24));
  auto status = [&](std::vector<OpArg> args) {
    return RunOp("aten.native_group_norm.default", std::move(args)).status();
  };
  absl::Status s = status({x, Arg::None(), Arg::None(), 2, 4, 3, 3, 1e-5});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("argument 'group': Expected number of channels "
                             "in input to be divisible by num_groups"),
            std::string::npos)
      << s;
  s = status({x, MakeTensor(DType::kFloat32, {3}, {1, 1, 1}), Arg::None(), 2, 4,
              3, 2, 1e-5});
  EXPECT_NE(s.message().find("argument 'weight'"), std::string::npos) << s;
  s = status({x, Arg::None(), Arg::None(), 2, 4, 4, 2, 1e-5});
  EXPECT_NE(s.message().find("argument 'input'"), std::string::npos) << s;
}

}  // namespace
}  // namespace guardjit
