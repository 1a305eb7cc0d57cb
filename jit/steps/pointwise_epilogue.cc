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
    out[i] = x;
  }
}

#if defined(__x86_64__)
template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
__attribute__((target("avx512f"))) void LoopAvx512(const float* in,
                                                   const float* residual,
                                                   float* out, int64_t n,
                                                   float lo, float hi) {
  Loop<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
}

template <PointwiseEpilogue::Act kAct, bool kResidual, bool kSimple>
__attribute__((target("avx2"))) void LoopAvx2(const float* in,
                                              const float* residual, float* out,
                                              int64_t n, float lo, float hi) {
  Loop<kAct, kResidual, kSimple>(in, residual, out, n, lo, hi);
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
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
  if (residual_param >= 0) ops.push_back("residual add");
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
