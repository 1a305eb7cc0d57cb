// Unary pointwise ops, run through the graph builder and the eager
// interpreter. Every op is checked against a double-precision formula from
// <cmath> over every dtype and layout, then against hand-picked edge values
// (ties, NaN, infinities, integer wraparound) and its dtype errors.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/tensor.h"
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using ::guardjit::testing::kAllDTypes;

// How an op maps its input dtype to its result dtype, and which inputs it
// rejects (as PyTorch does).
enum class Rule {
  kKeep,
  kKeepNonBool,
  kIntToFloat,
  kFloatOnly,
  kToBool,
  kIntegral
};

struct OpCase {
  std::string name;  // test name
  std::string target;
  Rule rule;
  std::function<double(double)> reference;
  std::vector<std::pair<std::string, OpArg>> kwargs = {};
  // For bool inputs when the op treats them apart from integers.
  std::function<double(double)> bool_reference = nullptr;
};

std::optional<DType> ExpectedDType(Rule rule, DType in) {
  switch (rule) {
    case Rule::kKeep:
      return in;
    case Rule::kKeepNonBool:
      if (in == DType::kBool) return std::nullopt;
      return in;
    case Rule::kIntToFloat:
      return IsFloating(in) ? in : DType::kFloat32;
    case Rule::kFloatOnly:
      if (!IsFloating(in)) return std::nullopt;
      return in;
    case Rule::kToBool:
      return DType::kBool;
    case Rule::kIntegral:
      if (IsFloating(in)) return std::nullopt;
      return in;
  }
  return std::nullopt;
}

