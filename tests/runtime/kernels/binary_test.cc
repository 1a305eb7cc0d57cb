// Tests of the binary arithmetic kernels (runtime/kernels/binary.cc) and
// their shape/dtype rules (core/ops/binary.cc), run through RunOp so that
// schema binding and shape inference are exercised too.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/half.h"
#include "gtest/gtest.h"
#include "tests/runtime/kernels/binary_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectTensor;
using testing::kAllDTypes;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::RandomTensor;
using testing::RoundingRtol;
using testing::RunOp;
using testing::RunOp1;
using testing::ToDoubles;
using testing::binary::BroadcastApply;
using testing::binary::ExpectInvalid;
using testing::binary::None;
using testing::binary::SlicedCopy;
using testing::binary::StoredAs;
using testing::binary::Zip;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

double PythonMod(double x, double y) {
  double r = std::fmod(x, y);
  if (r != 0 && (r < 0) != (y < 0)) r += y;
  return r;
}

// Divisors without zeros (and without negatives for uint8).
Tensor Divisors(DType dtype, IntSpan sizes) {
  std::vector<double> v = {1, 2, 3, -1, -2, -3, 4, -4};
  if (dtype == DType::kUInt8) v = {1, 2, 3, 1, 2, 3, 4, 5};
  std::vector<double> values;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  for (int64_t i = 0; i < n; ++i) values.push_back(v[i % v.size()]);
  return MakeTensor(dtype, sizes, values);
}

// ---------------------------------------------------------------- add, sub

TEST(BinaryAddTest, Float32Values) {
  Tensor a = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = MakeTensor(DType::kFloat32, {2, 3}, {0.5, -1, 2, -4, 10, 0.25});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}), DType::kFloat32, {2, 3},
               {1.5, 1, 5, 0, 15, 6.25});
  ExpectTensor(RunOp1("aten.sub.Tensor", {a, b}), DType::kFloat32, {2, 3},
               {0.5, 3, 1, 8, -5, 5.75});
}

TEST(BinaryAddTest, BroadcastsHandComputed) {
  Tensor col = MakeTensor(DType::kFloat32, {2, 1}, {10, 20});
  Tensor row = MakeTensor(DType::kFloat32, {3}, {1, 2, 3});
  ExpectTensor(RunOp1("aten.add.Tensor", {col, row}), DType::kFloat32, {2, 3},
               {11, 12, 13, 21, 22, 23});
  ExpectTensor(RunOp1("aten.sub.Tensor", {row, col}), DType::kFloat32, {2, 3},
               {-9, -8, -7, -19, -18, -17});
}

TEST(BinaryAddTest, AlphaScalesOther) {
  Tensor a = MakeTensor(DType::kFloat32, {3}, {1, 2, 3});
  Tensor b = MakeTensor(DType::kFloat32, {3}, {1, 10, 100});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}, {{"alpha", 2}}),
               DType::kFloat32, {3}, {3, 22, 203});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}, {{"alpha", 0.5}}),
               DType::kFloat32, {3}, {1.5, 7, 53});
  ExpectTensor(RunOp1("aten.sub.Tensor", {a, b}, {{"alpha", 3}}),
               DType::kFloat32, {3}, {-2, -28, -297});
  Tensor i = MakeTensor(DType::kInt32, {3}, {1, 2, 3});
  // add.Scalar takes alpha positionally: self + alpha * other.
  ExpectTensor(RunOp1("aten.add.Scalar", {i, 4, 3}), DType::kInt32, {3},
               {13, 14, 15});
  ExpectTensor(RunOp1("aten.sub.Scalar", {i, 4, -2}), DType::kInt32, {3},
               {9, 10, 11});
}

TEST(BinaryAddTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {3, 4}, 1, -4, 4);
    Tensor b = RandomTensor(dtype, {3, 4}, 2, -4, 4);
    ExpectTensor(
        RunOp1("aten.add.Tensor", {a, b}), dtype, {3, 4},
        Zip(a, b, [&](double x, double y) { return StoredAs(dtype, x + y); }),
        0, RoundingRtol(dtype));
    if (dtype == DType::kBool) continue;
    ExpectTensor(
        RunOp1("aten.add.Tensor", {a, b}, {{"alpha", 3}}), dtype, {3, 4},
        Zip(a, b,
            [&](double x, double y) { return StoredAs(dtype, x + 3 * y); }),
        0, RoundingRtol(dtype));
    ExpectTensor(
        RunOp1("aten.sub.Tensor", {a, b}), dtype, {3, 4},
        Zip(a, b, [&](double x, double y) { return StoredAs(dtype, x - y); }),
        0, RoundingRtol(dtype));
    ExpectTensor(
        RunOp1("aten.sub.Scalar", {a, 2}), dtype, {3, 4},
        Zip(a, a, [&](double x, double) { return StoredAs(dtype, x - 2); }), 0,
        RoundingRtol(dtype));
  }
}

TEST(BinaryAddTest, BoolAddIsLogicalOr) {
  Tensor a = MakeTensor(DType::kBool, {4}, {0, 0, 1, 1});
  Tensor b = MakeTensor(DType::kBool, {4}, {0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}), DType::kBool, {4},
               {0, 1, 1, 1});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}, {{"alpha", false}}),
               DType::kBool, {4}, {0, 0, 1, 1});
}

