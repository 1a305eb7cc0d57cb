#include "runtime/simt/simt_emulation_header.h"

#include <cstddef>

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

// Written to a file next to the source that includes it. No system header:
// <math.h> alone would cost more compile time than a module's kernels (the
// math functions are declared here over the compiler's builtins, which call
// libm).
constexpr char kHeader[] = R"gj_simt(
// guardjit SIMT emulation: CUDA C compiled by a host C++ compiler, run by
// guardjit's launcher (runtime/simt/simt_emulator.h) with each block's threads
// as real threads. Generated code must stay inside the subset modelled here:
// - qualifiers __global__, __device__, __host__, __forceinline__,
//   __noinline__, __restrict__, __launch_bounds__(...), __align__(n);
//   __shared__ variables of static size (they are `static`: the launcher runs
//   a module's launches one at a time and a launch's blocks one after another,
//   so one copy serves every block; no extern __shared__);
// - threadIdx, blockIdx, blockDim, gridDim (.x/.y/.z, unsigned), warpSize;
//   __syncthreads(), __syncthreads_count/_and/_or, __syncwarp(mask),
//   __threadfence(), __threadfence_block();
// - __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync (int,
//   unsigned, long, unsigned long, long long, unsigned long long, float,
//   double; width a power of two <= 32), __ballot_sync, __any_sync,
//   __all_sync; the lane is the linear thread index (x + y*bx + z*bx*by) % 32;
// - atomicAdd, atomicSub, atomicExch, atomicMin, atomicMax, atomicAnd,
//   atomicOr, atomicXor, atomicCAS with CUDA's overloads, on any memory;
// - math as host libm calls (precise, never fast-math), float (expf) and
//   double names plus CUDA's float overloads of the double names: exp, exp2,
//   expm1, log, log2, log10, log1p, sqrt, rsqrt, cbrt, sin, cos, tan, asin,
//   acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh, erf, erfc,
//   lgamma, tgamma, floor, ceil, trunc, round, rint, nearbyint, fabs, pow,
//   fmod, remainder, fmin, fmax, fdim, hypot, copysign, fma; isnan, isinf,
//   isfinite, signbit; CUDA's min/max overloads; __ldg; __int_as_float,
//   __float_as_int, __uint_as_float, __float_as_uint, __longlong_as_double,
//   __double_as_longlong;
// - __half and __nv_bfloat16 (2-byte, CUDA's bit layout) with conversions
//   only: __half2float, __float2half(_rn), __bfloat162float,
//   __float2bfloat16(_rn) (to nearest even, NaN to 0x7fff as CUDA does),
//   __half_as_ushort, __ushort_as_half, __bfloat16_as_ushort,
//   __ushort_as_bfloat16;
// - vector types float2/4, double2, int2/4, uint2/4, longlong2 with make_*;
//   alignas and reinterpreting casts of aligned structs (the generator's
//   gj_vec vectors); gj_simt_misaligned/gj_simt_poisoned model the device's
//   fault on a misaligned vector access as poisoned data (see below).
// A thread that returns leaves its block's and warp's barriers, as exited
// threads do on the GPU; a warp collective waits for the lanes of its mask
// that exist and have not returned, and lanes passing disjoint masks complete
// separately (lanes passing overlapping but different masks deadlock).
// Not modelled: memory ordering between threads other than through
// barriers, shuffles and atomics; timing; warp divergence and independent
// thread scheduling beyond that (warp-synchronous code without __syncwarp
// is wrong here as on Volta+); textures and surfaces, dynamic parallelism,
// cooperative groups. Code outside the subset fails to compile; the
// generator guards its CUDA #includes with #ifndef GJ_SIMT_EMULATION.
#ifndef GJ_SIMT_EMULATION
#define GJ_SIMT_EMULATION 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static

struct uint3 {
  unsigned x, y, z;
};