// Tolerance of a result of `dtype` against the double reference rounded to
// `dtype`: a couple of units in the last place of the compute type.
std::pair<double, double> Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return {1e-12, 1e-12};
    case DType::kFloat32:
      return {1e-6, 1e-5};
    case DType::kFloat16:
      return {1e-3, 2e-3};
    case DType::kBFloat16:
      return {1e-2, 1.6e-2};
    default:
      return {0, 0};
  }
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<OpCase> AllOps() {
  auto sign = [](double x) { return static_cast<double>((x > 0) - (x < 0)); };
  return {
      {"abs", "aten.abs.default", Rule::kKeepNonBool,
       [](double x) { return std::fabs(x); }},
      {"neg", "aten.neg.default", Rule::kKeepNonBool,
       [](double x) { return -x; }},
      {"exp", "aten.exp.default", Rule::kIntToFloat,
       [](double x) { return std::exp(x); }},
      {"log", "aten.log.default", Rule::kIntToFloat,
       [](double x) { return std::log(x); }},
      {"log1p", "aten.log1p.default", Rule::kIntToFloat,
       [](double x) { return std::log1p(x); }},
      {"log2", "aten.log2.default", Rule::kIntToFloat,
       [](double x) { return std::log2(x); }},
      {"log10", "aten.log10.default", Rule::kIntToFloat,
       [](double x) { return std::log10(x); }},
      {"expm1", "aten.expm1.default", Rule::kIntToFloat,
       [](double x) { return std::expm1(x); }},
      {"tan", "aten.tan.default", Rule::kIntToFloat,
       [](double x) { return std::tan(x); }},
      {"asin", "aten.asin.default", Rule::kIntToFloat,
       [](double x) { return std::asin(x); }},
      {"acos", "aten.acos.default", Rule::kIntToFloat,
       [](double x) { return std::acos(x); }},
      {"atan", "aten.atan.default", Rule::kIntToFloat,
       [](double x) { return std::atan(x); }},
      {"sinh", "aten.sinh.default", Rule::kIntToFloat,
       [](double x) { return std::sinh(x); }},
      {"cosh", "aten.cosh.default", Rule::kIntToFloat,
       [](double x) { return std::cosh(x); }},
      {"asinh", "aten.asinh.default", Rule::kIntToFloat,
       [](double x) { return std::asinh(x); }},
      {"acosh", "aten.acosh.default", Rule::kIntToFloat,
       [](double x) { return std::acosh(x); }},
      {"atanh", "aten.atanh.default", Rule::kIntToFloat,
       [](double x) { return std::atanh(x); }},
      {"sqrt", "aten.sqrt.default", Rule::kIntToFloat,
       [](double x) { return std::sqrt(x); }},
      {"rsqrt", "aten.rsqrt.default", Rule::kIntToFloat,
       [](double x) { return std::pow(x, -0.5); }},
      {"sin", "aten.sin.default", Rule::kIntToFloat,
       [](double x) { return std::sin(x); }},
      {"cos", "aten.cos.default", Rule::kIntToFloat,
       [](double x) { return std::cos(x); }},
      {"tanh", "aten.tanh.default", Rule::kIntToFloat,
       [](double x) { return std::tanh(x); }},
      {"sigmoid", "aten.sigmoid.default", Rule::kIntToFloat, Sigmoid},
      {"erf", "aten.erf.default", Rule::kIntToFloat,
       [](double x) { return std::erf(x); }},
      {"reciprocal", "aten.reciprocal.default", Rule::kIntToFloat,
       [](double x) { return 1.0 / x; }},
      {"relu", "aten.relu.default", Rule::kKeepNonBool,
       [](double x) { return std::max(x, 0.0); }},
      {"gelu", "aten.gelu.default", Rule::kFloatOnly,
       [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }},
      {"gelu_none",
       "aten.gelu.default",
       Rule::kFloatOnly,
       [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); },
       {{"approximate", OpArg("none")}}},
      {"gelu_tanh",
       "aten.gelu.default",
       Rule::kFloatOnly,
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / M_PI) *
                               (x + 0.044715 * std::pow(x, 3))));
       },
       {{"approximate", OpArg("tanh")}}},
      {"silu", "aten.silu.default", Rule::kFloatOnly,
       [](double x) { return x * Sigmoid(x); }},
      {"floor", "aten.floor.default", Rule::kKeepNonBool,
       [](double x) { return std::floor(x); }},
      {"ceil", "aten.ceil.default", Rule::kKeepNonBool,
       [](double x) { return std::ceil(x); }},
      {"round", "aten.round.default", Rule::kKeepNonBool,
       [](double x) { return std::nearbyint(x); }},
      {"trunc", "aten.trunc.default", Rule::kKeepNonBool,
       [](double x) { return std::trunc(x); }},
      {"round_decimals_2",
       "aten.round.decimals",
       Rule::kFloatOnly,
       [](double x) { return std::nearbyint(x * 100) / 100; },
       {{"decimals", OpArg(2)}}},
      {"round_decimals_0",
       "aten.round.decimals",
       Rule::kFloatOnly,
       [](double x) { return std::nearbyint(x); },
       {{"decimals", OpArg(0)}}},
      {"sign", "aten.sign.default", Rule::kKeep, sign},
      {"logical_not", "aten.logical_not.default", Rule::kToBool,
       [](double x) { return x == 0 ? 1.0 : 0.0; }},
      {"isnan", "aten.isnan.default", Rule::kToBool,
       [](double x) { return std::isnan(x) ? 1.0 : 0.0; }},
      {"isinf", "aten.isinf.default", Rule::kToBool,
       [](double x) { return std::isinf(x) ? 1.0 : 0.0; }},
      // ~x of the integer (converting back to the dtype wraps it); not x on
      // bool.
      {"bitwise_not",
       "aten.bitwise_not.default",
       Rule::kIntegral,
       [](double x) { return static_cast<double>(~static_cast<int64_t>(x)); },
       {},
       [](double x) { return x == 0 ? 1.0 : 0.0; }},
  };
}

// Input layouts every op must handle; each returns a tensor of `dtype`.
struct Layout {
  const char* name;
  std::function<Tensor(DType, uint64_t)> make;
};

