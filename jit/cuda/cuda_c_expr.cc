#include "jit/cuda/cuda_c_expr.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/half.h"
#include "core/status_macros.h"

namespace guardjit::cuda_c {

bool IsReducedFloat(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16;
}

// The C type a value of dtype `d` computes in (float16/bfloat16 values are
// floats holding a value the dtype represents exactly).
absl::StatusOr<std::string> ComputeType(DType d) {
  switch (d) {
    case DType::kBool:
      return std::string("bool");
    case DType::kUInt8:
      return std::string("unsigned char");
    case DType::kInt8:
      return std::string("signed char");
    case DType::kInt16:
      return std::string("short");
    case DType::kInt32:
      return std::string("int");
    case DType::kInt64:
      return std::string("long long");
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return std::string("float");
    case DType::kFloat64:
      return std::string("double");
    default:
      return absl::UnimplementedError(
          absl::StrCat("no CUDA codegen for ", DTypeName(d)));
  }
}

// The C type of a buffer element of dtype `d` (bool is a byte).
absl::StatusOr<std::string> StorageType(DType d) {
  switch (d) {
    case DType::kBool:
      return std::string("unsigned char");
    case DType::kFloat16:
      return std::string("__half");
    case DType::kBFloat16:
      return std::string("__nv_bfloat16");
    default:
      return ComputeType(d);
  }
}

// Signed integer types whose arithmetic can overflow after promotion: they
// compute through the unsigned type of the same width (wrapping, as the CPU
// kernels and PyTorch do; signed overflow is undefined in C++).
const char* WrapType(DType d) {
  if (d == DType::kInt32) return "unsigned";
  if (d == DType::kInt64) return "unsigned long long";
  return nullptr;
}

std::string FloatLiteral(double v, DType d) {
  const bool f64 = d == DType::kFloat64;
  if (d == DType::kFloat16) {
    v = HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v)));
  } else if (d == DType::kBFloat16) {
    v = BFloat16BitsToFloat(FloatToBFloat16Bits(static_cast<float>(v)));
  } else if (!f64) {
    v = static_cast<float>(v);
  }
  if (std::isnan(v)) {
    return f64 ? "__longlong_as_double(0x7ff8000000000000LL)"
               : "__int_as_float(0x7fc00000)";
  }
  if (std::isinf(v)) {
    if (f64) {
      return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                   : "__longlong_as_double((long long)0xfff0000000000000ULL)";
    }
    return v > 0 ? "__int_as_float(0x7f800000)"
                 : "__int_as_float((int)0xff800000u)";
  }
  return f64 ? absl::StrFormat("%.17e", v) : absl::StrFormat("%.9ef", v);
}

std::string IntLiteral(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) {
    return "(-9223372036854775807LL - 1)";
  }
  return v < 0 ? absl::StrCat("(", v, "LL)") : absl::StrCat(v, "LL");
}

std::string Index(const IndexExpr& e, bool narrow) {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
      if (narrow) {
        return e.value() < 0 ? absl::StrCat("(", e.value(), ")")
                             : absl::StrCat(e.value());
      }
      return IntLiteral(e.value());
    case IndexExpr::Kind::kVar:
      return absl::StrCat("i", e.id());
    case IndexExpr::Kind::kSize:
      return absl::StrCat("s", e.id(), narrow ? "i" : "");
    case IndexExpr::Kind::kAdd:
      return absl::StrCat("(", Index(e.lhs(), narrow), " + ",
                          Index(e.rhs(), narrow), ")");
    case IndexExpr::Kind::kMul:
      return absl::StrCat("(", Index(e.lhs(), narrow), " * ",
                          Index(e.rhs(), narrow), ")");
    case IndexExpr::Kind::kFloorDiv:
      // Kernel indices are non-negative, where C division floors.
      return absl::StrCat("(", Index(e.lhs(), narrow), " / ",
                          Index(e.rhs(), narrow), ")");
    case IndexExpr::Kind::kMod:
      return absl::StrCat("(", Index(e.lhs(), narrow), " % ",
                          Index(e.rhs(), narrow), ")");
    case IndexExpr::Kind::kMax:
      return absl::StrCat("gj_imax(", Index(e.lhs(), narrow), ", ",
                          Index(e.rhs(), narrow), ")");
    case IndexExpr::Kind::kMin:
      return absl::StrCat("gj_imin(", Index(e.lhs(), narrow), ", ",
                          Index(e.rhs(), narrow), ")");
  }
  return narrow ? "0" : "0LL";
}

