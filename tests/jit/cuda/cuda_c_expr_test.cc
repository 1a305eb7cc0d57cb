// The CUDA C generator's expression layer (jit/cuda/cuda_c_expr.h): types,
// literals that read back as the value rounded to the dtype, index
// expressions in 64 and 32 bits, and operations that wrap, round and refuse
// as PyTorch's kernels do. (tests/jit/simt and the conformance suites run
// the generated code; these pin down each piece of text.)

#include "jit/cuda/cuda_c_expr.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/half.h"
#include "gtest/gtest.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit::cuda_c {
namespace {

std::string Ok(const absl::StatusOr<std::string>& s) {
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

// The value of a finite literal FloatLiteral wrote, as a C compiler reads
// it: "1.5e+00f" is the float nearest to the decimal, "1.5e+00" the double.
double ReadBack(std::string literal) {
  const bool is_float = !literal.empty() && literal.back() == 'f';
  if (is_float) literal.pop_back();
  char* end = nullptr;
  const double v = is_float ? std::strtof(literal.c_str(), &end)
                            : std::strtod(literal.c_str(), &end);
  EXPECT_EQ(*end, '\0') << literal;
  return v;
}

TEST(CudaCTypesTest, ComputeAndStorageTypes) {
  EXPECT_EQ(Ok(ComputeType(DType::kBool)), "bool");
  EXPECT_EQ(Ok(StorageType(DType::kBool)), "unsigned char");
  EXPECT_EQ(Ok(ComputeType(DType::kInt8)), "signed char");
  EXPECT_EQ(Ok(ComputeType(DType::kUInt8)), "unsigned char");
  EXPECT_EQ(Ok(ComputeType(DType::kInt64)), "long long");
  // Half types compute in float and are stored as CUDA's own types.
  EXPECT_EQ(Ok(ComputeType(DType::kFloat16)), "float");
  EXPECT_EQ(Ok(ComputeType(DType::kBFloat16)), "float");
  EXPECT_EQ(Ok(StorageType(DType::kFloat16)), "__half");
  EXPECT_EQ(Ok(StorageType(DType::kBFloat16)), "__nv_bfloat16");
  EXPECT_EQ(Ok(StorageType(DType::kFloat64)), "double");
  EXPECT_TRUE(IsReducedFloat(DType::kBFloat16));
  EXPECT_FALSE(IsReducedFloat(DType::kFloat32));
}

TEST(CudaCTypesTest, OnlyThirtyTwoAndSixtyFourBitIntegersWrapThroughUnsigned) {
  EXPECT_STREQ(WrapType(DType::kInt32), "unsigned");
  EXPECT_STREQ(WrapType(DType::kInt64), "unsigned long long");
  EXPECT_EQ(WrapType(DType::kInt16), nullptr);
  EXPECT_EQ(WrapType(DType::kUInt8), nullptr);
  EXPECT_EQ(WrapType(DType::kFloat32), nullptr);
}

TEST(FloatLiteralTest, ReadsBackAsTheValueRoundedToTheDType) {
  for (double v : {0.1, -2.5, 1e-30, 65504.0, 1.0 / 3.0, 1e-7}) {
    EXPECT_EQ(ReadBack(FloatLiteral(v, DType::kFloat64)), v);
    EXPECT_EQ(ReadBack(FloatLiteral(v, DType::kFloat32)),
              static_cast<double>(static_cast<float>(v)));
    EXPECT_EQ(ReadBack(FloatLiteral(v, DType::kFloat16)),
              HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))));
    EXPECT_EQ(ReadBack(FloatLiteral(v, DType::kBFloat16)),
              BFloat16BitsToFloat(FloatToBFloat16Bits(static_cast<float>(v))));
  }
  // float literals carry the f suffix, double ones do not.
  EXPECT_EQ(FloatLiteral(1.5, DType::kFloat32).back(), 'f');
  EXPECT_NE(FloatLiteral(1.5, DType::kFloat64).back(), 'f');
}