TEST(BinaryAddTest, TypePromotion) {
  struct Case {
    Tensor a;
    testing::OpArg b;
    DType expected;
    std::vector<double> values;
  };
  auto t = [](DType d, std::vector<double> v) {
    return MakeTensor(d, {static_cast<int64_t>(v.size())}, v);
  };
  auto zero_dim = [](DType d, double v) { return MakeTensor(d, {}, {v}); };
  const Case cases[] = {
      {t(DType::kInt32, {1, 2}),
       t(DType::kFloat32, {0.5, 0.5}),
       DType::kFloat32,
       {1.5, 2.5}},
      {t(DType::kUInt8, {200, 3}),
       t(DType::kInt8, {-100, 5}),
       DType::kInt16,
       {100, 8}},
      {t(DType::kBool, {1, 0}),
       t(DType::kInt64, {5, 6}),
       DType::kInt64,
       {6, 6}},
      {t(DType::kBFloat16, {1, 2}),
       t(DType::kFloat16, {1, 2}),
       DType::kFloat32,
       {2, 4}},
      // Wrapped numbers only decide the category.
      {t(DType::kInt32, {1, 2}), 2, DType::kInt32, {3, 4}},
      {t(DType::kInt8, {1, 2}), 2.5, DType::kFloat32, {3.5, 4.5}},
      {t(DType::kInt64, {1, 2}), true, DType::kInt64, {2, 3}},
      {t(DType::kBool, {1, 0}), 2, DType::kInt64, {3, 2}},
      {t(DType::kBool, {1, 0}), 2.5, DType::kFloat32, {3.5, 2.5}},
      {t(DType::kFloat16, {1, 2}), 2.5, DType::kFloat16, {3.5, 4.5}},
      // 0-dim tensors rank below dimensioned ones, above wrapped numbers.
      {t(DType::kFloat16, {1, 2}),
       zero_dim(DType::kFloat32, 1),
       DType::kFloat16,
       {2, 3}},
      {t(DType::kInt8, {1, 2}),
       zero_dim(DType::kInt64, 1),
       DType::kInt8,
       {2, 3}},
      {t(DType::kInt64, {1, 2}),
       zero_dim(DType::kFloat64, 0.5),
       DType::kFloat64,
       {1.5, 2.5}},
      {t(DType::kUInt8, {1, 2}),
       zero_dim(DType::kInt8, -1),
       DType::kUInt8,
       {0, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.a.DebugString());
    Tensor out = RunOp1("aten.add.Tensor", {c.a, c.b});
    ExpectTensor(out, c.expected, {2}, c.values, 0, 1e-3);
  }
  Tensor i8 = MakeTensor(DType::kInt8, {}, {3});
  Tensor i16 = MakeTensor(DType::kInt16, {}, {4});
  ExpectTensor(RunOp1("aten.add.Tensor", {i8, i16}), DType::kInt16, {}, {7});
  ExpectTensor(RunOp1("aten.add.Tensor", {i8, 2.0}), DType::kFloat32, {}, {5});
}

TEST(BinaryAddTest, IntegerOverflowWraps) {
  Tensor a = MakeTensor(DType::kInt8, {2}, {127, -128});
  Tensor b = MakeTensor(DType::kInt8, {2}, {1, 1});
  ExpectTensor(RunOp1("aten.add.Tensor", {a, b}), DType::kInt8, {2},
               {-128, -127});
  ExpectTensor(RunOp1("aten.sub.Tensor", {a, b}), DType::kInt8, {2},
               {126, 127});
  ExpectTensor(
      RunOp1("aten.sub.Scalar", {MakeTensor(DType::kUInt8, {1}, {3}), 5}),
      DType::kUInt8, {1}, {254});

  int64_t big[2] = {std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()};
  Tensor i64 = Tensor::Borrow(big, DType::kInt64, {2}, {1});
  Tensor sum = RunOp1("aten.add.Tensor", {i64, 1});
  EXPECT_EQ(sum.data_as<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sum.data_as<int64_t>()[1], std::numeric_limits<int64_t>::min() + 1);
  Tensor diff = RunOp1("aten.sub.Tensor", {i64, 1}, {{"alpha", 2}});
  EXPECT_EQ(diff.data_as<int64_t>()[1],
            std::numeric_limits<int64_t>::max() - 1);
}

TEST(BinaryAddTest, NonContiguousAndOffsetInputs) {
  for (DType dtype : {DType::kFloat32, DType::kInt16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {3, 4}, 3, -4, 4);
    Tensor b = RandomTensor(dtype, {3, 4}, 4, -4, 4);
    std::vector<double> expected = Zip(
        a, b, [&](double x, double y) { return StoredAs(dtype, x + 2 * y); });
    ExpectTensor(RunOp1("aten.add.Tensor",
                        {NonContiguousCopy(a), SlicedCopy(b)}, {{"alpha", 2}}),
                 dtype, {3, 4}, expected, 0, RoundingRtol(dtype));
    ExpectTensor(RunOp1("aten.add.Tensor",
                        {SlicedCopy(a), NonContiguousCopy(b)}, {{"alpha", 2}}),
                 dtype, {3, 4}, expected, 0, RoundingRtol(dtype));
  }
}

TEST(BinaryAddTest, EmptyAndZeroDim) {
  Tensor empty = RandomTensor(DType::kFloat32, {0, 3}, 5);
  Tensor row = RandomTensor(DType::kFloat32, {3}, 6);
  ExpectTensor(RunOp1("aten.add.Tensor", {empty, row}), DType::kFloat32, {0, 3},
               {});
  ExpectTensor(RunOp1("aten.sub.Scalar", {empty, 1}), DType::kFloat32, {0, 3},
               {});
  ExpectTensor(
      RunOp1("aten.add.Tensor", {RandomTensor(DType::kInt32, {2, 0}, 7),
                                 MakeTensor(DType::kInt64, {1}, {1})}),
      DType::kInt64, {2, 0}, {});
  ExpectTensor(
      RunOp1("aten.add.Tensor", {MakeTensor(DType::kFloat64, {}, {1.5}),
                                 MakeTensor(DType::kFloat64, {}, {2})}),
      DType::kFloat64, {}, {3.5});
}

TEST(BinaryAddTest, Errors) {
  Tensor f = RandomTensor(DType::kFloat32, {2, 3}, 8);
  Tensor i = RandomTensor(DType::kInt32, {2, 3}, 9);
  Tensor mask = RandomTensor(DType::kBool, {2, 3}, 10);
  ExpectInvalid(
      RunOp("aten.add.Tensor", {f, RandomTensor(DType::kFloat32, {4}, 11)}),
      {"argument 'other'", "not broadcastable"});
  ExpectInvalid(RunOp("aten.add.Tensor", {i, i}, {{"alpha", 2.5}}),
                {"argument 'alpha'", "floating point"});
  ExpectInvalid(RunOp("aten.add.Tensor", {f, f}, {{"alpha", true}}),
                {"argument 'alpha'", "bool"});
  ExpectInvalid(RunOp("aten.add.Tensor",
                      {RandomTensor(DType::kInt8, {2}, 12),
                       RandomTensor(DType::kInt8, {2}, 13)},
                      {{"alpha", 300}}),
                {"argument 'alpha'", "overflow"});
  ExpectInvalid(RunOp("aten.sub.Tensor", {mask, i}),
                {"argument 'self'", "bool"});
  ExpectInvalid(RunOp("aten.sub.Tensor", {f, mask}),
                {"argument 'other'", "bool"});
  ExpectInvalid(RunOp("aten.sub.Scalar", {f, true}),
                {"argument 'other'", "bool"});
  ExpectInvalid(RunOp("aten.sub.Tensor", {mask, mask}), {"argument 'self'"});
}

// --------------------------------------------------------------------- mul

TEST(BinaryMulTest, ValuesAndBroadcast) {
  Tensor col = MakeTensor(DType::kFloat32, {2, 1}, {2, -3});
  Tensor row = MakeTensor(DType::kFloat32, {3}, {1, 0.5, -4});
  ExpectTensor(RunOp1("aten.mul.Tensor", {col, row}), DType::kFloat32, {2, 3},
               {2, 1, -8, -3, -1.5, 12});
  ExpectTensor(RunOp1("aten.mul.Scalar", {row, 2}), DType::kFloat32, {3},
               {2, 1, -8});
  Tensor ints = MakeTensor(DType::kInt64, {3}, {1, -2, 3});
  ExpectTensor(RunOp1("aten.mul.Scalar", {ints, 1.5}), DType::kFloat32, {3},
               {1.5, -3, 4.5});
  Tensor a = MakeTensor(DType::kBool, {4}, {0, 0, 1, 1});
  Tensor b = MakeTensor(DType::kBool, {4}, {0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.mul.Tensor", {a, b}), DType::kBool, {4},
               {0, 0, 0, 1});
}

TEST(BinaryMulTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {2, 5}, 20, -4, 4);
    Tensor b = RandomTensor(dtype, {2, 5}, 21, -4, 4);
    ExpectTensor(
        RunOp1("aten.mul.Tensor", {a, b}), dtype, {2, 5},
        Zip(a, b, [&](double x, double y) { return StoredAs(dtype, x * y); }),
        0, RoundingRtol(dtype));
  }
}