// The product of `loops`' extents.
IndexExpr Extent(const std::vector<LoopRange>& loops) {
  IndexExpr n = IndexExpr::Const(1);
  for (const LoopRange& l : loops) n = n * l.extent;
  return n;
}

// The helpers every translation unit starts with.
absl::StatusOr<std::string> Cast(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  if (to == DType::kBool) return absl::StrCat("(", x, " != 0)");
  if (to == DType::kFloat16) {
    return absl::StrCat("gj_round_half((float)(", x, "))");
  }
  if (to == DType::kBFloat16) {
    return absl::StrCat("gj_round_bf16((float)(", x, "))");
  }
  ASSIGN_OR_RETURN(std::string t, ComputeType(to));
  if (IsFloating(from) && !IsFloating(to)) {
    return absl::StrCat("(", t, ")gj_f2i((double)(", x, "))");
  }
  return absl::StrCat("(", t, ")(", x, ")");
}

absl::StatusOr<std::string> Unary(UnaryOp op, DType d, const std::string& x) {
  const bool fp = IsFloating(d);
  const bool f64 = d == DType::kFloat64;
  ASSIGN_OR_RETURN(std::string t, ComputeType(d));
  const bool is_unsigned = d == DType::kUInt8 || d == DType::kBool;
  auto fn = [&](const char* name) {
    return absl::StrCat(name, f64 ? "" : "f", "(", x, ")");
  };
  const std::string one = f64 ? "1.0" : "1.0f";
  switch (op) {
    case UnaryOp::kNeg:
      if (fp) return absl::StrCat("(-", x, ")");
      if (const char* w = WrapType(d)) {
        return absl::StrCat("(", t, ")(0u - (", w, ")", x, ")");
      }
      return absl::StrCat("(", t, ")(-", x, ")");
    case UnaryOp::kAbs:
      if (fp) return fn("fabs");
      if (is_unsigned) return x;
      if (const char* w = WrapType(d)) {
        return absl::StrCat("(", t, ")(", x, " < 0 ? 0u - (", w, ")", x, " : (",
                            w, ")", x, ")");
      }
      return absl::StrCat("(", t, ")(", x, " < 0 ? -", x, " : ", x, ")");
    case UnaryOp::kRelu:
      if (is_unsigned) return x;
      return absl::StrCat("(", x, " < 0 ? (", t, ")0 : ", x, ")");
    case UnaryOp::kFloor:
      return fp ? fn("floor") : x;
    case UnaryOp::kCeil:
      return fp ? fn("ceil") : x;
    case UnaryOp::kRound:  // rint rounds half to even
      return fp ? fn("rint") : x;
    case UnaryOp::kTrunc:
      return fp ? fn("trunc") : x;
    case UnaryOp::kSign:
      if (d == DType::kBool) return x;
      return absl::StrCat("(", t, ")((0 < ", x, ") - (", x, " < 0))");
    case UnaryOp::kLogicalNot:
      return absl::StrCat("(!", x, ")");
    case UnaryOp::kBitwiseNot:
      if (d == DType::kBool) return absl::StrCat("(!", x, ")");
      return absl::StrCat("(", t, ")(~", x, ")");
    case UnaryOp::kIsNan:
      return fp ? absl::StrCat("(", x, " != ", x, ")") : std::string("false");
    case UnaryOp::kIsInf:
      return fp ? absl::StrCat("isinf(", x, ")") : std::string("false");
    default:
      break;
  }
  if (!fp) {
    return absl::InternalError(
        absl::StrCat(UnaryOpName(op), " of ", DTypeName(d)));
  }
  switch (op) {
    case UnaryOp::kExp:
      return fn("exp");
    case UnaryOp::kLog:
      return fn("log");
    case UnaryOp::kLog1p:
      return fn("log1p");
    case UnaryOp::kLog2:
      return fn("log2");
    case UnaryOp::kLog10:
      return fn("log10");
    case UnaryOp::kExpm1:
      return fn("expm1");
    case UnaryOp::kTan:
      return fn("tan");
    case UnaryOp::kSinh:
      return fn("sinh");
    case UnaryOp::kCosh:
      return fn("cosh");
    case UnaryOp::kAsin:
      return fn("asin");
    case UnaryOp::kAcos:
      return fn("acos");
    case UnaryOp::kAtan:
      return fn("atan");
    case UnaryOp::kAsinh:
      return fn("asinh");
    case UnaryOp::kAcosh:
      return fn("acosh");
    case UnaryOp::kAtanh:
      return fn("atanh");
    case UnaryOp::kSqrt:
      return fn("sqrt");
    case UnaryOp::kRsqrt:
      return absl::StrCat("(", one, " / ", fn("sqrt"), ")");
    case UnaryOp::kReciprocal:
      return absl::StrCat("(", one, " / ", x, ")");
    case UnaryOp::kTanh:
      return fn("tanh");
    case UnaryOp::kErf:
      return fn("erf");
    case UnaryOp::kSin:
      return fn("sin");
    case UnaryOp::kCos:
      return fn("cos");
    case UnaryOp::kSigmoid:
      return absl::StrCat("(", one, " / (", one, " + exp", f64 ? "" : "f", "(-",
                          x, ")))");
    case UnaryOp::kSilu:
      return absl::StrCat("(", x, " / (", one, " + exp", f64 ? "" : "f", "(-",
                          x, ")))");
    case UnaryOp::kGeluErf:
      // x * 0.5 * (1 + erf(x * sqrt(1/2))), rounded as the eager kernel does.
      return absl::StrCat("(", x, " * ", FloatLiteral(0.5, d), " * (", one,
                          " + erf", f64 ? "" : "f", "(", x, " * ",
                          FloatLiteral(M_SQRT1_2, d), ")))");
    case UnaryOp::kGeluTanh: {
      const double beta = M_SQRT2 * M_2_SQRTPI * 0.5;
      return absl::StrCat("(", FloatLiteral(0.5, d), " * ", x, " * (", one,
                          " + tanh", f64 ? "" : "f", "(", FloatLiteral(beta, d),
                          " * (", x, " + ", FloatLiteral(0.044715, d), " * (",
                          x, " * ", x, " * ", x, ")))))");
    }
    default:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("no CUDA codegen for unary op ", UnaryOpName(op)));
}