TEST(FloatLiteralTest, InfinityAndNanAsBitCasts) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FloatLiteral(inf, DType::kFloat32), "__int_as_float(0x7f800000)");
  EXPECT_EQ(FloatLiteral(-inf, DType::kFloat32),
            "__int_as_float((int)0xff800000u)");
  EXPECT_EQ(FloatLiteral(inf, DType::kFloat64),
            "__longlong_as_double(0x7ff0000000000000LL)");
  EXPECT_EQ(FloatLiteral(-inf, DType::kFloat64),
            "__longlong_as_double((long long)0xfff0000000000000ULL)");
  EXPECT_EQ(FloatLiteral(std::nan(""), DType::kFloat64),
            "__longlong_as_double(0x7ff8000000000000LL)");
  EXPECT_EQ(FloatLiteral(std::nan(""), DType::kBFloat16),
            "__int_as_float(0x7fc00000)");
  // Finite in float64, infinite once rounded to float16 or float32.
  EXPECT_EQ(FloatLiteral(1e6, DType::kFloat16), "__int_as_float(0x7f800000)");
  EXPECT_EQ(FloatLiteral(-1e300, DType::kFloat32),
            "__int_as_float((int)0xff800000u)");
}

TEST(IntLiteralTest, LongLongLiterals) {
  EXPECT_EQ(IntLiteral(0), "0LL");
  EXPECT_EQ(IntLiteral(42), "42LL");
  EXPECT_EQ(IntLiteral(-7), "(-7LL)");
  // -9223372036854775808LL is unary minus on a literal too large for long
  // long; the minimum is written as an expression.
  EXPECT_EQ(IntLiteral(std::numeric_limits<int64_t>::min()),
            "(-9223372036854775807LL - 1)");
}

TEST(IndexTest, WideAndNarrowForms) {
  const IndexExpr e =
      IndexExpr::Var(0) * IndexExpr::Size(1) + IndexExpr::Var(2);
  EXPECT_EQ(Index(e), "((i0 * s1) + i2)");
  EXPECT_EQ(Index(e, /*narrow=*/true), "((i0 * s1i) + i2)");
  const IndexExpr c = IndexExpr::Var(0) + IndexExpr::Const(-3);
  EXPECT_EQ(Index(c), "(i0 + (-3LL))");
  EXPECT_EQ(Index(c, true), "(i0 + (-3))");
  EXPECT_EQ(Index(IndexExpr::Const(5), true), "5");
}

TEST(IndexTest, DivisionModuloAndBounds) {
  const IndexExpr i = IndexExpr::Var(1);
  const IndexExpr s = IndexExpr::Size(0);
  EXPECT_EQ(Index(IndexExpr::FloorDiv(i, s)), "(i1 / s0)");
  EXPECT_EQ(Index(IndexExpr::Mod(i, s), true), "(i1 % s0i)");
  EXPECT_EQ(Index(IndexExpr::Max(i, s)), "gj_imax(i1, s0)");
  EXPECT_EQ(Index(IndexExpr::Min(i, IndexExpr::Const(4))), "gj_imin(i1, 4LL)");
}

TEST(ExtentTest, ProductOfTheLoopsExtents) {
  EXPECT_EQ(Extent({}), IndexExpr::Const(1));
  EXPECT_EQ(Extent({{0, IndexExpr::Const(3)}, {1, IndexExpr::Const(5)}}),
            IndexExpr::Const(15));
  EXPECT_EQ(Index(Extent({{0, IndexExpr::Size(0)}, {1, IndexExpr::Const(5)}})),
            "(s0 * 5LL)");
}

TEST(CastTest, Conversions) {
  EXPECT_EQ(Ok(Cast("x", DType::kInt32, DType::kInt32)), "x");
  EXPECT_EQ(Ok(Cast("x", DType::kFloat32, DType::kBool)), "(x != 0)");
  EXPECT_EQ(Ok(Cast("x", DType::kFloat32, DType::kFloat16)),
            "gj_round_half((float)(x))");
  EXPECT_EQ(Ok(Cast("x", DType::kInt64, DType::kBFloat16)),
            "gj_round_bf16((float)(x))");
  // Float to integer goes through double (runtime/convert.h).
  EXPECT_EQ(Ok(Cast("x", DType::kFloat32, DType::kInt8)),
            "(signed char)gj_f2i((double)(x))");
  EXPECT_EQ(Ok(Cast("x", DType::kInt32, DType::kFloat64)), "(double)(x)");
}

