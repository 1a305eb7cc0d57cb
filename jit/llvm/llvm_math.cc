#include "jit/llvm/llvm_math.h"

#include "llvm/IR/Intrinsics.h"

namespace guardjit {

// e^x = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two
// parts, Cody-Waite), e^r ~= 1 + r p(r) with p the degree-4 minimax
// polynomial of XNNPACK's rr2_p5 expf, evaluated with FMAs.
//  - Below -104 (and at -inf) e^x < 2^-150 rounds to 0: those lanes compute
//    e^0 and are set to 0 at the end. Computing them would underflow through
//    the denormal range, and on x86 every multiply whose result underflows
//    takes a microcode assist (about 150 cycles without FTZ): a causal
//    softmax, half its scores -inf, ran 4x slower than a plain one. Genuine
//    denormal results (x in (-104, -87.3)) still take the assist, correctly
//    rounded.
//  - x is clamped to at most 100, where the scale overflows to inf on its
//    own. NaN passes both compares (they are false) and stays NaN.
//  - n is rounded by adding the shifter 1.5 * 2^23 + 254 (an integer below
//    2^24, so the sum rounds to an integer): no float-to-int conversion, and
//    nothing is undefined for NaN. Its bit pattern m is 0x4b400000 + 254 + n,
//    and 0x4b400000 is a multiple of 2^9, so the low 9 bits of m >> 1 are
//    127 + (n >> 1) and those of m - (m >> 1) are 127 + n - (n >> 1): shifted
//    left by 23 they are the float32 scales s1 = 2^(n >> 1) and
//    s2 = 2^(n - (n >> 1)) (both normal for n in [-150, 145]).
//  - 2^n is applied as s1 then s2, so results down to the smallest denormal
//    are rounded once, right.
llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Type* i32 = b.getInt32Ty();
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(t)) {
    i32 = llvm::VectorType::get(i32, v->getElementCount());
  }
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* add) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {a, m, add});
  };
  llvm::Value* zero = c(0.0);
  llvm::Value* hi = c(100.0);
  llvm::Value* underflows = b.CreateFCmpOLT(x, c(-104.0));
  x = b.CreateSelect(underflows, zero, x);
  x = b.CreateSelect(b.CreateFCmpOGT(x, hi), hi, x);
  llvm::Value* shifter = c(12582912.0 + 254.0);
  llvm::Value* shifted = fma(x, c(1.44269504088896341), shifter);
  llvm::Value* neg_n = b.CreateFSub(shifter, shifted);
  llvm::Value* r = fma(neg_n, c(0.693359375), x);
  r = fma(neg_n, c(-2.12194440e-4), r);
  llvm::Value* p = c(0x1.0F9F9Cp-7);
  for (double k :
       {0x1.573A1Ap-5, 0x1.555A80p-3, 0x1.FFFDC6p-2, 0x1.FFFFF6p-1}) {
    p = fma(p, r, c(k));
  }
  llvm::Value* m = b.CreateBitCast(shifted, i32);
  llvm::Value* m_half = b.CreateLShr(m, 1);
  llvm::Value* s1 = b.CreateBitCast(b.CreateShl(m_half, 23), t);
  llvm::Value* s2 = b.CreateBitCast(b.CreateShl(b.CreateSub(m, m_half), 23), t);
  return b.CreateSelect(underflows, zero,
                        b.CreateFMul(fma(b.CreateFMul(r, s1), p, s1), s2));
}

// Two ranges, both evaluated (a select picks one, so the loop vectorizes):
//  - |x| < 0.625: |x| + |x|^3 p(x^2), p the degree-4 least-squares fit (relative
//    error, Chebyshev nodes) of (tanh(x)/x - 1)/x^2, with FMAs: 1 ulp.
//  - otherwise: 1 - 2 / (e^(2|x|) + 1); e^(2|x|) >= 3.49
//    there, so the subtraction loses nothing. Past |x| = 50 the exponential
//    overflows to inf and the result is exactly 1. NaN takes this branch
//    (the compare is false) and stays NaN.
// The result takes the sign of x (tanh is odd; -0 stays -0).
llvm::Value* EmitTanhF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* add) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {a, m, add});
  };
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* u = b.CreateFMul(x, x);
  llvm::Value* p = c(-0x1.7507acp-8);
  for (double k :
       {0x1.51f0f0p-6, -0x1.b83322p-5, 0x1.1106d6p-3, -0x1.555532p-2}) {
    p = fma(p, u, c(k));
  }
  llvm::Value* small = fma(b.CreateFMul(ax, u), p, ax);
  llvm::Value* e = EmitExpF32(b, b.CreateFMul(ax, c(2.0)));
  llvm::Value* large =
      b.CreateFSub(c(1.0), b.CreateFDiv(c(2.0), b.CreateFAdd(e, c(1.0))));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(ax, c(0.625)), small, large);
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

// bfloat16 converts with integer operations (core/half.h's rounding), so no
// target needs bfloat16 conversion instructions or libcalls; float16 uses
// fpext/fptrunc (F16C on x86 hosts that have it).
llvm::Value* EmitReducedToFloat(llvm::IRBuilderBase& b, llvm::Value* x,
                                DType from) {
  if (from == DType::kFloat16) return b.CreateFPExt(x, b.getFloatTy());
  llvm::Value* bits =
      b.CreateZExt(b.CreateBitCast(x, b.getInt16Ty()), b.getInt32Ty());
  return b.CreateBitCast(b.CreateShl(bits, 16), b.getFloatTy());
}

llvm::Value* EmitFloatToReduced(llvm::IRBuilderBase& b, llvm::Value* x,
                                DType to) {
  if (to == DType::kFloat16) return b.CreateFPTrunc(x, b.getHalfTy());
  llvm::Value* bits = b.CreateBitCast(x, b.getInt32Ty());
  llvm::Value* high = b.CreateLShr(bits, 16);
  llvm::Value* bias =
      b.CreateAdd(b.getInt32(0x7fff), b.CreateAnd(high, b.getInt32(1)));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, bias), 16);
  llvm::Value* quiet_nan = b.CreateOr(high, b.getInt32(0x40));
  llvm::Value* result =
      b.CreateSelect(b.CreateFCmpUNO(x, x), quiet_nan, rounded);
  return b.CreateBitCast(b.CreateTrunc(result, b.getInt16Ty()),
                         b.getBFloatTy());
}

}  // namespace guardjit