std::vector<Layout> AllLayouts() {
  return {
      {"contiguous",
       [](DType d, uint64_t seed) {
         return RandomTensor(d, {3, 5}, seed, -4, 4);
       }},
      {"non_contiguous",
       [](DType d, uint64_t seed) {
         return NonContiguousCopy(RandomTensor(d, {2, 3, 4}, seed, -4, 4));
       }},
      {"sliced_with_offset",
       [](DType d, uint64_t seed) {
         // Every other row and column of a 6x9 tensor, starting at [1, 1].
         Tensor base = RandomTensor(d, {6, 9}, seed, -4, 4);
         return base.AsStrided({3, 4}, {18, 2}, 10);
       }},
      {"zero_dim",
       [](DType d, uint64_t seed) { return RandomTensor(d, {}, seed, -4, 4); }},
      {"empty",
       [](DType d, uint64_t seed) {
         return RandomTensor(d, {0, 3}, seed);
       }},
  };
}

void PrintTo(const OpCase& op, std::ostream* os) { *os << op.name; }

class UnaryOpTest : public ::testing::TestWithParam<OpCase> {};

// The result of every supported (dtype, layout) pair matches the reference
// formula evaluated on the input's values and rounded to the result dtype;
// unsupported dtypes fail in shape inference naming 'self'.
TEST_P(UnaryOpTest, MatchesReferenceForEveryDTypeAndLayout) {
  const OpCase& op = GetParam();
  uint64_t seed = 1;
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    std::optional<DType> out_dtype = ExpectedDType(op.rule, dtype);
    if (!out_dtype.has_value()) {
      auto result =
          RunOp(op.target, {RandomTensor(dtype, {2, 2}, seed)}, op.kwargs);
      ASSERT_FALSE(result.ok());
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(result.status().message().find("argument 'self'"),
                std::string::npos)
          << result.status();
      EXPECT_NE(result.status().message().find(DTypeName(dtype)),
                std::string::npos)
          << result.status();
      continue;
    }
    for (const Layout& layout : AllLayouts()) {
      SCOPED_TRACE(layout.name);
      Tensor input = layout.make(dtype, seed++);
      Tensor out = RunOp1(op.target, {input}, op.kwargs);
      std::vector<double> expected;
      const auto& reference = dtype == DType::kBool && op.bool_reference
                                  ? op.bool_reference
                                  : op.reference;
      for (double x : ToDoubles(input)) expected.push_back(reference(x));
      // Rounding the reference to the result dtype applies PyTorch's
      // conversions (integer wraparound, half rounding, inf on overflow).
      Tensor rounded = MakeTensor(*out_dtype, input.sizes(), expected);
      auto [atol, rtol] = Tolerance(*out_dtype);
      ExpectTensor(out, *out_dtype, input.sizes(), ToDoubles(rounded), atol,
                   rtol);
      EXPECT_TRUE(out.is_contiguous());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Unary, UnaryOpTest, ::testing::ValuesIn(AllOps()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           return info.param.name;
                         });

// Values with exact expected results, per dtype.
void ExpectOp(const std::string& target, DType dtype,
              const std::vector<double>& input,
              const std::vector<double>& expected,
              std::vector<std::pair<std::string, OpArg>> kwargs = {},
              std::optional<DType> out_dtype = std::nullopt, double rtol = 0) {
  const int64_t n = static_cast<int64_t>(input.size());
  Tensor out =
      RunOp1(target, {MakeTensor(dtype, {n}, input)}, std::move(kwargs));
  ExpectTensor(out, out_dtype.value_or(dtype), {n}, expected, 0, rtol);
}

TEST(UnaryEdgeTest, RoundIsHalfToEven) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectOp("aten.round.default", dtype,
             {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.75},
             {-2, -2, -0.0, 0, 2, 2, 4, 1});
    ExpectOp("aten.round.decimals", dtype, {-2.5, 0.5, 1.5}, {-2, 0, 2},
             {{"decimals", OpArg(0)}});
  }
}

