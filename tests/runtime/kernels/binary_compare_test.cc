// Tests of the comparison, logical, bitwise, where and clamp kernels
// (runtime/kernels/binary_compare.cc) and their shape/dtype rules
// (core/ops/binary.cc).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
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
using testing::binary::BroadcastApply;
using testing::binary::ExpectInvalid;
using testing::binary::None;
using testing::binary::SlicedCopy;
using testing::binary::Zip;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Comparison {
  const char* name;
  std::function<bool(double, double)> f;
};

const std::vector<Comparison>& Comparisons() {
  static const auto* ops = new std::vector<Comparison>{
      {"eq", std::equal_to<double>()}, {"ne", std::not_equal_to<double>()},
      {"lt", std::less<double>()},     {"le", std::less_equal<double>()},
      {"gt", std::greater<double>()},  {"ge", std::greater_equal<double>()},
  };
  return *ops;
}

std::string Target(const char* name, const char* overload) {
  return std::string("aten.") + name + "." + overload;
}

// ------------------------------------------------------------- comparisons

TEST(BinaryCompareTest, ValuesWithNaN) {
  Tensor a = MakeTensor(DType::kFloat32, {4}, {1, 2, 3, kNaN});
  Tensor b = MakeTensor(DType::kFloat32, {4}, {2, 2, 2, kNaN});
  const std::vector<std::vector<double>> expected = {
      {0, 1, 0, 0}, {1, 0, 1, 1}, {1, 0, 0, 0},
      {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}};
  for (size_t i = 0; i < Comparisons().size(); ++i) {
    const char* name = Comparisons()[i].name;
    SCOPED_TRACE(name);
    ExpectTensor(RunOp1(Target(name, "Tensor"), {a, b}), DType::kBool, {4},
                 expected[i]);
    ExpectTensor(RunOp1(Target(name, "Scalar"), {a, 2}), DType::kBool, {4},
                 expected[i]);
  }
}

TEST(BinaryCompareTest, ComparesInPromotedType) {
  // 2.5 is not truncated to the int tensor's type.
  Tensor i = MakeTensor(DType::kInt32, {2}, {2, 3});
  ExpectTensor(RunOp1("aten.lt.Scalar", {i, 2.5}), DType::kBool, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.eq.Scalar", {i, 2.0}), DType::kBool, {2}, {1, 0});
  // uint8 vs int8 compares in int16, so -1 does not become 255.
  Tensor u = MakeTensor(DType::kUInt8, {1}, {200});
  Tensor s = MakeTensor(DType::kInt8, {1}, {-1});
  ExpectTensor(RunOp1("aten.gt.Tensor", {u, s}), DType::kBool, {1}, {1});
  // A Python float is rounded to the tensor's type (dimensioned tensors win),
  // a dimensioned float64 tensor is not.
  Tensor h = MakeTensor(DType::kFloat16, {1}, {0.1});
  Tensor f = MakeTensor(DType::kFloat32, {1}, {0.1});
  ExpectTensor(RunOp1("aten.eq.Scalar", {h, 0.1}), DType::kBool, {1}, {1});
  ExpectTensor(RunOp1("aten.eq.Scalar", {f, 0.1}), DType::kBool, {1}, {1});
  ExpectTensor(
      RunOp1("aten.eq.Tensor", {f, MakeTensor(DType::kFloat64, {}, {0.1})}),
      DType::kBool, {1}, {1});
  ExpectTensor(
      RunOp1("aten.eq.Tensor", {f, MakeTensor(DType::kFloat64, {1}, {0.1})}),
      DType::kBool, {1}, {0});
  Tensor p = MakeTensor(DType::kBool, {2}, {0, 1});
  ExpectTensor(
      RunOp1("aten.lt.Tensor", {p, MakeTensor(DType::kBool, {2}, {1, 1})}),
      DType::kBool, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.ge.Scalar", {p, 0.5}), DType::kBool, {2}, {0, 1});
}

TEST(BinaryCompareTest, EveryDTypeBroadcast) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {3, 4}, 80, -3, 3);
    Tensor b = RandomTensor(dtype, {4}, 81, -3, 3);
    for (const Comparison& c : Comparisons()) {
      SCOPED_TRACE(c.name);
      ExpectTensor(
          RunOp1(Target(c.name, "Tensor"), {a, b}), DType::kBool, {3, 4},
          BroadcastApply({a, b}, {3, 4},
                         [&](auto v) -> double { return c.f(v[0], v[1]); }));
      ExpectTensor(
          RunOp1(Target(c.name, "Scalar"), {NonContiguousCopy(a), 1}),
          DType::kBool, {3, 4},
          Zip(a, a, [&](double x, double) -> double { return c.f(x, 1); }));
    }
  }
}