TEST(BinaryMulTest, IntegerOverflowWraps) {
  Tensor a = MakeTensor(DType::kInt32, {3}, {65536, 46341, -2147483648.0});
  Tensor b = MakeTensor(DType::kInt32, {3}, {65536, 46341, -1});
  ExpectTensor(RunOp1("aten.mul.Tensor", {a, b}), DType::kInt32, {3},
               {0, 2147488281.0 - 4294967296.0, -2147483648.0});
  Tensor c = MakeTensor(DType::kInt16, {1}, {300});
  ExpectTensor(RunOp1("aten.mul.Tensor", {c, c}), DType::kInt16, {1},
               {90000 - 65536});
}

// PyTorch's CPU mul/div round a Python number to float, not to the Half or
// BFloat16 computation type, before applying it.
TEST(BinaryMulTest, ReducedFloatUsesUnroundedScalar) {
  std::vector<double> xs;
  for (int i = 1; i <= 64; ++i) xs.push_back(1 + i * 0.7);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {64}, xs);
    auto round = [&](float v) {
      return dtype == DType::kFloat16
                 ? static_cast<double>(static_cast<float>(Half(v)))
                 : static_cast<double>(static_cast<float>(BFloat16(v)));
    };
    const float rounded_scalar = static_cast<float>(round(0.1f));
    std::vector<double> mul, div;
    int differs = 0;
    for (double v : ToDoubles(x)) {
      mul.push_back(round(static_cast<float>(v) * 0.1f));
      div.push_back(round(static_cast<float>(v) / 0.1f));
      differs += mul.back() != round(static_cast<float>(v) * rounded_scalar);
    }
    EXPECT_GT(differs, 0)
        << "the test values do not tell the two roundings apart";
    ExpectTensor(RunOp1("aten.mul.Scalar", {x, 0.1}), dtype, {64}, mul, 0, 0);
    ExpectTensor(RunOp1("aten.div.Scalar", {x, 0.1}), dtype, {64}, div, 0, 0);
    ExpectTensor(
        RunOp1("aten.mul.Tensor", {x, MakeTensor(DType::kFloat64, {}, {0.1})}),
        dtype, {64}, mul, 0, 0);
  }
}