TEST(UnaryEdgeTest, RoundDecimalsScalesInTheComputeType) {
  // Ties at the scaled value go to even: 12.5 -> 12, 13.5 -> 14.
  ExpectOp("aten.round.decimals", DType::kFloat64, {1250, 1350, -149.9, 49.9},
           {1200, 1400, -100, 0}, {{"decimals", OpArg(-2)}});
  ExpectOp("aten.round.decimals", DType::kFloat64, {0.125, 0.375, -1.0625},
           {0.12, 0.38, -1.06}, {{"decimals", OpArg(2)}});
  // 2.675 is 2.67499999... in binary, but 2.675 * 100 rounds to exactly
  // 267.5 in both float64 and float32, a tie that goes to 268 (Python's
  // decimal-exact round() would give 2.67).
  Tensor f64 =
      RunOp1("aten.round.decimals", {MakeTensor(DType::kFloat64, {1}, {2.675})},
             {{"decimals", OpArg(2)}});
  EXPECT_EQ(ToDoubles(f64)[0], 2.68);
  Tensor f32 =
      RunOp1("aten.round.decimals", {MakeTensor(DType::kFloat32, {1}, {2.675})},
             {{"decimals", OpArg(2)}});
  EXPECT_EQ(ToDoubles(f32)[0], static_cast<double>(2.68f));
  ExpectOp("aten.round.decimals", DType::kFloat32, {kNaN, kInf, -kInf},
           {kNaN, kInf, -kInf}, {{"decimals", OpArg(3)}});
}

TEST(UnaryEdgeTest, RoundDecimalsOutOfRangeGivesNaN) {
  // 10^|decimals| overflows to inf: 1 * inf / inf and 1 / inf * inf are NaN.
  for (int64_t decimals : {std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max()}) {
    ExpectOp("aten.round.decimals", DType::kFloat32, {1, -3}, {kNaN, kNaN},
             {{"decimals", OpArg(decimals)}});
  }
}

TEST(UnaryEdgeTest, IntegerAbsAndNegWrapAround) {
  ExpectOp("aten.abs.default", DType::kInt8, {-128, -127, 5}, {-128, 127, 5});
  ExpectOp("aten.neg.default", DType::kInt8, {-128, 127, 0}, {-128, -127, 0});
  ExpectOp("aten.neg.default", DType::kUInt8, {1, 0, 255}, {255, 0, 1});
  ExpectOp("aten.abs.default", DType::kUInt8, {200, 0}, {200, 0});
  Tensor min64 = MakeTensor(DType::kInt64, {1}, {0});
  min64.data_as<int64_t>()[0] = std::numeric_limits<int64_t>::min();
  for (const char* target : {"aten.abs.default", "aten.neg.default"}) {
    Tensor out = RunOp1(target, {min64});
    ASSERT_EQ(out.dtype(), DType::kInt64);
    EXPECT_EQ(out.data_as<int64_t>()[0], std::numeric_limits<int64_t>::min())
        << target;
  }
  Tensor big = MakeTensor(DType::kInt64, {1}, {0});
  big.data_as<int64_t>()[0] = (int64_t{1} << 53) + 1;  // not exact in double
  Tensor neg = RunOp1("aten.neg.default", {big});
  EXPECT_EQ(neg.data_as<int64_t>()[0], -((int64_t{1} << 53) + 1));
}

TEST(UnaryEdgeTest, FloorCeilRoundAreIdentityOnIntegersAndCopy) {
  Tensor big = MakeTensor(DType::kInt64, {2}, {0, -7});
  big.data_as<int64_t>()[0] = (int64_t{1} << 60) + 1;
  for (const char* target :
       {"aten.floor.default", "aten.ceil.default", "aten.round.default"}) {
    SCOPED_TRACE(target);
    Tensor out = RunOp1(target, {big});
    ASSERT_EQ(out.dtype(), DType::kInt64);
    EXPECT_EQ(out.data_as<int64_t>()[0], (int64_t{1} << 60) + 1);
    EXPECT_EQ(out.data_as<int64_t>()[1], -7);
    EXPECT_NE(out.data(), big.data());
  }
}