TEST(BinaryCompareTest, Errors) {
  ExpectInvalid(
      RunOp("aten.eq.Tensor", {RandomTensor(DType::kFloat32, {2, 3}, 82),
                               RandomTensor(DType::kFloat32, {2}, 83)}),
      {"argument 'other'", "not broadcastable"});
}

// ------------------------------------------------------------------ logical

TEST(BinaryLogicalTest, ValuesAcrossDTypes) {
  Tensor a = MakeTensor(DType::kFloat32, {4}, {0, 1, kNaN, -0.0});
  Tensor b = MakeTensor(DType::kInt64, {4}, {0, 0, 5, 1});
  ExpectTensor(RunOp1("aten.logical_and.default", {a, b}), DType::kBool, {4},
               {0, 0, 1, 0});
  ExpectTensor(RunOp1("aten.logical_or.default", {a, b}), DType::kBool, {4},
               {0, 1, 1, 1});
  ExpectTensor(RunOp1("aten.logical_xor.default", {a, b}), DType::kBool, {4},
               {0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.logical_and.default", {a, 2.0}), DType::kBool, {4},
               {0, 1, 1, 0});
  Tensor col = MakeTensor(DType::kUInt8, {2, 1}, {0, 7});
  Tensor row = MakeTensor(DType::kBool, {3}, {0, 1, 1});
  ExpectTensor(RunOp1("aten.logical_or.default", {col, row}), DType::kBool,
               {2, 3}, {0, 1, 1, 1, 1, 1});
}

TEST(BinaryLogicalTest, EveryDType) {
  const std::pair<const char*, std::function<bool(bool, bool)>> ops[] = {
      {"aten.logical_and.default", std::logical_and<bool>()},
      {"aten.logical_or.default", std::logical_or<bool>()},
      {"aten.logical_xor.default", std::not_equal_to<bool>()},
  };
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {3, 4}, 90, -1, 2);
    Tensor b = RandomTensor(DType::kFloat32, {3, 4}, 91, -1, 2);
    for (const auto& [target, f] : ops) {
      SCOPED_TRACE(target);
      ExpectTensor(RunOp1(target, {SlicedCopy(a), NonContiguousCopy(b)}),
                   DType::kBool, {3, 4},
                   Zip(a, b, [&](double x, double y) -> double {
                     return f(x != 0, y != 0);
                   }));
    }
  }
}

// ------------------------------------------------------------------ bitwise