// The launcher's contract (SimtThreadState and SimtOps in guardjit's
// runtime/simt/simt_emulation_header.h); the entry points appended to the
// source check its size and offsets.
namespace gj_simt {
struct Ops;
struct State {
  uint3 thread_idx, block_idx, block_dim, grid_dim;
  unsigned lane;
  unsigned reserved;
  void* host;
  const Ops* ops;
};
struct Ops {
  int (*sync_threads)(State* state, int op, int predicate);
  unsigned long long (*warp)(State* state, int op, unsigned mask,
                             unsigned long long value, int src_lane);
};
enum : int { kSyncCount = 0, kSyncAnd = 1, kSyncOr = 2 };
enum : int { kWarpSync = 0, kWarpShuffle = 1, kWarpBallot = 2 };

static thread_local State* self;

template <unsigned... I>
struct Seq {};
template <unsigned N, unsigned... I>
struct MakeSeq : MakeSeq<N - 1, N - 1, I...> {};
template <unsigned... I>
struct MakeSeq<0, I...> {
  using type = Seq<I...>;
};
template <class... A, unsigned... I>
inline void Call(void (*kernel)(A...), void* const* params, Seq<I...>) {
  kernel(*static_cast<A*>(params[I])...);
}
// The generated entry point of each kernel: binds the thread's state and
// passes the kernel its arguments from cuLaunchKernel-style pointers.
template <class... A>
inline void Invoke(State* state, void (*kernel)(A...), void* const* params) {
  self = state;
  Call(kernel, params, typename MakeSeq<sizeof...(A)>::type{});
}
template <class... A>
constexpr int Arity(void (*)(A...)) {
  return sizeof...(A);
}

template <class T>
inline unsigned long long ToBits(T v) {
  unsigned long long b = 0;
  __builtin_memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T FromBits(unsigned long long b) {
  T v;
  __builtin_memcpy(&v, &b, sizeof(T));
  return v;
}
template <class To, class From>
inline To BitCast(From v) {
  static_assert(sizeof(To) == sizeof(From), "size");
  To t;
  __builtin_memcpy(&t, &v, sizeof(To));
  return t;
}
inline unsigned long long Warp(int op, unsigned mask, unsigned long long v,
                               int src) {
  return self->ops->warp(self, op, mask, v, src);
}
template <class T>
inline T Shuffle(unsigned mask, T v, int src) {
  return FromBits<T>(Warp(kWarpShuffle, mask, ToBits(v), src));
}
inline int Lane() { return static_cast<int>(self->lane); }
// warpSize: not a constant expression, as on the GPU.
inline int WarpSize() { return 32; }
}  // namespace gj_simt

#define threadIdx (static_cast<const ::uint3&>(::gj_simt::self->thread_idx))
#define blockIdx (static_cast<const ::uint3&>(::gj_simt::self->block_idx))
#define blockDim (static_cast<const ::uint3&>(::gj_simt::self->block_dim))
#define gridDim (static_cast<const ::uint3&>(::gj_simt::self->grid_dim))
#define warpSize (::gj_simt::WarpSize())

inline void __syncthreads() {
  ::gj_simt::self->ops->sync_threads(::gj_simt::self, ::gj_simt::kSyncCount, 0);
}
inline int __syncthreads_count(int p) {
  return ::gj_simt::self->ops->sync_threads(::gj_simt::self,
                                            ::gj_simt::kSyncCount, p);
}
inline int __syncthreads_and(int p) {
  return ::gj_simt::self->ops->sync_threads(::gj_simt::self,
                                            ::gj_simt::kSyncAnd, p);
}
inline int __syncthreads_or(int p) {
  return ::gj_simt::self->ops->sync_threads(::gj_simt::self, ::gj_simt::kSyncOr,
                                            p);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::gj_simt::Warp(::gj_simt::kWarpSync, mask, 0, ::gj_simt::Lane());
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// Source lanes as PTX's shfl computes them; a lane outside the thread's
// segment of `width` lanes reads its own value.
#define GJ_SIMT_SHUFFLES(T)                                                 \
  inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {       \
    const int lane = ::gj_simt::Lane();                                     \
    return ::gj_simt::Shuffle(mask, v,                                      \
                              (lane & ~(width - 1)) | (src & (width - 1))); \
  }                                                                         \
  inline T __shfl_up_sync(unsigned mask, T v, unsigned delta,               \
                          int width = 32) {                                 \
    const int lane = ::gj_simt::Lane();                                     \
    const bool in = (lane & (width - 1)) >= static_cast<int>(delta);        \
    return ::gj_simt::Shuffle(mask, v,                                      \
                              in ? lane - static_cast<int>(delta) : lane);  \
  }                                                                         \
  inline T __shfl_down_sync(unsigned mask, T v, unsigned delta,             \
                            int width = 32) {                               \
    const int lane = ::gj_simt::Lane();                                     \
    const bool in =                                                         \
        (lane & (width - 1)) + delta < static_cast<unsigned>(width);        \
    return ::gj_simt::Shuffle(mask, v,                                      \
                              in ? lane + static_cast<int>(delta) : lane);  \
  }                                                                         \
  inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask,               \
                           int width = 32) {                                \
    const int lane = ::gj_simt::Lane();                                     \
    const int src = lane ^ lane_mask;                                       \
    return ::gj_simt::Shuffle(mask, v,                                      \
                              src <= (lane | (width - 1)) ? src : lane);    \
  }
GJ_SIMT_SHUFFLES(int)
GJ_SIMT_SHUFFLES(unsigned)
GJ_SIMT_SHUFFLES(long)
GJ_SIMT_SHUFFLES(unsigned long)
GJ_SIMT_SHUFFLES(long long)
GJ_SIMT_SHUFFLES(unsigned long long)
GJ_SIMT_SHUFFLES(float)
GJ_SIMT_SHUFFLES(double)
#undef GJ_SIMT_SHUFFLES

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return static_cast<unsigned>(::gj_simt::Warp(
      ::gj_simt::kWarpBallot, mask, predicate != 0, ::gj_simt::Lane()));
}
inline int __any_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) != 0;
}
// True when every lane that took part (mask's lanes that have not exited)
// had a non-zero predicate.
inline int __all_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate == 0) == 0;
}