// --------------------------------------------------------------------- div

TEST(BinaryDivTest, TrueDivision) {
  Tensor a = MakeTensor(DType::kFloat32, {5}, {7, -7, 1, -1, 0});
  Tensor b = MakeTensor(DType::kFloat32, {5}, {2, 2, 0, 0, 0});
  ExpectTensor(RunOp1("aten.div.Tensor", {a, b}), DType::kFloat32, {5},
               {3.5, -3.5, kInf, -kInf, kNaN});
  // Integer and bool inputs divide in the default float type; no error on 0.
  Tensor ia = MakeTensor(DType::kInt64, {3}, {7, -7, 1});
  Tensor ib = MakeTensor(DType::kInt64, {3}, {2, 2, 0});
  ExpectTensor(RunOp1("aten.div.Tensor", {ia, ib}), DType::kFloat32, {3},
               {3.5, -3.5, kInf});
  ExpectTensor(RunOp1("aten.div.Scalar", {ia, 4}), DType::kFloat32, {3},
               {1.75, -1.75, 0.25});
  ExpectTensor(
      RunOp1("aten.div.Tensor_mode", {ia, ib}, {{"rounding_mode", None()}}),
      DType::kFloat32, {3}, {3.5, -3.5, kInf});
  Tensor mask = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.div.Tensor", {mask, mask}), DType::kFloat32, {2},
               {1, kNaN});
  ExpectTensor(
      RunOp1("aten.div.Tensor", {ia, MakeTensor(DType::kFloat64, {}, {2})}),
      DType::kFloat64, {3}, {3.5, -3.5, 0.5});
}

TEST(BinaryAtan2Test, QuadrantsSignedZerosAndPromotion) {
  Tensor y = MakeTensor(DType::kFloat64, {6}, {1, 1, -1, 0, -0.0, kNaN});
  Tensor x = MakeTensor(DType::kFloat64, {6}, {1, -1, -1, -1, -1, 1});
  ExpectTensor(RunOp1("aten.atan2.default", {y, x}), DType::kFloat64, {6},
               {M_PI / 4, 3 * M_PI / 4, -3 * M_PI / 4, M_PI, -M_PI, kNaN});
  // Integers promote to float32; broadcasting as any binary op.
  Tensor iy = MakeTensor(DType::kInt64, {2, 1}, {1, -1});
  Tensor ix = MakeTensor(DType::kInt32, {2}, {0, 1});
  ExpectTensor(RunOp1("aten.atan2.default", {iy, ix}), DType::kFloat32, {2, 2},
               {M_PI_2, M_PI_4, -M_PI_2, -M_PI_4});
  ExpectTensor(
      RunOp1("aten.atan2.default", {MakeTensor(DType::kFloat32, {1}, {kInf}),
                                    MakeTensor(DType::kFloat32, {1}, {kInf})}),
      DType::kFloat32, {1}, {M_PI_4});
}

TEST(BinaryDivTest, IntegerRoundingModes) {
  for (DType dtype :
       {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = MakeTensor(dtype, {6}, {7, -7, 7, -7, 6, 0});
    Tensor b = MakeTensor(dtype, {6}, {2, 2, -2, -2, 3, -5});
    ExpectTensor(
        RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "trunc"}}),
        dtype, {6}, {3, -3, -3, 3, 2, 0});
    ExpectTensor(
        RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "floor"}}),
        dtype, {6}, {3, -4, -4, 3, 2, 0});
    ExpectTensor(
        RunOp1("aten.div.Scalar_mode", {a, -2}, {{"rounding_mode", "floor"}}),
        dtype, {6}, {-4, 3, -4, 3, -3, 0});
  }
  Tensor u = MakeTensor(DType::kUInt8, {2}, {7, 200});
  ExpectTensor(
      RunOp1("aten.div.Scalar_mode", {u, 3}, {{"rounding_mode", "floor"}}),
      DType::kUInt8, {2}, {2, 66});
}

TEST(BinaryDivTest, MinDividedByMinusOneWraps) {
  ExpectTensor(RunOp1("aten.div.Scalar_mode",
                      {MakeTensor(DType::kInt8, {1}, {-128}), -1},
                      {{"rounding_mode", "trunc"}}),
               DType::kInt8, {1}, {-128});
  ExpectTensor(RunOp1("aten.div.Tensor_mode",
                      {MakeTensor(DType::kInt32, {1}, {-2147483648.0}),
                       MakeTensor(DType::kInt32, {1}, {-1})},
                      {{"rounding_mode", "floor"}}),
               DType::kInt32, {1}, {-2147483648.0});
  int64_t min = std::numeric_limits<int64_t>::min();
  Tensor t = Tensor::Borrow(&min, DType::kInt64, {1}, {1});
  for (const char* mode : {"trunc", "floor"}) {
    Tensor q =
        RunOp1("aten.div.Scalar_mode", {t, -1}, {{"rounding_mode", mode}});
    EXPECT_EQ(q.data_as<int64_t>()[0], min) << mode;
  }
}