TEST(BinaryBitwiseTest, Values) {
  Tensor a = MakeTensor(DType::kInt32, {3}, {12, -1, 5});
  Tensor b = MakeTensor(DType::kInt32, {3}, {10, 7, 3});
  ExpectTensor(RunOp1("aten.bitwise_and.Tensor", {a, b}), DType::kInt32, {3},
               {8, 7, 1});
  ExpectTensor(RunOp1("aten.bitwise_or.Tensor", {a, b}), DType::kInt32, {3},
               {14, -1, 7});
  ExpectTensor(RunOp1("aten.bitwise_xor.Tensor", {a, b}), DType::kInt32, {3},
               {6, -8, 6});
  ExpectTensor(RunOp1("aten.bitwise_and.Scalar", {a, 6}), DType::kInt32, {3},
               {4, 6, 4});
  ExpectTensor(RunOp1("aten.bitwise_or.Scalar", {a, true}), DType::kInt32, {3},
               {13, -1, 5});
  Tensor p = MakeTensor(DType::kBool, {4}, {0, 0, 1, 1});
  Tensor q = MakeTensor(DType::kBool, {4}, {0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.bitwise_and.Tensor", {p, q}), DType::kBool, {4},
               {0, 0, 0, 1});
  ExpectTensor(RunOp1("aten.bitwise_or.Tensor", {p, q}), DType::kBool, {4},
               {0, 1, 1, 1});
  ExpectTensor(RunOp1("aten.bitwise_xor.Tensor", {p, q}), DType::kBool, {4},
               {0, 1, 1, 0});
  // uint8 & int8 computes in int16: 255 & -1 is 255.
  ExpectTensor(
      RunOp1("aten.bitwise_and.Tensor", {MakeTensor(DType::kUInt8, {1}, {255}),
                                         MakeTensor(DType::kInt8, {1}, {-1})}),
      DType::kInt16, {1}, {255});
  ExpectTensor(RunOp1("aten.bitwise_xor.Scalar", {p, 2}), DType::kInt64, {4},
               {2, 2, 3, 3});
}

TEST(BinaryBitwiseTest, EveryIntegralDType) {
  auto bits = [](double x) { return static_cast<int64_t>(x); };
  const std::pair<const char*, std::function<int64_t(int64_t, int64_t)>> ops[] =
      {
          {"bitwise_and", std::bit_and<int64_t>()},
          {"bitwise_or", std::bit_or<int64_t>()},
          {"bitwise_xor", std::bit_xor<int64_t>()},
      };
  for (DType dtype : kAllDTypes) {
    if (IsFloating(dtype)) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = RandomTensor(dtype, {2, 5}, 100, -100, 100);
    Tensor b = RandomTensor(dtype, {5}, 101, -100, 100);
    for (const auto& [name, f] : ops) {
      SCOPED_TRACE(name);
      ExpectTensor(
          RunOp1(Target(name, "Tensor"), {NonContiguousCopy(a), SlicedCopy(b)}),
          dtype, {2, 5}, BroadcastApply({a, b}, {2, 5}, [&](auto v) -> double {
            return static_cast<double>(f(bits(v[0]), bits(v[1])));
          }));
    }
  }
}

TEST(BinaryBitwiseTest, Errors) {
  Tensor f = MakeTensor(DType::kFloat32, {2}, {1, 2});
  Tensor i = MakeTensor(DType::kInt32, {2}, {1, 2});
  ExpectInvalid(RunOp("aten.bitwise_and.Tensor", {f, i}),
                {"argument 'self'", "float32"});
  ExpectInvalid(RunOp("aten.bitwise_or.Tensor",
                      {i, MakeTensor(DType::kFloat16, {2}, {1, 2})}),
                {"argument 'other'", "float16"});
  ExpectInvalid(RunOp("aten.bitwise_xor.Scalar", {i, 2.5}),
                {"argument 'other'", "float64"});
  ExpectInvalid(RunOp("aten.bitwise_xor.Tensor",
                      {i, MakeTensor(DType::kInt32, {3}, {1, 2, 3})}),
                {"argument 'other'", "not broadcastable"});
}

// -------------------------------------------------------------------- where

TEST(BinaryWhereTest, Values) {
  Tensor c = MakeTensor(DType::kBool, {3}, {1, 0, 1});
  Tensor x = MakeTensor(DType::kFloat32, {3}, {1, 2, 3});
  Tensor y = MakeTensor(DType::kFloat32, {3}, {10, 20, 30});
  ExpectTensor(RunOp1("aten.where.self", {c, x, y}), DType::kFloat32, {3},
               {1, 20, 3});
  ExpectTensor(RunOp1("aten.where.self", {c, x, kNaN}), DType::kFloat32, {3},
               {1, kNaN, 3});
}

TEST(BinaryWhereTest, ThreeWayBroadcast) {
  Tensor c = RandomTensor(DType::kBool, {2, 1, 1}, 110);
  Tensor x = RandomTensor(DType::kInt64, {1, 3, 1}, 111, -9, 9);
  Tensor y = RandomTensor(DType::kInt64, {4}, 112, -9, 9);
  auto pick = [](const std::vector<double>& v) {
    return v[0] != 0 ? v[1] : v[2];
  };
  ExpectTensor(RunOp1("aten.where.self", {c, x, y}), DType::kInt64, {2, 3, 4},
               BroadcastApply({c, x, y}, {2, 3, 4}, pick));
  // Condition broadcast against larger values, and values against a larger
  // condition.
  Tensor big = RandomTensor(DType::kBool, {3, 4}, 113);
  ExpectTensor(RunOp1("aten.where.self", {big, 1, y}), DType::kInt64, {3, 4},
               BroadcastApply({big, MakeTensor(DType::kInt64, {}, {1}), y},
                              {3, 4}, pick));
  ExpectTensor(
      RunOp1("aten.where.self", {MakeTensor(DType::kBool, {}, {1}), x, y}),
      DType::kInt64, {1, 3, 4},
      BroadcastApply({MakeTensor(DType::kBool, {}, {1}), x, y}, {1, 3, 4},
                     pick));
}

TEST(BinaryWhereTest, TypePromotion) {
  Tensor c = MakeTensor(DType::kBool, {2}, {1, 0});
  Tensor i = MakeTensor(DType::kInt32, {2}, {1, 2});
  ExpectTensor(RunOp1("aten.where.self",
                      {c, i, MakeTensor(DType::kFloat32, {2}, {0.5, 0.5})}),
               DType::kFloat32, {2}, {1, 0.5});
  ExpectTensor(RunOp1("aten.where.self", {c, i, 0.5}), DType::kFloat32, {2},
               {1, 0.5});
  ExpectTensor(RunOp1("aten.where.self", {c, i, 7}), DType::kInt32, {2},
               {1, 7});
  ExpectTensor(RunOp1("aten.where.self",
                      {c, MakeTensor(DType::kFloat16, {2}, {1, 2}), 0.0}),
               DType::kFloat16, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.where.self", {c, 1.0, 0}), DType::kFloat32, {2},
               {1, 0});
  ExpectTensor(
      RunOp1("aten.where.self", {c, MakeTensor(DType::kUInt8, {2}, {200, 1}),
                                 MakeTensor(DType::kInt8, {2}, {-1, -1})}),
      DType::kInt16, {2}, {200, -1});
}

TEST(BinaryWhereTest, EveryDTypeStridedAndEmpty) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor c = RandomTensor(DType::kBool, {3, 4}, 120);
    Tensor x = RandomTensor(dtype, {3, 4}, 121, -4, 4);
    Tensor y = RandomTensor(dtype, {3, 4}, 122, -4, 4);
    ExpectTensor(RunOp1("aten.where.self", {NonContiguousCopy(c), SlicedCopy(x),
                                            NonContiguousCopy(y)}),
                 dtype, {3, 4}, BroadcastApply({c, x, y}, {3, 4}, [](auto v) {
                   return v[0] != 0 ? v[1] : v[2];
                 }));
    ExpectTensor(RunOp1("aten.where.self",
                        {RandomTensor(DType::kBool, {0, 3, 4}, 123), x, y}),
                 dtype, {0, 3, 4}, {});
  }
}