TEST(UnaryEdgeTest, FloatSpecialValues) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectOp("aten.abs.default", dtype, {-0.0, -kInf, kNaN}, {0, kInf, kNaN});
    ExpectOp("aten.neg.default", dtype, {0, kInf, kNaN}, {-0.0, -kInf, kNaN});
    ExpectOp("aten.reciprocal.default", dtype, {0, -0.0, kInf, 4},
             {kInf, -kInf, 0, 0.25});
    ExpectOp("aten.log.default", dtype, {0, -1, kInf, 1},
             {-kInf, kNaN, kInf, 0});
    ExpectOp("aten.log1p.default", dtype, {-1, -2, 0}, {-kInf, kNaN, 0});
    ExpectOp("aten.sqrt.default", dtype, {-1, 0, kInf, 4}, {kNaN, 0, kInf, 2});
    ExpectOp("aten.rsqrt.default", dtype, {0, -1, kInf, 4},
             {kInf, kNaN, 0, 0.5});
    ExpectOp("aten.exp.default", dtype, {-kInf, kInf, 0, kNaN},
             {0, kInf, 1, kNaN});
    ExpectOp("aten.sigmoid.default", dtype, {-kInf, kInf, 0, -1000},
             {0, 1, 0.5, 0});
    ExpectOp("aten.tanh.default", dtype, {-kInf, kInf, 0}, {-1, 1, 0});
    ExpectOp("aten.erf.default", dtype, {-kInf, kInf, 0}, {-1, 1, 0});
    ExpectOp("aten.sin.default", dtype, {kInf, 0}, {kNaN, 0});
    ExpectOp("aten.silu.default", dtype, {kInf, 0, kNaN}, {kInf, 0, kNaN});
    ExpectOp("aten.gelu.default", dtype, {kInf, 0, -0.0}, {kInf, 0, 0});
    // PyTorch's relu is clamp_min(x, 0) = std::max(x, 0): NaN propagates.
    ExpectOp("aten.relu.default", dtype, {kNaN, -kInf, kInf, -1},
             {kNaN, 0, kInf, 0});
    // sign is (0 < x) - (x < 0): NaN gives 0.
    ExpectOp("aten.sign.default", dtype, {kNaN, -kInf, kInf, -0.0, 3},
             {0, -1, 1, 0, 1});
    ExpectOp("aten.floor.default", dtype, {-0.5, kInf, kNaN}, {-1, kInf, kNaN});
    ExpectOp("aten.ceil.default", dtype, {-0.5, -kInf, kNaN},
             {-0.0, -kInf, kNaN});
    ExpectOp("aten.isnan.default", dtype, {kNaN, kInf, -kInf, 0, -0.0, 1},
             {1, 0, 0, 0, 0, 0}, {}, DType::kBool);
    ExpectOp("aten.logical_not.default", dtype, {kNaN, 0, -0.0, kInf, 0.5},
             {0, 1, 1, 0, 0}, {}, DType::kBool);
  }
}

TEST(UnaryEdgeTest, InverseAndHyperbolicSpecialValues) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectOp("aten.expm1.default", dtype, {-kInf, kInf, 0, -0.0, kNaN},
             {-1, kInf, 0, -0.0, kNaN});
    ExpectOp("aten.log2.default", dtype, {0, -1, kInf, 8, 0.5},
             {-kInf, kNaN, kInf, 3, -1});
    ExpectOp("aten.log10.default", dtype, {0, -1, kInf, 100},
             {-kInf, kNaN, kInf, 2});
    ExpectOp("aten.tan.default", dtype, {0, -0.0, kInf, kNaN},
             {0, -0.0, kNaN, kNaN});
    ExpectOp("aten.asin.default", dtype, {1, -1, 2, 0},
             {M_PI_2, -M_PI_2, kNaN, 0}, {}, std::nullopt, /*rtol=*/1e-2);
    ExpectOp("aten.acos.default", dtype, {1, -2, kNaN}, {0, kNaN, kNaN});
    ExpectOp("aten.atan.default", dtype, {0, -0.0, kNaN}, {0, -0.0, kNaN});
    ExpectOp("aten.sinh.default", dtype, {-kInf, kInf, 0, 1000},
             {-kInf, kInf, 0, kInf});
    ExpectOp("aten.cosh.default", dtype, {-kInf, kInf, 0, kNaN},
             {kInf, kInf, 1, kNaN});
    ExpectOp("aten.asinh.default", dtype, {-kInf, kInf, 0}, {-kInf, kInf, 0});
    ExpectOp("aten.acosh.default", dtype, {1, 0, kInf}, {0, kNaN, kInf});
    ExpectOp("aten.atanh.default", dtype, {1, -1, 2, 0},
             {kInf, -kInf, kNaN, 0});
    ExpectOp("aten.trunc.default", dtype, {-0.5, 2.5, -2.5, kInf, kNaN},
             {-0.0, 2, -2, kInf, kNaN});
    ExpectOp("aten.isinf.default", dtype, {kNaN, kInf, -kInf, 0, 65504},
             {0, 1, 1, 0, 0}, {}, DType::kBool);
  }
}

