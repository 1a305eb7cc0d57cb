#include "jit/steps/pointwise_epilogue.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {
namespace {

inline uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// LLVM's llvm.maximum and llvm.minimum with a constant `c` that is not NaN,
// as the compiled kernels compute them: NaN if x is, -0 below +0. Without
// branches, so that the loops below vectorize: at x == c (equal values, or
// zeros of either sign) the AND of the bits is the maximum and the OR the
// minimum.
inline float Maximum(float x, float c) {
  const uint32_t m = x > c ? Bits(x) : Bits(c);
  const uint32_t e = x == c ? (Bits(x) & Bits(c)) : m;
  return FromBits(x != x ? Bits(x) : e);
}

inline float Minimum(float x, float c) {
  const uint32_t m = x < c ? Bits(x) : Bits(c);
  const uint32_t e = x == c ? (Bits(x) | Bits(c)) : m;
  return FromBits(x != x ? Bits(x) : e);
}

// maximum(x, c) and minimum(x, c) where c's zero sign cannot matter: one
// unordered compare and a select (NaN fails x <= c and x >= c, so x, NaN,
// comes out). Exact for a maximum with any c but -0 (at x = +0 it would
// give c) and a minimum with any c but +0.
inline float SimpleMaximum(float x, float c) { return !(x <= c) ? x : c; }
inline float SimpleMinimum(float x, float c) { return !(x >= c) ? x : c; }

// e^x and tanh(x) as jit/llvm/llvm_math.cc emits them for float32 (its
// comments explain the ranges and constants): the same operations and FMAs
// in the same order, written without branches so that the loops vectorize.
inline float ExpF32(float x) {
  const bool underflows = x < -104.0f;
  x = underflows ? 0.0f : x;
  x = x > 100.0f ? 100.0f : x;
  constexpr float kShifter = 12582912.0f + 254.0f;
  const float shifted = std::fma(x, 1.44269504088896341f, kShifter);
  const float neg_n = kShifter - shifted;
  float r = std::fma(neg_n, 0.693359375f, x);
  r = std::fma(neg_n, -2.12194440e-4f, r);
  float p = 0x1.0F9F9Cp-7f;
  p = std::fma(p, r, 0x1.573A1Ap-5f);
  p = std::fma(p, r, 0x1.555A80p-3f);
  p = std::fma(p, r, 0x1.FFFDC6p-2f);
  p = std::fma(p, r, 0x1.FFFFF6p-1f);
  const uint32_t m = Bits(shifted);
  const uint32_t m_half = m >> 1;
  const float s1 = FromBits(m_half << 23);
  const float s2 = FromBits((m - m_half) << 23);
  const float e = std::fma(r * s1, p, s1) * s2;
  return underflows ? 0.0f : e;
}

inline float TanhF32(float x) {
  const float ax = std::fabs(x);
  const float u = x * x;
  float p = -0x1.7507acp-8f;
  p = std::fma(p, u, 0x1.51f0f0p-6f);
  p = std::fma(p, u, -0x1.b83322p-5f);
  p = std::fma(p, u, 0x1.1106d6p-3f);
  p = std::fma(p, u, -0x1.555532p-2f);
  const float small = std::fma(ax * u, p, ax);
  const float e = ExpF32(ax * 2.0f);
  const float large = 1.0f - 2.0f / (e + 1.0f);
  return std::copysign(ax < 0.625f ? small : large, x);
}

// The loop IR's gelu_tanh (jit/llvm/llvm_element_ops.cc).
inline float GeluTanh(float x) {
  constexpr float kBeta =
      static_cast<float>(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float cube = (x * x) * x;
  const float inner = kBeta * (x + 0.044715f * cube);
  return (0.5f * x) * (1.0f + TanhF32(inner));
}

// One loop per activation, residual and constants, so each vectorizes on
// its own; inlined into one function per instruction set below.
template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
inline __attribute__((always_inline)) void Loop(const float* in,
                                                const float* residual,
                                                float* out, int64_t n, float lo,
                                                float hi) {
  using Act = PointwiseEpilogue::Act;
  for (int64_t i = 0; i < n; ++i) {
    float x = in[i];
    if constexpr (kResidual) x += residual[i];
    if constexpr (kAct == Act::kRelu) x = x < 0.0f ? 0.0f : x;
    if constexpr (kAct == Act::kMaximum) {
      x = kSimple ? SimpleMaximum(x, lo) : Maximum(x, lo);
    }
    if constexpr (kAct == Act::kClamp) {
      x = kSimple ? SimpleMinimum(SimpleMaximum(x, lo), hi)
                  : Minimum(Maximum(x, lo), hi);
    }
    if constexpr (kAct == Act::kGeluTanh) x = GeluTanh(x);
    out[i] = x;
  }
}

#if defined(__x86_64__)
template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
__attribute__((target("avx512f,fma"))) void LoopAvx512(const float* in,
                                                       const float* residual,
                                                       float* out, int64_t n,
                                                       float lo, float hi) {
  Loop<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
}

template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
__attribute__((target("avx2,fma"))) void LoopAvx2(const float* in,
                                                  const float* residual,
                                                  float* out, int64_t n,
                                                  float lo, float hi) {
  Loop<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
}

const bool kHasAvx512 =
    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
const bool kHasAvx2 =
    __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif

// The loop in `isa`'s vectors (kBest: the widest the host has; the
// baseline's are SSE2 on x86-64).
template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
void Run(const float* in, const float* residual, float* out, int64_t n,
         float lo, float hi, PointwiseIsa isa) {
#if defined(__x86_64__)
  if (isa == PointwiseIsa::kAvx512 ||
      (isa == PointwiseIsa::kBest && kHasAvx512)) {
    return LoopAvx512<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
  }
  if (isa == PointwiseIsa::kAvx2 || (isa == PointwiseIsa::kBest && kHasAvx2)) {
    return LoopAvx2<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
  }
#endif
  Loop<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
}

template <bool kResidual>
void RunAct(const PointwiseEpilogue& e, const float* in, const float* residual,
            float* out, int64_t n, PointwiseIsa isa) {
  using Act = PointwiseEpilogue::Act;
  const bool simple =
      !(e.lo == 0 && std::signbit(e.lo)) &&
      (e.act != Act::kClamp || !(e.hi == 0 && !std::signbit(e.hi)));
  switch (e.act) {
    case Act::kNone:
      Run<Act::kNone, kResidual, true>(in, residual, out, n, e.lo, e.hi, isa);
      return;
    case Act::kRelu:
      Run<Act::kRelu, kResidual, true>(in, residual, out, n, e.lo, e.hi, isa);
      return;
    case Act::kGeluTanh:
      Run<Act::kGeluTanh, kResidual, true>(in, residual, out, n, e.lo, e.hi,
                                           isa);
      return;
    case Act::kMaximum:
      if (simple) {
        Run<Act::kMaximum, kResidual, true>(in, residual, out, n, e.lo, e.hi,
                                            isa);
      } else {
        Run<Act::kMaximum, kResidual, false>(in, residual, out, n, e.lo, e.hi,
                                             isa);
      }
      return;
    case Act::kClamp:
      if (simple) {
        Run<Act::kClamp, kResidual, true>(in, residual, out, n, e.lo, e.hi,
                                          isa);
      } else {
        Run<Act::kClamp, kResidual, false>(in, residual, out, n, e.lo, e.hi,
                                           isa);
      }
      return;
  }
}

}  // namespace

std::string PointwiseEpilogue::ToString() const {
  std::vector<std::string> ops;
  if (residual_param >= 0) {
    ops.push_back(residual2_param >= 0 ? "add of two residuals"
                                       : "residual add");
  }
  switch (act) {
    case Act::kNone:
      break;
    case Act::kRelu:
      ops.push_back("relu");
      break;
    case Act::kMaximum:
      ops.push_back(absl::StrCat("maximum with ", lo));
      break;
    case Act::kClamp:
      ops.push_back(absl::StrCat("clamp to [", lo, ", ", hi, "]"));
      break;
    case Act::kGeluTanh:
      ops.push_back("gelu_tanh");
      break;
  }
  return ops.empty() ? "a copy" : absl::StrJoin(ops, " + ");
}

std::optional<PointwiseEpilogue> MatchPointwiseActivation(const ValueExpr& v,
                                                          ValueExpr* x) {
  using Act = PointwiseEpilogue::Act;
  PointwiseEpilogue ops;
  // The non-constant operand of max/min(a, const) and the constant.
  const auto with_const = [](const ValueExpr& e, BinaryOp op, ValueExpr* arg,
                             double* c) {
    if (e.kind() != ValueExpr::Kind::kBinary || e.binary_op() != op ||
        e.dtype() != DType::kFloat32) {
      return false;
    }
    for (int i = 0; i < 2; ++i) {
      const ValueExpr& k = e.operand(1 - i);
      if (k.kind() == ValueExpr::Kind::kConst && !k.is_int_const()) {
        *arg = e.operand(i);
        *c = k.float_value();
        return true;
      }
    }
    return false;
  };
  if (v.kind() == ValueExpr::Kind::kUnary && v.unary_op() == UnaryOp::kRelu &&
      v.dtype() == DType::kFloat32) {
    *x = v.operand(0);
    ops.act = Act::kRelu;
    return ops;
  }
  if (v.kind() == ValueExpr::Kind::kUnary &&
      v.unary_op() == UnaryOp::kGeluTanh && v.dtype() == DType::kFloat32 &&
      v.operand(0).dtype() == DType::kFloat32) {
    *x = v.operand(0);
    ops.act = Act::kGeluTanh;
    return ops;
  }
  ValueExpr inner;
  double lo = 0, hi = 0;
  if (with_const(v, BinaryOp::kMinimum, &inner, &hi) &&
      with_const(inner, BinaryOp::kMaximum, x, &lo) && !std::isnan(lo) &&
      !std::isnan(hi)) {
    ops.act = Act::kClamp;
    ops.lo = static_cast<float>(lo);
    ops.hi = static_cast<float>(hi);
    return ops;
  }
  if (with_const(v, BinaryOp::kMaximum, x, &lo) && !std::isnan(lo)) {
    ops.act = Act::kMaximum;
    ops.lo = static_cast<float>(lo);
    return ops;
  }
  return std::nullopt;
}

bool PointwiseEpiloguesEnabled() {
  const char* env = std::getenv("GJ_POINTWISE_EPILOGUES");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

bool HostHasPointwiseIsa(PointwiseIsa isa) {
  switch (isa) {
    case PointwiseIsa::kBest:
    case PointwiseIsa::kBaseline:
      return true;
#if defined(__x86_64__)
    case PointwiseIsa::kAvx512:
      return kHasAvx512;
    case PointwiseIsa::kAvx2:
      return kHasAvx2;
#else
    default:
      return false;
#endif
  }
  return false;
}

void RunPointwiseEpilogue(const PointwiseEpilogue& e, const float* in,
                          const float* residual, float* out, int64_t n,
                          PointwiseIsa isa) {
  if (residual != nullptr) {
    RunAct<true>(e, in, residual, out, n, isa);
  } else {
    RunAct<false>(e, in, residual, out, n, isa);
  }
}

}  // namespace guardjit