TEST(BinaryWhereTest, Errors) {
  Tensor x = MakeTensor(DType::kFloat32, {2}, {1, 2});
  ExpectInvalid(
      RunOp("aten.where.self", {MakeTensor(DType::kUInt8, {2}, {1, 0}), x, x}),
      {"argument 'condition'", "bool", "uint8"});
  ExpectInvalid(RunOp("aten.where.self", {x, x, x}),
                {"argument 'condition'", "float32"});
  Tensor c = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectInvalid(RunOp("aten.where.self",
                      {c, MakeTensor(DType::kFloat32, {3}, {1, 2, 3}), x}),
                {"argument 'self'", "not broadcastable"});
  ExpectInvalid(RunOp("aten.where.self",
                      {c, x, MakeTensor(DType::kFloat32, {3}, {1, 2, 3})}),
                {"argument 'other'", "not broadcastable"});
}

// -------------------------------------------------------------------- clamp

double Clamp(double x, double lo, double hi) {
  if (std::isnan(x) || std::isnan(lo) || std::isnan(hi)) return kNaN;
  return std::min(std::max(x, lo), hi);
}

TEST(BinaryClampTest, ScalarBounds) {
  Tensor x = MakeTensor(DType::kFloat32, {5}, {-2, -0.5, 0.5, 2, kNaN});
  ExpectTensor(RunOp1("aten.clamp.default", {x, -1, 1}), DType::kFloat32, {5},
               {-1, -0.5, 0.5, 1, kNaN});
  ExpectTensor(RunOp1("aten.clamp.default", {x}, {{"min", 0.0}}),
               DType::kFloat32, {5}, {0, 0, 0.5, 2, kNaN});
  ExpectTensor(RunOp1("aten.clamp.default", {x, None(), 0}), DType::kFloat32,
               {5}, {-2, -0.5, 0, 0, kNaN});
  // min > max: everything becomes max.
  ExpectTensor(RunOp1("aten.clamp.default", {x, 3, 1}), DType::kFloat32, {5},
               {1, 1, 1, 1, kNaN});
  ExpectTensor(RunOp1("aten.clamp.default", {x, kNaN, 1}), DType::kFloat32, {5},
               {kNaN, kNaN, kNaN, kNaN, kNaN});
  ExpectTensor(RunOp1("aten.clamp.default", {x, -kInf, kInf}), DType::kFloat32,
               {5}, {-2, -0.5, 0.5, 2, kNaN});
}