TEST(UnaryEdgeTest, TruncIsIdentityOnIntegersAndIsinfFalse) {
  for (DType dtype : {DType::kInt32, DType::kInt64, DType::kUInt8}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectOp("aten.trunc.default", dtype, {0, 3, 100}, {0, 3, 100});
    ExpectOp("aten.isinf.default", dtype, {0, 3, 100}, {0, 0, 0}, {},
             DType::kBool);
  }
  // Integral inputs of the floating ops compute in float32.
  ExpectOp("aten.log2.default", DType::kInt64, {1, 4}, {0, 2}, {},
           DType::kFloat32);
}

TEST(UnaryEdgeTest, GeluKnownValues) {
  // Phi(1) and Phi(-1) times x, from tables of the normal distribution.
  ExpectTensor(
      RunOp1("aten.gelu.default", {MakeTensor(DType::kFloat64, {2}, {1, -1})}),
      DType::kFloat64, {2}, {0.8413447460685429, -0.15865525393145707}, 1e-15,
      1e-15);
  ExpectTensor(
      RunOp1("aten.gelu.default", {MakeTensor(DType::kFloat64, {2}, {1, -1})},
             {{"approximate", OpArg("tanh")}}),
      DType::kFloat64, {2}, {0.8411919906082768, -0.15880800939172324}, 1e-12,
      1e-12);
}

TEST(UnaryEdgeTest, IntegralOpsOnIntegers) {
  ExpectOp("aten.bitwise_not.default", DType::kInt8, {0, -1, 127},
           {-1, 0, -128});
  ExpectOp("aten.bitwise_not.default", DType::kUInt8, {0, 255, 5},
           {255, 0, 250});
  ExpectOp("aten.bitwise_not.default", DType::kBool, {0, 1}, {1, 0});
  ExpectOp("aten.sign.default", DType::kUInt8, {0, 7}, {0, 1});
  ExpectOp("aten.sign.default", DType::kInt32, {-9, 0, 9}, {-1, 0, 1});
  ExpectOp("aten.sign.default", DType::kBool, {0, 1}, {0, 1});
  ExpectOp("aten.relu.default", DType::kInt16, {-300, 0, 300}, {0, 0, 300});
  ExpectOp("aten.relu.default", DType::kUInt8, {0, 200}, {0, 200});
  ExpectOp("aten.isnan.default", DType::kInt32, {0, -1}, {0, 0}, {},
           DType::kBool);
  ExpectOp("aten.logical_not.default", DType::kInt64, {0, -3}, {1, 0}, {},
           DType::kBool);
  ExpectOp("aten.logical_not.default", DType::kBool, {0, 1}, {1, 0}, {},
           DType::kBool);
}

TEST(UnaryEdgeTest, IntegralInputsOfFloatingOpsComputeInFloat32) {
  ExpectOp("aten.reciprocal.default", DType::kInt32, {0, 2, -4},
           {kInf, 0.5, -0.25}, {}, DType::kFloat32);
  ExpectOp("aten.sqrt.default", DType::kInt64, {-1, 16}, {kNaN, 4}, {},
           DType::kFloat32);
  ExpectOp("aten.exp.default", DType::kBool, {0, 1},
           {1, static_cast<double>(std::exp(1.0f))}, {}, DType::kFloat32);
  ExpectOp("aten.sigmoid.default", DType::kUInt8, {0}, {0.5}, {},
           DType::kFloat32);
}