// Atomics: CUDA's overloads as host atomic read-modify-writes.
namespace gj_simt {
template <class T, class F>
inline T AtomicUpdate(T* address, F update) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, true,
                                      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return old;
}
}  // namespace gj_simt
#define GJ_SIMT_FETCH(name, builtin, T)           \
  inline T name(T* address, T v) {                \
    return builtin(address, v, __ATOMIC_SEQ_CST); \
  }
#define GJ_SIMT_MINMAX_ATOMICS(T)                                       \
  inline T atomicMin(T* address, T v) {                                 \
    return ::gj_simt::AtomicUpdate(address,                             \
                                   [v](T o) { return v < o ? v : o; }); \
  }                                                                     \
  inline T atomicMax(T* address, T v) {                                 \
    return ::gj_simt::AtomicUpdate(address,                             \
                                   [v](T o) { return v > o ? v : o; }); \
  }
#define GJ_SIMT_INT_ATOMICS(T)                                                 \
  GJ_SIMT_FETCH(atomicAdd, __atomic_fetch_add, T)                              \
  GJ_SIMT_FETCH(atomicAnd, __atomic_fetch_and, T)                              \
  GJ_SIMT_FETCH(atomicOr, __atomic_fetch_or, T)                                \
  GJ_SIMT_FETCH(atomicXor, __atomic_fetch_xor, T)                              \
  GJ_SIMT_FETCH(atomicExch, __atomic_exchange_n, T)                            \
  GJ_SIMT_MINMAX_ATOMICS(T)                                                    \
  inline T atomicCAS(T* address, T compare, T v) {                             \
    __atomic_compare_exchange_n(address, &compare, v, false, __ATOMIC_SEQ_CST, \
                                __ATOMIC_SEQ_CST);                             \
    return compare;                                                            \
  }
GJ_SIMT_INT_ATOMICS(int)
GJ_SIMT_INT_ATOMICS(unsigned)
GJ_SIMT_INT_ATOMICS(unsigned long long)
GJ_SIMT_FETCH(atomicSub, __atomic_fetch_sub, int)
GJ_SIMT_FETCH(atomicSub, __atomic_fetch_sub, unsigned)
GJ_SIMT_MINMAX_ATOMICS(long long)
#define GJ_SIMT_FLOAT_ATOMICS(T)                                         \
  inline T atomicAdd(T* address, T v) {                                  \
    return ::gj_simt::AtomicUpdate(address, [v](T o) { return o + v; }); \
  }