TEST(BinaryDivTest, FloatRoundingModes) {
  Tensor a = MakeTensor(DType::kFloat64, {7}, {7.5, -7.5, 7.5, -7.5, 1, -1, 0});
  Tensor b = MakeTensor(DType::kFloat64, {7}, {2, 2, -2, -2, 0, 0, 0});
  ExpectTensor(
      RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "trunc"}}),
      DType::kFloat64, {7}, {3, -3, -3, 3, kInf, -kInf, kNaN});
  ExpectTensor(
      RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "floor"}}),
      DType::kFloat64, {7}, {3, -4, -4, 3, kInf, -kInf, kNaN});
  // Python's 0.0 // -1.0 is -0.0.
  Tensor z = RunOp1("aten.div.Scalar_mode",
                    {MakeTensor(DType::kFloat32, {1}, {0}), -1.0},
                    {{"rounding_mode", "floor"}});
  EXPECT_TRUE(std::signbit(z.data_as<float>()[0]));
  // Integer tensor by a float: promoted, then rounded.
  ExpectTensor(RunOp1("aten.div.Scalar_mode",
                      {MakeTensor(DType::kInt32, {2}, {7, -7}), 2.0},
                      {{"rounding_mode", "floor"}}),
               DType::kFloat32, {2}, {3, -4});
}

TEST(BinaryDivTest, EveryDTypeAndMode) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {2, 4}, 30, -8, 8);
    Tensor b = Divisors(dtype, {2, 4});
    DType true_dtype = IsFloating(dtype) ? dtype : DType::kFloat32;
    ExpectTensor(RunOp1("aten.div.Tensor", {a, b}), true_dtype, {2, 4},
                 Zip(a, b, [](double x, double y) { return x / y; }), 0,
                 RoundingRtol(true_dtype));
    ExpectTensor(
        RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "trunc"}}),
        dtype, {2, 4},
        Zip(a, b, [](double x, double y) { return std::trunc(x / y); }), 0,
        RoundingRtol(dtype));
    ExpectTensor(
        RunOp1("aten.div.Tensor_mode", {a, b}, {{"rounding_mode", "floor"}}),
        dtype, {2, 4},
        Zip(a, b, [](double x, double y) { return std::floor(x / y); }), 0,
        RoundingRtol(dtype));
  }
}

TEST(BinaryDivTest, Errors) {
  Tensor i = MakeTensor(DType::kInt32, {3}, {1, 2, 3});
  Tensor zeros = MakeTensor(DType::kInt32, {3}, {1, 0, 1});
  for (const char* mode : {"trunc", "floor"}) {
    ExpectInvalid(
        RunOp("aten.div.Tensor_mode", {i, zeros}, {{"rounding_mode", mode}}),
        {"argument 'other'", "ZeroDivisionError"});
    ExpectInvalid(
        RunOp("aten.div.Scalar_mode", {i, 0}, {{"rounding_mode", mode}}),
        {"argument 'other'", "division by zero"});
    Tensor mask = MakeTensor(DType::kBool, {2}, {1, 1});
    ExpectInvalid(
        RunOp("aten.div.Tensor_mode", {mask, mask}, {{"rounding_mode", mode}}),
        {"argument 'rounding_mode'", "bool"});
  }
  ExpectInvalid(
      RunOp("aten.div.Tensor_mode", {i, i}, {{"rounding_mode", "round"}}),
      {"argument 'rounding_mode'", "'round'"});
  ExpectInvalid(
      RunOp("aten.div.Tensor", {i, RandomTensor(DType::kInt32, {2}, 31)}),
      {"argument 'other'", "not broadcastable"});
}

// --------------------------------------------------------------------- pow

TEST(BinaryPowTest, FloatValues) {
  Tensor base = MakeTensor(DType::kFloat32, {7}, {2, 3, -2, 0.5, kNaN, 0, -8});
  Tensor exp = MakeTensor(DType::kFloat32, {7}, {3, 0.5, 2, -1, 0, 0, 1.0 / 3});
  ExpectTensor(RunOp1("aten.pow.Tensor_Tensor", {base, exp}), DType::kFloat32,
               {7}, {8, std::sqrt(3.0), 4, 2, 1, 1, kNaN});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {base, 2}), DType::kFloat32,
               {7}, {4, 9, 4, 0.25, kNaN, 0, 64});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {base, -1}), DType::kFloat32,
               {7}, {0.5, 1.0 / 3, -0.5, 2, kNaN, kInf, -0.125});
  ExpectTensor(RunOp1("aten.pow.Scalar",
                      {2.0, MakeTensor(DType::kFloat64, {3}, {0, 0.5, -2})}),
               DType::kFloat64, {3}, {1, std::sqrt(2.0), 0.25});
}