TEST(BinaryClampTest, ScalarBoundsPromote) {
  Tensor i = MakeTensor(DType::kInt32, {3}, {-5, 0, 5});
  ExpectTensor(RunOp1("aten.clamp.default", {i, -2, 3}), DType::kInt32, {3},
               {-2, 0, 3});
  ExpectTensor(RunOp1("aten.clamp.default", {i, 0.5}), DType::kFloat32, {3},
               {0.5, 0.5, 5});
  Tensor mask = MakeTensor(DType::kBool, {2}, {0, 1});
  ExpectTensor(RunOp1("aten.clamp.default", {mask, 0, 0}), DType::kInt64, {2},
               {0, 0});
  // Bounds are rounded to the result type before comparing.
  Tensor h = MakeTensor(DType::kFloat16, {1}, {0.5});
  ExpectTensor(RunOp1("aten.clamp.default", {h, 0.6}), DType::kFloat16, {1},
               {0.6}, 0, 1e-3);
}

TEST(BinaryClampTest, TensorBounds) {
  Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 130, -3, 3);
  Tensor lo = RandomTensor(DType::kFloat32, {3}, 131, -2, 0);
  Tensor hi = RandomTensor(DType::kFloat32, {4, 1, 1}, 132, 0, 2);
  ExpectTensor(RunOp1("aten.clamp.Tensor", {x, lo, hi}), DType::kFloat32,
               {4, 2, 3}, BroadcastApply({x, lo, hi}, {4, 2, 3}, [](auto v) {
                 return Clamp(v[0], v[1], v[2]);
               }));
  ExpectTensor(RunOp1("aten.clamp.Tensor", {x, lo}), DType::kFloat32, {2, 3},
               BroadcastApply({x, lo}, {2, 3},
                              [](auto v) { return std::max(v[0], v[1]); }));
  ExpectTensor(RunOp1("aten.clamp.Tensor", {x}, {{"max", hi}}), DType::kFloat32,
               {4, 2, 3}, BroadcastApply({x, hi}, {4, 2, 3}, [](auto v) {
                 return std::min(v[0], v[1]);
               }));
  Tensor nan_lo = MakeTensor(DType::kFloat32, {2}, {kNaN, 0});
  ExpectTensor(RunOp1("aten.clamp.Tensor",
                      {MakeTensor(DType::kFloat32, {2}, {1, -1}), nan_lo}),
               DType::kFloat32, {2}, {kNaN, 0});
  // Promotion over all three; a single bool bound is maximum/minimum.
  Tensor i = MakeTensor(DType::kInt64, {2}, {-5, 5});
  ExpectTensor(RunOp1("aten.clamp.Tensor",
                      {i, MakeTensor(DType::kFloat32, {1}, {-0.5})}),
               DType::kFloat32, {2}, {-0.5, 5});
  ExpectTensor(RunOp1("aten.clamp.Tensor", {i, None(), 2}), DType::kInt64, {2},
               {-5, 2});
  ExpectTensor(RunOp1("aten.clamp.Tensor", {i, None(), 2.5}), DType::kFloat32,
               {2}, {-5, 2.5});
  Tensor p = MakeTensor(DType::kBool, {2}, {0, 1});
  ExpectTensor(
      RunOp1("aten.clamp.Tensor", {p, MakeTensor(DType::kBool, {1}, {1})}),
      DType::kBool, {2}, {1, 1});
  ExpectTensor(RunOp1("aten.clamp.Tensor",
                      {p, None(), MakeTensor(DType::kBool, {1}, {0})}),
               DType::kBool, {2}, {0, 0});
}

