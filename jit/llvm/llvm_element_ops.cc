#include "jit/llvm/llvm_element_ops.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/llvm/llvm_math.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace guardjit {
namespace {

llvm::Value* FConst(llvm::Type* t, double v) {
  return llvm::ConstantFP::get(t, v);
}

// A call of libm's `f32` or `f64` (by x's type) on `x` and, for binary
// functions, `y`, declared without side effects (errno is not read) so the
// loop vectorizer may turn it into its libmvec variant (jit/llvm/libmvec.h).
llvm::Value* Libm(llvm::IRBuilderBase& b, const char* f32, const char* f64,
                  llvm::Value* x, llvm::Value* y = nullptr) {
  llvm::Type* t = x->getType();
  std::vector<llvm::Type*> params(y == nullptr ? 1 : 2, t);
  llvm::FunctionCallee fn =
      b.GetInsertBlock()->getModule()->getOrInsertFunction(
          t->isFloatTy() ? f32 : f64,
          llvm::FunctionType::get(t, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
  }
  if (y == nullptr) return b.CreateCall(fn, {x});
  return b.CreateCall(fn, {x, y});
}

// e^x: float32 expanded inline (jit/llvm/llvm_math.h), the intrinsic otherwise.
llvm::Value* Exp(llvm::IRBuilderBase& b, llvm::Value* x) {
  if (x->getType()->isFloatTy()) return EmitExpF32(b, x);
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
}

// tanh: float32 expanded inline (jit/llvm/llvm_math.h), libm otherwise.
llvm::Value* Tanh(llvm::IRBuilderBase& b, llvm::Value* x) {
  if (x->getType()->isFloatTy()) return EmitTanhF32(b, x);
  return Libm(b, "tanhf", "tanh", x);
}

}  // namespace

llvm::Type* LlvmType(llvm::IRBuilderBase& b, DType d) {
  switch (d) {
    case DType::kBool:
      return b.getInt1Ty();
    case DType::kUInt8:
    case DType::kInt8:
      return b.getInt8Ty();
    case DType::kInt16:
      return b.getInt16Ty();
    case DType::kInt32:
      return b.getInt32Ty();
    case DType::kInt64:
      return b.getInt64Ty();
    case DType::kFloat16:
      return b.getHalfTy();
    case DType::kBFloat16:
      return b.getBFloatTy();
    case DType::kFloat32:
      return b.getFloatTy();
    case DType::kFloat64:
      return b.getDoubleTy();
    default:
      return nullptr;
  }
}

llvm::Type* LlvmMemType(llvm::IRBuilderBase& b, DType d) {
  return d == DType::kBool ? b.getInt8Ty() : LlvmType(b, d);
}

llvm::Value* EmitCast(llvm::IRBuilderBase& b, llvm::Value* x, DType from,
                      DType to) {
  if (from == to) return x;
  // float16/bfloat16 convert through float32, as their eager conversions do.
  if (ComputeDType(from) != from) {
    return EmitCast(b, EmitReducedToFloat(b, x, from), DType::kFloat32, to);
  }
  if (ComputeDType(to) != to) {
    return EmitFloatToReduced(b, EmitCast(b, x, from, DType::kFloat32), to);
  }
  llvm::Type* t = LlvmType(b, to);
  if (to == DType::kBool) {
    return IsFloating(from)
               ? b.CreateFCmpUNE(x, FConst(x->getType(), 0.0))
               : b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (IsFloating(from) && IsFloating(to)) return b.CreateFPCast(x, t);
  if (IsFloating(to)) {
    return IsUnsignedInt(from) ? b.CreateUIToFP(x, t) : b.CreateSIToFP(x, t);
  }
  if (IsFloating(from)) {
    // runtime/convert.h: through double, INT64_MIN when out of range or NaN.
    llvm::Value* d = b.CreateFPExt(x, b.getDoubleTy());
    // (Operands that emit go into locals first, left to right, so the IR
    // does not follow the host compiler's argument order.)
    llvm::Value* above_min =
        b.CreateFCmpOGE(d, FConst(d->getType(), -9.2233720368547758e18));
    llvm::Value* below_max =
        b.CreateFCmpOLT(d, FConst(d->getType(), 9.2233720368547758e18));
    llvm::Value* in_range = b.CreateAnd(above_min, below_max);
    llvm::Value* i = b.CreateSelect(in_range, b.CreateFPToSI(d, b.getInt64Ty()),
                                    b.getInt64(INT64_MIN));
    return b.CreateTrunc(i, t);
  }
  return IsUnsignedInt(from) ? b.CreateZExtOrTrunc(x, t)
                             : b.CreateSExtOrTrunc(x, t);
}

absl::StatusOr<llvm::Value*> EmitUnary(llvm::IRBuilderBase& b, UnaryOp op,
                                       DType d, llvm::Value* x) {
  llvm::Type* t = x->getType();
  const bool fp = IsFloating(d);
  auto zero = [&] { return llvm::Constant::getNullValue(t); };
  auto one = [&] { return FConst(t, 1.0); };
  switch (op) {
    case UnaryOp::kNeg:
      return fp ? b.CreateFNeg(x) : b.CreateSub(zero(), x);
    case UnaryOp::kAbs:
      if (fp) return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
      if (IsUnsignedInt(d)) return x;
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse());
    case UnaryOp::kRelu:
      if (IsUnsignedInt(d)) return x;
      return b.CreateSelect(
          fp ? b.CreateFCmpOLT(x, zero()) : b.CreateICmpSLT(x, zero()), zero(),
          x);
    case UnaryOp::kFloor:
      return fp ? b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x) : x;
    case UnaryOp::kCeil:
      return fp ? b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x) : x;
    case UnaryOp::kRound:
      return fp ? b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x) : x;
    case UnaryOp::kTrunc:
      return fp ? b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x) : x;
    case UnaryOp::kSign: {
      if (d == DType::kBool) return x;
      llvm::Value* pos = fp ? b.CreateFCmpOLT(zero(), x)
                            : (IsUnsignedInt(d) ? b.CreateICmpUGT(x, zero())
                                                : b.CreateICmpSGT(x, zero()));
      llvm::Value* neg =
          fp ? b.CreateFCmpOLT(x, zero())
             : (IsUnsignedInt(d) ? b.getFalse() : b.CreateICmpSLT(x, zero()));
      if (fp) {
        llvm::Value* p = b.CreateUIToFP(pos, t);
        return b.CreateFSub(p, b.CreateUIToFP(neg, t));
      }
      llvm::Value* p = b.CreateZExt(pos, t);
      return b.CreateSub(p, b.CreateZExt(neg, t));
    }
    case UnaryOp::kLogicalNot:
      return b.CreateNot(x);
    case UnaryOp::kBitwiseNot:
      return b.CreateNot(x);
    case UnaryOp::kIsNan:
      return fp ? b.CreateFCmpUNO(x, x) : b.getFalse();
    case UnaryOp::kIsInf:
      return fp ? b.CreateFCmpOEQ(
                      b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                      FConst(t, INFINITY))
                : b.getFalse();
    default:
      break;
  }
  if (!fp) {
    return absl::InternalError(
        absl::StrCat(UnaryOpName(op), " of ", DTypeName(d)));
  }
  switch (op) {
    case UnaryOp::kExp:
      return Exp(b, x);
    case UnaryOp::kLog:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::log, x);
    case UnaryOp::kLog1p:
      return Libm(b, "log1pf", "log1p", x);
    case UnaryOp::kLog2:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::log2, x);
    case UnaryOp::kLog10:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::log10, x);
    case UnaryOp::kExpm1:
      return Libm(b, "expm1f", "expm1", x);
    case UnaryOp::kTan:
      return Libm(b, "tanf", "tan", x);
    case UnaryOp::kSinh:
      return Libm(b, "sinhf", "sinh", x);
    case UnaryOp::kCosh:
      return Libm(b, "coshf", "cosh", x);
    case UnaryOp::kAsin:
      return Libm(b, "asinf", "asin", x);
    case UnaryOp::kAcos:
      return Libm(b, "acosf", "acos", x);
    case UnaryOp::kAtan:
      return Libm(b, "atanf", "atan", x);
    case UnaryOp::kAsinh:
      return Libm(b, "asinhf", "asinh", x);
    case UnaryOp::kAcosh:
      return Libm(b, "acoshf", "acosh", x);
    case UnaryOp::kAtanh:
      return Libm(b, "atanhf", "atanh", x);
    case UnaryOp::kSqrt:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case UnaryOp::kRsqrt:
      return b.CreateFDiv(one(),
                          b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case UnaryOp::kReciprocal:
      return b.CreateFDiv(one(), x);
    case UnaryOp::kTanh:
      return Tanh(b, x);
    case UnaryOp::kErf:
      return Libm(b, "erff", "erf", x);
    case UnaryOp::kSin:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x);
    case UnaryOp::kCos:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x);
    case UnaryOp::kSigmoid:
      return b.CreateFDiv(one(), b.CreateFAdd(one(), Exp(b, b.CreateFNeg(x))));
    case UnaryOp::kSilu:
      return b.CreateFDiv(x, b.CreateFAdd(one(), Exp(b, b.CreateFNeg(x))));
    case UnaryOp::kGeluErf: {
      // x * 0.5 * (1 + erf(x * sqrt(1/2))), as the eager kernel rounds it.
      llvm::Value* erf =
          Libm(b, "erff", "erf", b.CreateFMul(x, FConst(t, M_SQRT1_2)));
      llvm::Value* half_x = b.CreateFMul(x, FConst(t, 0.5));
      return b.CreateFMul(half_x, b.CreateFAdd(one(), erf));
    }
    case UnaryOp::kGeluTanh: {
      const double beta = M_SQRT2 * M_2_SQRTPI * 0.5;
      llvm::Value* cube = b.CreateFMul(b.CreateFMul(x, x), x);
      llvm::Value* inner = b.CreateFMul(
          FConst(t, beta),
          b.CreateFAdd(x, b.CreateFMul(FConst(t, 0.044715), cube)));
      llvm::Value* half_x = b.CreateFMul(FConst(t, 0.5), x);
      return b.CreateFMul(half_x, b.CreateFAdd(one(), Tanh(b, inner)));
    }
    default:
      break;
  }
  return absl::InternalError(absl::StrCat("unary op ", UnaryOpName(op)));
}