// PyTorch computes x ** 0.5 and x ** -0.5 as sqrt and rsqrt (float32,
// float64, bfloat16), so -inf gives NaN where std::pow gives inf.
TEST(BinaryPowTest, HalfExponentsUseSqrt) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {4}, {-kInf, 4, 0, kInf});
    ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {x, 0.5}), dtype, {4},
                 {kNaN, 2, 0, kInf});
    ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {x, -0.5}), dtype, {4},
                 {kNaN, 0.5, kInf, 0});
    ExpectTensor(
        RunOp1("aten.pow.Tensor_Tensor", {x, MakeTensor(dtype, {1}, {0.5})}),
        dtype, {4}, {kInf, 2, 0, kInf});
  }
  Tensor neg_zero = RunOp1("aten.pow.Tensor_Scalar",
                           {MakeTensor(DType::kFloat32, {1}, {-0.0}), 0.5});
  EXPECT_TRUE(std::signbit(neg_zero.data_as<float>()[0]));
}

TEST(BinaryPowTest, IntegerValues) {
  Tensor base = MakeTensor(DType::kInt64, {8}, {2, 3, -2, 2, 1, -1, -1, 5});
  Tensor exp = MakeTensor(DType::kInt64, {8}, {10, 3, 3, -1, -5, -3, -2, 0});
  // Negative exponent tensors are allowed: 1/a^|b| truncated toward zero.
  ExpectTensor(RunOp1("aten.pow.Tensor_Tensor", {base, exp}), DType::kInt64,
               {8}, {1024, 27, -8, 0, 1, -1, 1, 1});
  ExpectTensor(RunOp1("aten.pow.Scalar",
                      {2, MakeTensor(DType::kInt32, {4}, {0, 1, 10, -1})}),
               DType::kInt32, {4}, {1, 2, 1024, 0});
  ExpectTensor(
      RunOp1("aten.pow.Scalar", {2.0, MakeTensor(DType::kInt32, {2}, {3, -1})}),
      DType::kFloat32, {2}, {8, 0.5});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt16, {3}, {-3, 0, 4}), 3}),
               DType::kInt16, {3}, {-27, 0, 64});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt32, {2}, {4, 2}), 0.5}),
               DType::kFloat32, {2}, {2, std::sqrt(2.0)});
}

TEST(BinaryPowTest, IntegerOverflowWraps) {
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt32, {1}, {3}), 21}),
               DType::kInt32, {1}, {StoredAs(DType::kInt32, 10460353203.0)});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt8, {2}, {2, -2}), 7}),
               DType::kInt8, {2}, {-128, -128});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kUInt8, {1}, {3}), 5}),
               DType::kUInt8, {1}, {243});
  Tensor big = RunOp1("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt64, {1}, {3}), 41});
  EXPECT_EQ(static_cast<uint64_t>(big.data_as<int64_t>()[0]), [] {
    uint64_t r = 1;
    for (int i = 0; i < 41; ++i) r *= 3;
    return r;
  }());
}

TEST(BinaryPowTest, BoolBase) {
  Tensor mask = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {mask, 2}), DType::kInt64, {2},
               {1, 0});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {mask, true}), DType::kBool,
               {2}, {1, 0});
  ExpectTensor(RunOp1("aten.pow.Tensor_Scalar", {mask, false}), DType::kBool,
               {2}, {1, 1});
  ExpectTensor(RunOp1("aten.pow.Tensor_Tensor",
                      {mask, MakeTensor(DType::kInt8, {2}, {3, 3})}),
               DType::kInt8, {2}, {1, 0});
}

TEST(BinaryPowTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor base = RandomTensor(dtype, {3, 3}, 40, -3, 3);
    Tensor exp = RandomTensor(dtype, {3, 3}, 41, 0, 4);
    ExpectTensor(RunOp1("aten.pow.Tensor_Tensor", {base, exp}), dtype, {3, 3},
                 Zip(base, exp,
                     [&](double x, double y) {
                       return StoredAs(dtype, std::pow(x, y));
                     }),
                 1e-6, 2 * RoundingRtol(dtype));
    ExpectTensor(
        RunOp1("aten.pow.Tensor_Scalar", {NonContiguousCopy(base), 3}), dtype,
        {3, 3},
        Zip(base, base,
            [&](double x, double) { return StoredAs(dtype, x * x * x); }),
        1e-6, 2 * RoundingRtol(dtype));
  }
}