absl::StatusOr<std::string> Binary(BinaryOp op, DType d, const std::string& a,
                                   const std::string& b) {
  const bool fp = IsFloating(d);
  const bool f64 = d == DType::kFloat64;
  ASSIGN_OR_RETURN(std::string t, ComputeType(d));
  auto arith = [&](const char* sym) -> std::string {
    if (fp) return absl::StrCat("(", a, " ", sym, " ", b, ")");
    if (const char* w = WrapType(d)) {
      return absl::StrCat("(", t, ")((", w, ")", a, " ", sym, " (", w, ")", b,
                          ")");
    }
    return absl::StrCat("(", t, ")(", a, " ", sym, " ", b, ")");
  };
  auto cmp = [&](const char* sym) {
    return absl::StrCat("(", a, " ", sym, " ", b, ")");
  };
  switch (op) {
    case BinaryOp::kAdd:
      return arith("+");
    case BinaryOp::kSub:
      return arith("-");
    case BinaryOp::kMul:
      return arith("*");
    case BinaryOp::kDiv:
      if (fp) return arith("/");
      break;
    case BinaryOp::kPow:
      if (fp) return absl::StrCat("pow", f64 ? "" : "f", "(", a, ", ", b, ")");
      break;
    case BinaryOp::kMaximum:
      if (fp) return absl::StrCat("gj_maximum(", a, ", ", b, ")");
      return absl::StrCat("(", a, " > ", b, " ? ", a, " : ", b, ")");
    case BinaryOp::kMinimum:
      if (fp) return absl::StrCat("gj_minimum(", a, ", ", b, ")");
      return absl::StrCat("(", a, " < ", b, " ? ", a, " : ", b, ")");
    case BinaryOp::kEq:
      return cmp("==");
    case BinaryOp::kNe:
      return cmp("!=");
    case BinaryOp::kLt:
      return cmp("<");
    case BinaryOp::kLe:
      return cmp("<=");
    case BinaryOp::kGt:
      return cmp(">");
    case BinaryOp::kGe:
      return cmp(">=");
    case BinaryOp::kAnd:
      if (d == DType::kBool) return cmp("&&");
      if (!fp) return arith("&");
      break;
    case BinaryOp::kOr:
      if (d == DType::kBool) return cmp("||");
      if (!fp) return arith("|");
      break;
    case BinaryOp::kXor:
      if (d == DType::kBool) return cmp("!=");
      if (!fp) return arith("^");
      break;
    case BinaryOp::kFmod:
      if (fp) return absl::StrCat("fmod", f64 ? "" : "f", "(", a, ", ", b, ")");
      break;
    case BinaryOp::kAtan2:
      if (fp) {
        return absl::StrCat("atan2", f64 ? "" : "f", "(", a, ", ", b, ")");
      }
      break;
  }
  return absl::InternalError(
      absl::StrCat(BinaryOpName(op), " of ", DTypeName(d)));
}

}  // namespace guardjit::cuda_c