absl::StatusOr<llvm::Value*> EmitBinary(llvm::IRBuilderBase& b, BinaryOp op,
                                        DType d, llvm::Value* a,
                                        llvm::Value* c) {
  const bool fp = IsFloating(d);
  const bool u = IsUnsignedInt(d);
  switch (op) {
    case BinaryOp::kAdd:
      return fp ? b.CreateFAdd(a, c) : b.CreateAdd(a, c);
    case BinaryOp::kSub:
      return fp ? b.CreateFSub(a, c) : b.CreateSub(a, c);
    case BinaryOp::kMul:
      return fp ? b.CreateFMul(a, c) : b.CreateMul(a, c);
    case BinaryOp::kDiv:
      if (fp) return b.CreateFDiv(a, c);
      break;
    case BinaryOp::kPow:
      if (fp) return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, c);
      break;
    case BinaryOp::kMaximum:
      return b.CreateBinaryIntrinsic(fp  ? llvm::Intrinsic::maximum
                                     : u ? llvm::Intrinsic::umax
                                         : llvm::Intrinsic::smax,
                                     a, c);
    case BinaryOp::kMinimum:
      return b.CreateBinaryIntrinsic(fp  ? llvm::Intrinsic::minimum
                                     : u ? llvm::Intrinsic::umin
                                         : llvm::Intrinsic::smin,
                                     a, c);
    case BinaryOp::kEq:
      return fp ? b.CreateFCmpOEQ(a, c) : b.CreateICmpEQ(a, c);
    case BinaryOp::kNe:
      return fp ? b.CreateFCmpUNE(a, c) : b.CreateICmpNE(a, c);
    case BinaryOp::kLt:
      return fp  ? b.CreateFCmpOLT(a, c)
             : u ? b.CreateICmpULT(a, c)
                 : b.CreateICmpSLT(a, c);
    case BinaryOp::kLe:
      return fp  ? b.CreateFCmpOLE(a, c)
             : u ? b.CreateICmpULE(a, c)
                 : b.CreateICmpSLE(a, c);
    case BinaryOp::kGt:
      return fp  ? b.CreateFCmpOGT(a, c)
             : u ? b.CreateICmpUGT(a, c)
                 : b.CreateICmpSGT(a, c);
    case BinaryOp::kGe:
      return fp  ? b.CreateFCmpOGE(a, c)
             : u ? b.CreateICmpUGE(a, c)
                 : b.CreateICmpSGE(a, c);
    case BinaryOp::kAnd:
      if (!fp) return b.CreateAnd(a, c);
      break;
    case BinaryOp::kOr:
      if (!fp) return b.CreateOr(a, c);
      break;
    case BinaryOp::kXor:
      if (!fp) return b.CreateXor(a, c);
      break;
    case BinaryOp::kFmod:
      if (fp) return b.CreateFRem(a, c);
      break;
    case BinaryOp::kAtan2:
      if (fp) return Libm(b, "atan2f", "atan2", a, c);
      break;
  }
  return absl::InternalError(
      absl::StrCat(BinaryOpName(op), " of ", DTypeName(d)));
}

}  // namespace guardjit