TEST(BinaryPowTest, Errors) {
  Tensor i = MakeTensor(DType::kInt32, {2}, {2, 3});
  ExpectInvalid(RunOp("aten.pow.Tensor_Scalar", {i, -1}),
                {"argument 'exponent'", "negative integer powers"});
  ExpectInvalid(
      RunOp("aten.pow.Tensor_Scalar", {MakeTensor(DType::kBool, {1}, {1}), -2}),
      {"argument 'exponent'"});
  ExpectInvalid(RunOp("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kInt8, {1}, {1}), 300}),
                {"argument 'exponent'", "overflow"});
  ExpectInvalid(RunOp("aten.pow.Tensor_Scalar",
                      {MakeTensor(DType::kFloat16, {1}, {1}), 70000}),
                {"argument 'exponent'", "overflow"});
  Tensor mask = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectInvalid(RunOp("aten.pow.Tensor_Tensor", {mask, mask}),
                {"argument 'exponent'", "bool"});
  ExpectInvalid(RunOp("aten.pow.Scalar", {true, mask}),
                {"argument 'exponent'", "bool"});
  ExpectInvalid(RunOp("aten.pow.Tensor_Tensor",
                      {i, MakeTensor(DType::kInt32, {3}, {1, 2, 3})}),
                {"argument 'exponent'", "not broadcastable"});
}

// ------------------------------------------------------- maximum, minimum

TEST(BinaryMinMaxTest, ValuesAndNaN) {
  Tensor a = MakeTensor(DType::kFloat32, {5}, {1, kNaN, 3, -kInf, 2});
  Tensor b = MakeTensor(DType::kFloat32, {5}, {2, 1, kNaN, 0, 2});
  ExpectTensor(RunOp1("aten.maximum.default", {a, b}), DType::kFloat32, {5},
               {2, kNaN, kNaN, 0, 2});
  ExpectTensor(RunOp1("aten.minimum.default", {a, b}), DType::kFloat32, {5},
               {1, kNaN, kNaN, -kInf, 2});
  Tensor h = MakeTensor(DType::kFloat16, {2}, {kNaN, 1});
  ExpectTensor(RunOp1("aten.maximum.default", {h, 0.5}), DType::kFloat16, {2},
               {kNaN, 1});
  Tensor p = MakeTensor(DType::kBool, {4}, {0, 0, 1, 1});
  Tensor q = MakeTensor(DType::kBool, {4}, {0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.maximum.default", {p, q}), DType::kBool, {4},
               {0, 1, 1, 1});
  ExpectTensor(RunOp1("aten.minimum.default", {p, q}), DType::kBool, {4},
               {0, 0, 0, 1});
  // Promotion: uint8 200 vs int8 -1 compares in int16, not in uint8.
  Tensor u = MakeTensor(DType::kUInt8, {2}, {200, 0});
  Tensor s = MakeTensor(DType::kInt8, {2}, {-1, -1});
  ExpectTensor(RunOp1("aten.minimum.default", {u, s}), DType::kInt16, {2},
               {-1, -1});
  ExpectTensor(
      RunOp1("aten.maximum.default", {MakeTensor(DType::kInt32, {2}, {1, 5}),
                                      MakeTensor(DType::kFloat32, {1}, {2.5})}),
      DType::kFloat32, {2}, {2.5, 5});
}

TEST(BinaryMinMaxTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {4, 3}, 50, -4, 4);
    Tensor b = RandomTensor(dtype, {3}, 51, -4, 4);
    ExpectTensor(RunOp1("aten.maximum.default", {NonContiguousCopy(a), b}),
                 dtype, {4, 3}, BroadcastApply({a, b}, {4, 3}, [](auto v) {
                   return std::max(v[0], v[1]);
                 }));
    ExpectTensor(RunOp1("aten.minimum.default", {a, SlicedCopy(b)}), dtype,
                 {4, 3}, BroadcastApply({a, b}, {4, 3}, [](auto v) {
                   return std::min(v[0], v[1]);
                 }));
  }
}

// -------------------------------------------------------- remainder, fmod

TEST(BinaryModTest, SignConventions) {
  for (DType dtype : {DType::kInt8, DType::kInt32, DType::kInt64,
                      DType::kFloat32, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = MakeTensor(dtype, {6}, {7, -7, 7, -7, 6, 0});
    Tensor b = MakeTensor(dtype, {6}, {3, 3, -3, -3, 3, 5});
    ExpectTensor(RunOp1("aten.remainder.Tensor", {a, b}), dtype, {6},
                 {1, 2, -2, -1, 0, 0});
    ExpectTensor(RunOp1("aten.fmod.Tensor", {a, b}), dtype, {6},
                 {1, -1, 1, -1, 0, 0});
  }
  Tensor f = MakeTensor(DType::kFloat64, {5}, {7.5, -7.5, 7.5, -7.5, 1});
  Tensor g = MakeTensor(DType::kFloat64, {5}, {2, 2, -2, -2, 0});
  ExpectTensor(RunOp1("aten.remainder.Tensor", {f, g}), DType::kFloat64, {5},
               {1.5, 0.5, -0.5, -1.5, kNaN});
  ExpectTensor(RunOp1("aten.fmod.Tensor", {f, g}), DType::kFloat64, {5},
               {1.5, -1.5, 1.5, -1.5, kNaN});
  Tensor i = MakeTensor(DType::kInt32, {4}, {5, -4, 6, -5});
  ExpectTensor(RunOp1("aten.remainder.Scalar", {i, 2.5}), DType::kFloat32, {4},
               {0, 1, 1, 0});
  ExpectTensor(RunOp1("aten.fmod.Scalar", {i, -4}), DType::kInt32, {4},
               {1, 0, 2, -1});
  ExpectTensor(RunOp1("aten.remainder.Scalar", {i, -4}), DType::kInt32, {4},
               {-3, 0, -2, -1});
}

TEST(BinaryModTest, MinModMinusOneIsZero) {
  for (DType dtype : {DType::kInt8, DType::kInt32}) {
    double min = dtype == DType::kInt8 ? -128 : -2147483648.0;
    Tensor a = MakeTensor(dtype, {1}, {min});
    ExpectTensor(RunOp1("aten.remainder.Scalar", {a, -1}), dtype, {1}, {0});
    ExpectTensor(RunOp1("aten.fmod.Scalar", {a, -1}), dtype, {1}, {0});
  }
  int64_t min = std::numeric_limits<int64_t>::min();
  Tensor t = Tensor::Borrow(&min, DType::kInt64, {1}, {1});
  EXPECT_EQ(RunOp1("aten.remainder.Scalar", {t, -1}).data_as<int64_t>()[0], 0);
}

TEST(BinaryModTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {2, 4}, 60, -8, 8);
    Tensor b = Divisors(dtype, {2, 4});
    ExpectTensor(RunOp1("aten.remainder.Tensor", {a, NonContiguousCopy(b)}),
                 dtype, {2, 4}, Zip(a, b, PythonMod), 1e-6,
                 RoundingRtol(dtype));
    ExpectTensor(RunOp1("aten.fmod.Tensor", {SlicedCopy(a), b}), dtype, {2, 4},
                 Zip(a, b, [](double x, double y) { return std::fmod(x, y); }),
                 1e-6, RoundingRtol(dtype));
  }
}