GJ_SIMT_FLOAT_ATOMICS(float)
GJ_SIMT_FLOAT_ATOMICS(double)
inline float atomicExch(float* address, float v) {
  float old;
  __atomic_exchange(address, &v, &old, __ATOMIC_SEQ_CST);
  return old;
}
#undef GJ_SIMT_FETCH
#undef GJ_SIMT_MINMAX_ATOMICS
#undef GJ_SIMT_INT_ATOMICS
#undef GJ_SIMT_FLOAT_ATOMICS

// Math: the precise CUDA functions as host libm calls, float and double,
// with CUDA's float overloads of the double names. No <math.h>: it would
// cost more compile time than the kernels themselves.
#define GJ_SIMT_MATH1(fn)                                      \
  inline float fn##f(float x) { return __builtin_##fn##f(x); } \
  inline float fn(float x) { return __builtin_##fn##f(x); }    \
  inline double fn(double x) { return __builtin_##fn(x); }
#define GJ_SIMT_MATH2(fn)                                                  \
  inline float fn##f(float x, float y) { return __builtin_##fn##f(x, y); } \
  inline float fn(float x, float y) { return __builtin_##fn##f(x, y); }    \
  inline double fn(double x, double y) { return __builtin_##fn(x, y); }
GJ_SIMT_MATH1(exp)
GJ_SIMT_MATH1(exp2)
GJ_SIMT_MATH1(expm1)
GJ_SIMT_MATH1(log)
GJ_SIMT_MATH1(log2)
GJ_SIMT_MATH1(log10)
GJ_SIMT_MATH1(log1p)
GJ_SIMT_MATH1(sqrt)
GJ_SIMT_MATH1(cbrt)
GJ_SIMT_MATH1(sin)
GJ_SIMT_MATH1(cos)
GJ_SIMT_MATH1(tan)
GJ_SIMT_MATH1(asin)
GJ_SIMT_MATH1(acos)
GJ_SIMT_MATH1(atan)
GJ_SIMT_MATH1(sinh)
GJ_SIMT_MATH1(cosh)
GJ_SIMT_MATH1(tanh)
GJ_SIMT_MATH1(asinh)
GJ_SIMT_MATH1(acosh)
GJ_SIMT_MATH1(atanh)
GJ_SIMT_MATH1(erf)
GJ_SIMT_MATH1(erfc)
GJ_SIMT_MATH1(lgamma)
GJ_SIMT_MATH1(tgamma)
GJ_SIMT_MATH1(floor)
GJ_SIMT_MATH1(ceil)
GJ_SIMT_MATH1(trunc)
GJ_SIMT_MATH1(round)
GJ_SIMT_MATH1(rint)
GJ_SIMT_MATH1(nearbyint)
GJ_SIMT_MATH1(fabs)
GJ_SIMT_MATH2(pow)
GJ_SIMT_MATH2(fmod)
GJ_SIMT_MATH2(remainder)
GJ_SIMT_MATH2(fmin)
GJ_SIMT_MATH2(fmax)
GJ_SIMT_MATH2(fdim)
GJ_SIMT_MATH2(atan2)
GJ_SIMT_MATH2(hypot)
GJ_SIMT_MATH2(copysign)
#undef GJ_SIMT_MATH1
#undef GJ_SIMT_MATH2
inline float fmaf(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
inline float fma(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
inline double fma(double x, double y, double z) {
  return __builtin_fma(x, y, z);
}
inline float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
inline float rsqrt(float x) { return 1.0f / __builtin_sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
#define GJ_SIMT_CLASSIFY(T)                                   \
  inline bool isnan(T x) { return __builtin_isnan(x); }       \
  inline bool isinf(T x) { return __builtin_isinf(x); }       \
  inline bool isfinite(T x) { return __builtin_isfinite(x); } \
  inline bool signbit(T x) { return __builtin_signbit(x); }
GJ_SIMT_CLASSIFY(float)
GJ_SIMT_CLASSIFY(double)
#undef GJ_SIMT_CLASSIFY

// CUDA's min/max overloads (mixed signedness gives the unsigned type).
#define GJ_SIMT_MINMAX(R, A, B)                                       \
  inline R min(A a, B b) {                                            \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)  \
                                                 : static_cast<R>(b); \
  }                                                                   \
  inline R max(A a, B b) {                                            \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)  \
                                                 : static_cast<R>(b); \
  }
GJ_SIMT_MINMAX(int, int, int)
GJ_SIMT_MINMAX(unsigned, unsigned, unsigned)
GJ_SIMT_MINMAX(unsigned, int, unsigned)
GJ_SIMT_MINMAX(unsigned, unsigned, int)
GJ_SIMT_MINMAX(long, long, long)
GJ_SIMT_MINMAX(unsigned long, unsigned long, unsigned long)
GJ_SIMT_MINMAX(unsigned long, long, unsigned long)
GJ_SIMT_MINMAX(unsigned long, unsigned long, long)
GJ_SIMT_MINMAX(long long, long long, long long)
GJ_SIMT_MINMAX(unsigned long long, unsigned long long, unsigned long long)
GJ_SIMT_MINMAX(unsigned long long, long long, unsigned long long)
GJ_SIMT_MINMAX(unsigned long long, unsigned long long, long long)
#undef GJ_SIMT_MINMAX
inline float min(float a, float b) { return __builtin_fminf(a, b); }
inline float max(float a, float b) { return __builtin_fmaxf(a, b); }
inline double min(double a, double b) { return __builtin_fmin(a, b); }
inline double max(double a, double b) { return __builtin_fmax(a, b); }
inline double min(float a, double b) { return __builtin_fmin(a, b); }
inline double max(float a, double b) { return __builtin_fmax(a, b); }
inline double min(double a, float b) { return __builtin_fmin(a, b); }
inline double max(double a, float b) { return __builtin_fmax(a, b); }

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
inline float __int_as_float(int x) { return ::gj_simt::BitCast<float>(x); }
inline int __float_as_int(float x) { return ::gj_simt::BitCast<int>(x); }
inline float __uint_as_float(unsigned x) {
  return ::gj_simt::BitCast<float>(x);
}
inline unsigned __float_as_uint(float x) {
  return ::gj_simt::BitCast<unsigned>(x);
}
inline double __longlong_as_double(long long x) {
  return ::gj_simt::BitCast<double>(x);
}
inline long long __double_as_longlong(double x) {
  return ::gj_simt::BitCast<long long>(x);
}

// 16-bit floats: storage and conversions, rounding to nearest even; a NaN
// becomes CUDA's canonical NaN 0x7fff.
struct __align__(2) __half {
  unsigned short __x;
};
struct __align__(2) __nv_bfloat16 {
  unsigned short __x;
};
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short x) { return __half{x}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) {
  return __nv_bfloat16{x};
}
inline float __half2float(__half h) {
  const unsigned sign = static_cast<unsigned>(h.__x & 0x8000u) << 16;
  const unsigned exponent = (h.__x >> 10) & 0x1fu;
  const unsigned mantissa = h.__x & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact
    const float v = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign != 0 ? -v : v;
  }
  const unsigned e = exponent == 31 ? 255u : exponent + 112u;
  return ::gj_simt::BitCast<float>(sign | (e << 23) | (mantissa << 13));
}
inline __half __float2half_rn(float f) {
  const unsigned u = ::gj_simt::BitCast<unsigned>(f);
  const unsigned sign = (u >> 16) & 0x8000u;
  const unsigned a = u & 0x7fffffffu;
  unsigned h;
  if (a > 0x7f800000u) {
    h = 0x7fffu;
  } else if (a >= 0x477ff000u) {  // 65520 and up round to infinity
    h = sign | 0x7c00u;
  } else if (a >= 0x38800000u) {  // normal: rebias, round the 13 dropped bits
    h = sign | ((a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13);
  } else if (a <= 0x33000000u) {  // up to 2^-25 (a tie, to even): zero
    h = sign;
  } else {  // subnormal: the 24-bit significand shifted to units of 2^-24
    const unsigned shift = 126u - (a >> 23);
    const unsigned m = (a & 0x7fffffu) | 0x800000u;
    const unsigned rest = m & ((1u << shift) - 1u);
    const unsigned halfway = 1u << (shift - 1u);
    unsigned r = m >> shift;
    r += rest > halfway || (rest == halfway && (r & 1u) != 0);
    h = sign | r;
  }
  return __half{static_cast<unsigned short>(h)};
}
inline __half __float2half(float f) { return __float2half_rn(f); }
inline float __bfloat162float(__nv_bfloat16 b) {
  return ::gj_simt::BitCast<float>(static_cast<unsigned>(b.__x) << 16);
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  const unsigned u = ::gj_simt::BitCast<unsigned>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{0x7fffu};
  const unsigned rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{static_cast<unsigned short>(rounded >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float f) {
  return __float2bfloat16_rn(f);
}

#define GJ_SIMT_VECTOR2(T, name, align) \
  struct __align__(align) name {        \
    T x, y;                             \
  };                                    \
  inline name make_##name(T x, T y) { return name{x, y}; }
#define GJ_SIMT_VECTOR4(T, name, align) \
  struct __align__(align) name {        \
    T x, y, z, w;                       \
  };                                    \
  inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }
GJ_SIMT_VECTOR2(float, float2, 8)
GJ_SIMT_VECTOR4(float, float4, 16)
GJ_SIMT_VECTOR2(double, double2, 16)
GJ_SIMT_VECTOR2(int, int2, 8)
GJ_SIMT_VECTOR4(int, int4, 16)
GJ_SIMT_VECTOR2(unsigned, uint2, 8)
GJ_SIMT_VECTOR4(unsigned, uint4, 16)
GJ_SIMT_VECTOR2(long long, longlong2, 16)
#undef GJ_SIMT_VECTOR2
#undef GJ_SIMT_VECTOR4

// Vector accesses (the CUDA generator's gj_vload/gj_vstore) need an address
// aligned to the vector's size: a device faults ("misaligned address")
// where the host would not. The emulator cannot fault a kernel, so such an
// access is poisoned instead: a load reads, a store writes, all-ones bytes
// (NaN for floats), which no comparison with eager passes.
template <typename V>
inline bool gj_simt_misaligned(const void* p) {
  return reinterpret_cast<unsigned long long>(p) % alignof(V) != 0;
}
template <typename V>
inline V gj_simt_poisoned() {
  V v;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&v);
  for (unsigned i = 0; i < sizeof(V); ++i) bytes[i] = 0xff;
  return v;
}

#endif  // GJ_SIMT_EMULATION
)gj_simt";

}  // namespace

absl::string_view SimtEmulationHeader() {
  return absl::string_view(kHeader, sizeof(kHeader) - 1);
}

std::string SimtEntrySymbol(absl::string_view kernel) {
  return absl::StrCat("gj_simt_entry_", kernel);
}

std::string SimtAritySymbol(absl::string_view kernel) {
  return absl::StrCat("gj_simt_arity_", kernel);
}

std::string SimtEntryPoints(absl::Span<const std::string> kernels) {
  std::string out = absl::StrCat(
      "#line 1 \"gj_simt_entry_points\"\n"
      "static_assert(sizeof(::gj_simt::State) == ",
      sizeof(SimtThreadState),
      " && __builtin_offsetof(::gj_simt::State, lane) == ",
      offsetof(SimtThreadState, lane),
      " && __builtin_offsetof(::gj_simt::State, host) == ",
      offsetof(SimtThreadState, host),
      " && __builtin_offsetof(::gj_simt::State, ops) == ",
      offsetof(SimtThreadState, ops),
      " && sizeof(::gj_simt::Ops) == ", sizeof(SimtOps),
      " && ::gj_simt::kSyncAnd == ", kSimtSyncAnd,
      " && ::gj_simt::kSyncOr == ", kSimtSyncOr,
      " && ::gj_simt::kWarpShuffle == ", kSimtWarpShuffle,
      " && ::gj_simt::kWarpBallot == ", kSimtWarpBallot,
      ", \"the emulation header does not match the launcher\");\n");
  for (const std::string& k : kernels) {
    absl::StrAppend(&out, "extern \"C\" void ", SimtEntrySymbol(k),
                    "(::gj_simt::State* s, void* const* p) {\n"
                    "  ::gj_simt::Invoke(s, &",
                    k, ", p);\n}\n", "extern \"C\" int ", SimtAritySymbol(k),
                    "() { return ::gj_simt::Arity(&", k, "); }\n");
  }
  return out;
}

}  // namespace guardjit