TEST(UnaryEdgeTest, WrappedNumberLiterals) {
  // An int literal computes like an int64 0-dim tensor; a float literal like
  // a float32 one (the default dtype), as torch.exp(torch.tensor(2)) would.
  ExpectTensor(RunOp1("aten.exp.default", {OpArg(2)}), DType::kFloat32, {},
               {std::exp(2.0)}, 1e-6, 1e-6);
  ExpectTensor(RunOp1("aten.abs.default", {OpArg(-2.5)}), DType::kFloat32, {},
               {2.5});
  ExpectTensor(RunOp1("aten.neg.default", {OpArg(3)}), DType::kInt64, {}, {-3});
  ExpectTensor(RunOp1("aten.isnan.default", {OpArg(1.5)}), DType::kBool, {},
               {0});
  ExpectTensor(RunOp1("aten.bitwise_not.default", {OpArg(true)}), DType::kBool,
               {}, {0});
}

TEST(UnaryEdgeTest, GeluApproximateDefaultsToNone) {
  Tensor x = RandomTensor(DType::kFloat32, {17}, 7);
  std::vector<double> a = ToDoubles(RunOp1("aten.gelu.default", {x}));
  std::vector<double> b = ToDoubles(
      RunOp1("aten.gelu.default", {x}, {{"approximate", OpArg("none")}}));
  EXPECT_EQ(a, b);
}

void ExpectInvalid(const absl::StatusOr<std::vector<Tensor>>& result,
                   const std::vector<std::string>& fragments) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
      << result.status();
  for (const std::string& f : fragments) {
    EXPECT_NE(result.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << result.status();
  }
}

TEST(UnaryErrorTest, GeluRejectsUnknownApproximation) {
  ExpectInvalid(
      RunOp("aten.gelu.default", {RandomTensor(DType::kFloat32, {2}, 1)},
            {{"approximate", OpArg("erf")}}),
      {"argument 'approximate'", "'erf'", "'none'", "'tanh'"});
}

TEST(UnaryErrorTest, DTypeErrorsNameTheArgumentAndTheOp) {
  Tensor b = MakeTensor(DType::kBool, {2}, {0, 1});
  Tensor i = MakeTensor(DType::kInt64, {2}, {0, 1});
  Tensor f = MakeTensor(DType::kFloat32, {2}, {0, 1});
  ExpectInvalid(RunOp("aten.neg.default", {b}),
                {"argument 'self'", "neg", "bool", "logical_not"});
  ExpectInvalid(RunOp("aten.abs.default", {b}),
                {"argument 'self'", "abs", "bool"});
  ExpectInvalid(RunOp("aten.relu.default", {b}),
                {"argument 'self'", "relu", "bool"});
  ExpectInvalid(RunOp("aten.floor.default", {b}),
                {"argument 'self'", "floor", "bool"});
  ExpectInvalid(RunOp("aten.gelu.default", {i}),
                {"argument 'self'", "gelu", "floating", "int64"});
  ExpectInvalid(RunOp("aten.silu.default", {b}),
                {"argument 'self'", "silu", "bool"});
  ExpectInvalid(RunOp("aten.round.decimals", {i}, {{"decimals", OpArg(1)}}),
                {"argument 'self'", "round.decimals", "int64"});
  ExpectInvalid(RunOp("aten.bitwise_not.default", {f}),
                {"argument 'self'", "bitwise_not", "float32"});
}

TEST(UnaryErrorTest, RoundDecimalsRequiresDecimals) {
  ExpectInvalid(
      RunOp("aten.round.decimals", {RandomTensor(DType::kFloat32, {2}, 1)}),
      {"decimals"});
}

}  // namespace
}  // namespace guardjit