TEST(UnaryTest, IntegerNegationAndAbsWrap) {
  EXPECT_EQ(Ok(Unary(UnaryOp::kNeg, DType::kInt32, "x")),
            "(int)(0u - (unsigned)x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kNeg, DType::kInt16, "x")), "(short)(-x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kNeg, DType::kFloat32, "x")), "(-x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kAbs, DType::kInt64, "x")),
            "(long long)(x < 0 ? 0u - (unsigned long long)x : (unsigned long "
            "long)x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kAbs, DType::kUInt8, "x")), "x");
  EXPECT_EQ(Ok(Unary(UnaryOp::kAbs, DType::kFloat64, "x")), "fabs(x)");
}

TEST(UnaryTest, FloatFunctionsPickTheirPrecision) {
  EXPECT_EQ(Ok(Unary(UnaryOp::kExp, DType::kFloat32, "x")), "expf(x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kExp, DType::kFloat64, "x")), "exp(x)");
  // Half types compute in float.
  EXPECT_EQ(Ok(Unary(UnaryOp::kTanh, DType::kFloat16, "x")), "tanhf(x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kRsqrt, DType::kFloat64, "x")),
            "(1.0 / sqrt(x))");
  EXPECT_EQ(Ok(Unary(UnaryOp::kSigmoid, DType::kFloat32, "x")),
            "(1.0f / (1.0f + expf(-x)))");
  EXPECT_EQ(Ok(Unary(UnaryOp::kRound, DType::kFloat32, "x")), "rintf(x)");
}

TEST(UnaryTest, RoundingOpsAreIdentitiesOnIntegers) {
  for (UnaryOp op :
       {UnaryOp::kFloor, UnaryOp::kCeil, UnaryOp::kRound, UnaryOp::kTrunc}) {
    EXPECT_EQ(Ok(Unary(op, DType::kInt32, "x")), "x");
  }
  EXPECT_EQ(Ok(Unary(UnaryOp::kIsNan, DType::kInt32, "x")), "false");
  EXPECT_EQ(Ok(Unary(UnaryOp::kIsNan, DType::kFloat32, "x")), "(x != x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kBitwiseNot, DType::kBool, "x")), "(!x)");
  EXPECT_EQ(Ok(Unary(UnaryOp::kBitwiseNot, DType::kInt8, "x")),
            "(signed char)(~x)");
}

TEST(UnaryTest, TranscendentalsOfIntegersAreRefused) {
  const absl::StatusOr<std::string> s =
      Unary(UnaryOp::kExp, DType::kInt32, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.status().message().find("int32"), std::string::npos)
      << s.status();
}

TEST(BinaryTest, IntegerArithmeticWrapsThroughUnsigned) {
  EXPECT_EQ(Ok(Binary(BinaryOp::kAdd, DType::kInt32, "a", "b")),
            "(int)((unsigned)a + (unsigned)b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kMul, DType::kInt64, "a", "b")),
            "(long long)((unsigned long long)a * (unsigned long long)b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kSub, DType::kInt8, "a", "b")),
            "(signed char)(a - b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kAdd, DType::kFloat32, "a", "b")), "(a + b)");
}

TEST(BinaryTest, FloatMaximumPropagatesNanThroughItsHelper) {
  EXPECT_EQ(Ok(Binary(BinaryOp::kMaximum, DType::kFloat32, "a", "b")),
            "gj_maximum(a, b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kMinimum, DType::kInt32, "a", "b")),
            "(a < b ? a : b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kPow, DType::kFloat64, "a", "b")), "pow(a, b)");
}

TEST(BinaryTest, LogicalOpsOnBoolBitwiseOnIntegers) {
  EXPECT_EQ(Ok(Binary(BinaryOp::kAnd, DType::kBool, "a", "b")), "(a && b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kXor, DType::kBool, "a", "b")), "(a != b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kOr, DType::kInt16, "a", "b")),
            "(short)(a | b)");
  EXPECT_EQ(Ok(Binary(BinaryOp::kLe, DType::kFloat64, "a", "b")), "(a <= b)");
}

TEST(BinaryTest, OpsWithoutAnIntegerFormAreRefused) {
  for (BinaryOp op :
       {BinaryOp::kDiv, BinaryOp::kPow, BinaryOp::kFmod, BinaryOp::kAtan2}) {
    const absl::StatusOr<std::string> s = Binary(op, DType::kInt64, "a", "b");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInternal);
    EXPECT_NE(s.status().message().find("int64"), std::string::npos)
        << s.status();
  }
  EXPECT_FALSE(Binary(BinaryOp::kAnd, DType::kFloat32, "a", "b").ok());
}

}  // namespace
}  // namespace guardjit::cuda_c