TEST(BinaryModTest, Errors) {
  Tensor i = MakeTensor(DType::kInt64, {2}, {3, 4});
  Tensor z = MakeTensor(DType::kInt64, {2}, {1, 0});
  for (const char* op : {"aten.remainder.Tensor", "aten.fmod.Tensor"}) {
    ExpectInvalid(RunOp(op, {i, z}), {"argument 'other'", "ZeroDivisionError"});
    Tensor mask = MakeTensor(DType::kBool, {2}, {1, 1});
    ExpectInvalid(RunOp(op, {mask, mask}), {"argument 'self'", "bool"});
  }
  ExpectInvalid(RunOp("aten.fmod.Scalar", {i, 0}),
                {"argument 'other'", "modulo by zero"});
  ExpectInvalid(RunOp("aten.remainder.Scalar",
                      {MakeTensor(DType::kBool, {1}, {1}), true}),
                {"argument 'self'", "bool"});
}

// ----------------------------------------------- all arithmetic ops at once

struct ArithmeticCase {
  const char* target;
  std::function<double(double, double)> f;
};

const std::vector<ArithmeticCase>& ArithmeticCases() {
  static const auto* cases = new std::vector<ArithmeticCase>{
      {"aten.add.Tensor", [](double x, double y) { return x + y; }},
      {"aten.sub.Tensor", [](double x, double y) { return x - y; }},
      {"aten.mul.Tensor", [](double x, double y) { return x * y; }},
      {"aten.div.Tensor", [](double x, double y) { return x / y; }},
      {"aten.pow.Tensor_Tensor",
       [](double x, double y) { return std::pow(x, y); }},
      {"aten.maximum.default",
       [](double x, double y) { return std::max(x, y); }},
      {"aten.minimum.default",
       [](double x, double y) { return std::min(x, y); }},
      {"aten.remainder.Tensor", PythonMod},
      {"aten.fmod.Tensor", [](double x, double y) { return std::fmod(x, y); }},
  };
  return *cases;
}

TEST(BinaryArithmeticTest, BroadcastNonContiguousEmptyAndZeroDim) {
  for (const ArithmeticCase& c : ArithmeticCases()) {
    SCOPED_TRACE(c.target);
    auto f = [&](const std::vector<double>& v) { return c.f(v[0], v[1]); };
    Tensor a = RandomTensor(DType::kFloat64, {2, 1, 3}, 70, 0.5, 3);
    Tensor b = RandomTensor(DType::kFloat64, {4, 1}, 71, 0.5, 3);
    ExpectTensor(RunOp1(c.target, {a, b}), DType::kFloat64, {2, 4, 3},
                 BroadcastApply({a, b}, {2, 4, 3}, f), 1e-12, 1e-12);
    ExpectTensor(RunOp1(c.target, {NonContiguousCopy(b), SlicedCopy(a)}),
                 DType::kFloat64, {2, 4, 3},
                 BroadcastApply({b, a}, {2, 4, 3}, f), 1e-12, 1e-12);
    Tensor m = RandomTensor(DType::kFloat32, {3, 5}, 72, 0.5, 3);
    Tensor n = RandomTensor(DType::kFloat32, {3, 5}, 73, 0.5, 3);
    ExpectTensor(RunOp1(c.target, {SlicedCopy(m), NonContiguousCopy(n)}),
                 DType::kFloat32, {3, 5}, Zip(m, n, c.f), 1e-6, 1e-5);
    ExpectTensor(RunOp1(c.target, {RandomTensor(DType::kFloat32, {0, 3}, 74),
                                   RandomTensor(DType::kFloat32, {3}, 75)}),
                 DType::kFloat32, {0, 3}, {});
    ExpectTensor(
        RunOp1(c.target, {RandomTensor(DType::kFloat32, {2, 0}, 76), 2.0}),
        DType::kFloat32, {2, 0}, {});
    Tensor s = MakeTensor(DType::kFloat64, {}, {2.5});
    Tensor t = MakeTensor(DType::kFloat64, {}, {1.5});
    ExpectTensor(RunOp1(c.target, {s, t}), DType::kFloat64, {}, {c.f(2.5, 1.5)},
                 1e-12, 1e-12);
    ExpectInvalid(RunOp(c.target, {RandomTensor(DType::kFloat32, {2, 3}, 77),
                                   RandomTensor(DType::kFloat32, {2}, 78)}),
                  {"not broadcastable", "argument '"});
  }
}

}  // namespace
}  // namespace guardjit