TEST(BinaryClampTest, EveryDTypeStridedAndEmpty) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = RandomTensor(dtype, {3, 4}, 140, -6, 6);
    Tensor lo = RandomTensor(dtype, {3, 4}, 141, -4, 0);
    Tensor hi = RandomTensor(dtype, {4}, 142, 0, 4);
    ExpectTensor(
        RunOp1("aten.clamp.Tensor", {NonContiguousCopy(x), SlicedCopy(lo), hi}),
        dtype, {3, 4}, BroadcastApply({x, lo, hi}, {3, 4}, [](auto v) {
          return Clamp(v[0], v[1], v[2]);
        }));
    ExpectTensor(RunOp1("aten.clamp.default", {SlicedCopy(x), 1, 3}), dtype,
                 {3, 4},
                 Zip(x, x, [](double v, double) { return Clamp(v, 1, 3); }), 0,
                 RoundingRtol(dtype));
    ExpectTensor(
        RunOp1("aten.clamp.default", {RandomTensor(dtype, {0, 2}, 143), 1}),
        dtype, {0, 2}, {});
    ExpectTensor(
        RunOp1("aten.clamp.default", {MakeTensor(dtype, {}, {5}), None(), 2}),
        dtype, {}, {2});
  }
}

TEST(BinaryClampTest, Errors) {
  Tensor x = MakeTensor(DType::kFloat32, {2}, {1, 2});
  ExpectInvalid(RunOp("aten.clamp.default", {x}),
                {"argument 'min'", "at least one"});
  ExpectInvalid(RunOp("aten.clamp.Tensor", {x, None(), None()}),
                {"argument 'min'"});
  ExpectInvalid(RunOp("aten.clamp.default",
                      {MakeTensor(DType::kInt32, {1}, {1}), int64_t{1} << 40}),
                {"argument 'min'", "overflow", "int32"});
  ExpectInvalid(RunOp("aten.clamp.default",
                      {MakeTensor(DType::kFloat16, {1}, {1}), None(), 1e5}),
                {"argument 'max'", "overflow", "float16"});
  Tensor mask = MakeTensor(DType::kBool, {1}, {1});
  ExpectInvalid(RunOp("aten.clamp.default", {mask, false, true}),
                {"argument 'self'", "bool"});
  ExpectInvalid(RunOp("aten.clamp.Tensor", {mask, mask, mask}),
                {"argument 'self'", "bool"});
  ExpectInvalid(RunOp("aten.clamp.Tensor",
                      {x, MakeTensor(DType::kFloat32, {3}, {1, 2, 3})}),
                {"argument 'min'", "not broadcastable"});
  ExpectInvalid(RunOp("aten.clamp.Tensor",
                      {x, None(), MakeTensor(DType::kFloat32, {3}, {1, 2, 3})}),
                {"argument 'max'", "not broadcastable"});
}

// ------------------------------------------------------------------ devices

// Shape inference applies TensorIterator's device rule: a 0-dim CPU tensor
// goes with a tensor on any device, other operands must share one.
TEST(BinaryDeviceTest, CommonDevice) {
  GraphBuilder builder("devices");
  ASSERT_TRUE(builder.AddPlaceholder("x").ok());
  ASSERT_TRUE(builder.AddPlaceholder("y").ok());
  ASSERT_TRUE(
      builder.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")})
          .ok());
  ASSERT_TRUE(builder.SetOutputs({Arg::Ref("add")}).ok());
  auto graph = builder.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  Device cuda{DeviceType::kCUDA, 0};
  TensorMeta on_gpu{DType::kFloat32, {2}, cuda};
  auto ok = InferShapes(
      **graph, {on_gpu, TensorMeta{DType::kFloat32, {}, Device::Cpu()}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[2][0].device, cuda);
  auto bad = InferShapes(
      **graph, {on_gpu, TensorMeta{DType::kFloat32, {2}, Device::Cpu()}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("argument 'other'"),
            std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace guardjit
