#include "runtime/simt/simt_emulator.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX

namespace guardjit {
namespace {

using ::testing::HasSubstr;

SimtOptions HostOptions() {
  SimtOptions options;
  options.host_compiler = GJ_HOST_CXX;
  return options;
}

std::unique_ptr<SimtModule> CompileOrDie(const std::string& source,
                                         std::vector<std::string> kernels) {
  auto module = SimtModule::Compile(source, kernels, HostOptions());
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

// Runs `fn` on another thread; false if it has not returned within
// `seconds` (the thread is then left behind, hung, so the test can fail
// instead of hanging).
bool FinishesWithin(std::function<void()> fn, int seconds) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([fn = std::move(fn), done] {
    fn();
    done->set_value();
  }).detach();
  return finished.wait_for(std::chrono::seconds(seconds)) ==
         std::future_status::ready;
}

TEST(SimtEmulatorTest, VectorAddOverSeveralBlocksWithTailGuard) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void add(const float* __restrict__ a,
                               const float* __restrict__ b, float* out,
                               int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
)",
                             {"add"});
  ASSERT_NE(module, nullptr);
  const int n = 300;  // 5 blocks of 64, the last one partly idle
  std::vector<float> a(n), b(n), out(n + 20, -1.0f);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - i;
  }
  const float* pa = a.data();
  const float* pb = b.data();
  float* pout = out.data();
  void* params[] = {&pa, &pb, &pout, const_cast<int*>(&n)};
  ASSERT_TRUE(module->Launch("add", {5}, {64}, params).ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << i;
  for (int i = n; i < n + 20; ++i) EXPECT_EQ(out[i], -1.0f) << i;
}

constexpr char kBlockSum[] = R"(
// One sum per block, a tree over __shared__ with a __syncthreads per level.
extern "C" __global__ void block_sum(const long long* x, long long* sums) {
  __shared__ long long partial[1024];
  const unsigned tid = threadIdx.x + threadIdx.y * blockDim.x +
                       threadIdx.z * blockDim.x * blockDim.y;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned block = blockIdx.x + blockIdx.y * gridDim.x;
  partial[tid] = x[block * threads + tid];
  __syncthreads();
  for (unsigned half = threads / 2; half > 0; half /= 2) {
    if (tid < half) partial[tid] += partial[tid + half];
    __syncthreads();
  }
  if (tid == 0) sums[block] = partial[0];
}
)";

TEST(SimtEmulatorTest, BlockReductionThroughSharedMemory) {
  auto module = CompileOrDie(kBlockSum, {"block_sum"});
  ASSERT_NE(module, nullptr);
  struct Config {
    SimtDim3 grid, block;
  };
  for (const Config& c : {Config{{6}, {256}}, Config{{3, 2}, {16, 16}},
                          Config{{2, 2}, {8, 4, 2}}}) {
    const int threads = c.block.x * c.block.y * c.block.z;
    const int blocks = c.grid.x * c.grid.y;
    std::vector<long long> x(threads * blocks);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i * 7919) % 1000 - 300;
    std::vector<long long> sums(blocks, 0);
    long long* px = x.data();
    long long* psums = sums.data();
    void* params[] = {&px, &psums};
    ASSERT_TRUE(module->Launch("block_sum", c.grid, c.block, params).ok());
    for (int b = 0; b < blocks; ++b) {
      long long expected = 0;
      for (int t = 0; t < threads; ++t) expected += x[b * threads + t];
      EXPECT_EQ(sums[b], expected) << "block " << b << " of " << blocks;
    }
  }
}

TEST(SimtEmulatorTest, SyncthreadsCountAndOr) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void votes(int* out) {
  const int t = threadIdx.x;
  const int count = __syncthreads_count(t % 3 == 0);
  const int all = __syncthreads_and(t < 1000);
  const int any = __syncthreads_or(t == 77);
  const int none = __syncthreads_or(0);
  if (t == 5) {
    out[0] = count;
    out[1] = all;
    out[2] = any;
    out[3] = none;
  }
}
)",
                             {"votes"});
  ASSERT_NE(module, nullptr);
  int out[4] = {};
  int* p = out;
  void* params[] = {&p};
  ASSERT_TRUE(module->Launch("votes", {1}, {100}, params).ok());
  EXPECT_EQ(out[0], 34);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 1);
  EXPECT_EQ(out[3], 0);
}

constexpr char kWarpReduce[] = R"(
template <class T>
__device__ T xor_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <class T>
__device__ T down_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
// Per warp: xor and down sums of float, double and long long, the lane 3
// value broadcast, and lane - 1's value through __shfl_up_sync in segments
// of 8.
extern "C" __global__ void warp_sums(const float* f, const double* d,
                                     const long long* l, float* fx,
                                     double* dx, long long* lx, float* fd,
                                     double* dd, long long* ld, int* bcast,
                                     int* up) {
  const int t = threadIdx.x;
  const float fs = xor_sum(f[t]);
  const double ds = xor_sum(d[t]);
  const long long ls = xor_sum(l[t]);
  const float fds = down_sum(f[t]);
  const double dds = down_sum(d[t]);
  const long long lds = down_sum(l[t]);
  bcast[t] = __shfl_sync(0xffffffffu, t * 10, 3);
  up[t] = __shfl_up_sync(0xffffffffu, t, 1, 8);
  if (t % 32 == 0) {
    fx[t / 32] = fs;
    dx[t / 32] = ds;
    lx[t / 32] = ls;
    fd[t / 32] = fds;
    dd[t / 32] = dds;
    ld[t / 32] = lds;
  }
}
)";

TEST(SimtEmulatorTest, WarpReductionsWithShuffles) {
  auto module = CompileOrDie(kWarpReduce, {"warp_sums"});
  ASSERT_NE(module, nullptr);
  const int threads = 128;
  const int warps = threads / 32;
  std::vector<float> f(threads);
  std::vector<double> d(threads);
  std::vector<long long> l(threads);
  for (int t = 0; t < threads; ++t) {
    f[t] = 0.25f * t;  // exact sums in any order
    d[t] = 1e-3 * t;
    l[t] = (1LL << 40) * (t % 5) - t;
  }
  std::vector<float> fx(warps), fd(warps);
  std::vector<double> dx(warps), dd(warps);
  std::vector<long long> lx(warps), ld(warps);
  std::vector<int> bcast(threads), up(threads);
  const float* pf = f.data();
  const double* pd = d.data();
  const long long* pl = l.data();
  float* pfx = fx.data();
  double* pdx = dx.data();
  long long* plx = lx.data();
  float* pfd = fd.data();
  double* pdd = dd.data();
  long long* pld = ld.data();
  int* pb = bcast.data();
  int* pu = up.data();
  void* params[] = {&pf,  &pd,  &pl,  &pfx, &pdx, &plx,
                    &pfd, &pdd, &pld, &pb,  &pu};
  ASSERT_TRUE(module->Launch("warp_sums", {1}, {threads}, params).ok());
  for (int w = 0; w < warps; ++w) {
    float fs = 0;
    double ds = 0;
    long long ls = 0;
    for (int t = 32 * w; t < 32 * w + 32; ++t) {
      fs += f[t];
      ds += d[t];
      ls += l[t];
    }
    EXPECT_EQ(fx[w], fs) << w;
    EXPECT_EQ(fd[w], fs) << w;
    EXPECT_NEAR(dx[w], ds, 1e-12) << w;
    EXPECT_NEAR(dd[w], ds, 1e-12) << w;
    EXPECT_EQ(lx[w], ls) << w;
    EXPECT_EQ(ld[w], ls) << w;
  }
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(bcast[t], (t / 32 * 32 + 3) * 10) << t;
    EXPECT_EQ(up[t], t % 8 == 0 ? t : t - 1) << t;
  }
}

TEST(SimtEmulatorTest, PartialLastWarpShufflesAmongItsLanes) {
  auto module = CompileOrDie(kWarpReduce, {"warp_sums"});
  ASSERT_NE(module, nullptr);
  // 40 threads: warp 1 has lanes 0..7 only. A lane reading a missing lane
  // gets its own value, so over ones every butterfly and down sum still
  // comes to 32.
  const int threads = 40;
  std::vector<float> f(threads, 1.0f);
  std::vector<double> d(threads, 1.0);
  std::vector<long long> l(threads, 1);
  std::vector<float> fx(2), fd(2);
  std::vector<double> dx(2), dd(2);
  std::vector<long long> lx(2), ld(2);
  std::vector<int> bcast(threads), up(threads);
  const float* pf = f.data();
  const double* pd = d.data();
  const long long* pl = l.data();
  float* pfx = fx.data();
  double* pdx = dx.data();
  long long* plx = lx.data();
  float* pfd = fd.data();
  double* pdd = dd.data();
  long long* pld = ld.data();
  int* pb = bcast.data();
  int* pu = up.data();
  void* params[] = {&pf,  &pd,  &pl,  &pfx, &pdx, &plx,
                    &pfd, &pdd, &pld, &pb,  &pu};
  ASSERT_TRUE(module->Launch("warp_sums", {1}, {threads}, params).ok());
  EXPECT_EQ(ld[0], 32);
  EXPECT_EQ(lx[0], 32);
  EXPECT_EQ(ld[1], 32);
  EXPECT_EQ(lx[1], 32);
  EXPECT_EQ(fx[1], 32.0f);
  EXPECT_EQ(bcast[35], 350);
}

TEST(SimtEmulatorTest, DivergentHalfWarpsShuffleWithTheirOwnMasks) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void halves(int* out) {
  // 2D block: the lane is (x + y * blockDim.x) % 32.
  const int t = threadIdx.x + threadIdx.y * blockDim.x;
  const int lane = t % 32;
  int v = t;
  if (lane < 16) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0x0000ffffu, v, o);
    __syncwarp(0x0000ffffu);
  } else {
    v *= 100;
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffff0000u, v, o);
    __syncwarp(0xffff0000u);
  }
  out[t] = v;
}
)",
                             {"halves"});
  ASSERT_NE(module, nullptr);
  std::vector<int> out(64);
  int* p = out.data();
  void* params[] = {&p};
  ASSERT_TRUE(module->Launch("halves", {1}, {16, 4}, params).ok());
  for (int t = 0; t < 64; ++t) {
    const int first = t / 16 * 16;
    const int sum = 16 * first + 120;  // first + ... + first + 15
    EXPECT_EQ(out[t], t % 32 < 16 ? sum : 100 * sum) << t;
  }
}

TEST(SimtEmulatorTest, MathIsHostLibm) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void math(const float* x, float* f, double* d) {
  const int i = threadIdx.x;
  const float a = x[i];
  const double b = a;
  float* o = f + 16 * i;
  o[0] = expf(a); o[1] = logf(a); o[2] = log1pf(a); o[3] = tanhf(a);
  o[4] = erff(a); o[5] = sinf(a); o[6] = cosf(a); o[7] = sqrtf(a);
  o[8] = rsqrtf(a); o[9] = powf(a, 1.5f); o[10] = fmodf(a, 0.75f);
  o[11] = expm1f(a); o[12] = fminf(a, 0.5f); o[13] = copysignf(2.0f, a);
  o[14] = rintf(a); o[15] = exp(a);  // CUDA's float overload
  double* q = d + 8 * i;
  q[0] = exp(b); q[1] = log(b); q[2] = tanh(b); q[3] = erf(b);
  q[4] = sqrt(b); q[5] = pow(b, 1.5); q[6] = floor(b); q[7] = max(b, 0.25);
}
)",
                             {"math"});
  ASSERT_NE(module, nullptr);
  const std::vector<float> x = {0.3f, 1.7f, -2.5f, 10.0f, 1e-8f, 0.0f};
  const int n = static_cast<int>(x.size());
  std::vector<float> f(16 * n);
  std::vector<double> d(8 * n);
  const float* px = x.data();
  float* pf = f.data();
  double* pd = d.data();
  void* params[] = {&px, &pf, &pd};
  ASSERT_TRUE(
      module->Launch("math", {1}, {static_cast<uint32_t>(n)}, params).ok());
  auto same = [](double got, double want) {
    return (std::isnan(got) && std::isnan(want)) || got == want;
  };
  for (int i = 0; i < n; ++i) {
    const float a = x[i];
    const double b = a;
    const float want_f[16] = {std::exp(a),         std::log(a),
                              std::log1p(a),       std::tanh(a),
                              std::erf(a),         std::sin(a),
                              std::cos(a),         std::sqrt(a),
                              1.0f / std::sqrt(a), std::pow(a, 1.5f),
                              std::fmod(a, 0.75f), std::expm1(a),
                              std::fmin(a, 0.5f),  std::copysign(2.0f, a),
                              std::rint(a),        std::exp(a)};
    for (int k = 0; k < 16; ++k) {
      EXPECT_TRUE(same(f[16 * i + k], want_f[k]))
          << "x " << a << " float function " << k << ": " << f[16 * i + k]
          << " vs " << want_f[k];
    }
    const double want_d[8] = {
        std::exp(b),  std::log(b),      std::tanh(b),  std::erf(b),
        std::sqrt(b), std::pow(b, 1.5), std::floor(b), std::fmax(b, 0.25)};
    for (int k = 0; k < 8; ++k) {
      EXPECT_TRUE(same(d[8 * i + k], want_d[k]))
          << "x " << a << " double function " << k;
    }
  }
}

TEST(SimtEmulatorTest, BallotAnyAll) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void votes(unsigned* ballot, int* any, int* all,
                                 int* all_true) {
  const int t = threadIdx.x;
  const int lane = t % 32;
  const unsigned b = __ballot_sync(0xffffffffu, lane % 3 == 0);
  const int a = __any_sync(0xffffffffu, t == 40);
  const int l = __all_sync(0xffffffffu, lane != 7);
  const int lt = __all_sync(0xffffffffu, t >= 0);
  if (lane == 0) {
    ballot[t / 32] = b;
    any[t / 32] = a;
    all[t / 32] = l;
    all_true[t / 32] = lt;
  }
}
)",
                             {"votes"});
  ASSERT_NE(module, nullptr);
  unsigned ballot[2] = {};
  int any[2] = {}, all[2] = {}, all_true[2] = {};
  unsigned* pb = ballot;
  int* pa = any;
  int* pl = all;
  int* pt = all_true;
  void* params[] = {&pb, &pa, &pl, &pt};
  ASSERT_TRUE(module->Launch("votes", {1}, {64}, params).ok());
  unsigned expected = 0;
  for (int lane = 0; lane < 32; lane += 3) expected |= 1u << lane;
  EXPECT_EQ(ballot[0], expected);
  EXPECT_EQ(ballot[1], expected);
  EXPECT_EQ(any[0], 0);
  EXPECT_EQ(any[1], 1);
  EXPECT_EQ(all[0], 0);
  EXPECT_EQ(all_true[0], 1);
  EXPECT_EQ(all_true[1], 1);
}

TEST(SimtEmulatorTest, AtomicsAcrossBlocks) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void count(float* f, double* d, int* max,
                                 unsigned long long* flags, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(f, 1.0f);
  atomicAdd(d, 0.5);
  atomicMax(max, (i * 37) % 1001);
  // An error flag, as generated index checks set it.
  if (i >= n) atomicOr(flags, 1ULL << (i % 64));
}
)",
                             {"count"});
  ASSERT_NE(module, nullptr);
  float f = 0;
  double d = 0;
  int max = -1;
  unsigned long long flags = 0;
  const int n = 8 * 128 - 3;
  float* pf = &f;
  double* pd = &d;
  int* pm = &max;
  unsigned long long* pflags = &flags;
  void* params[] = {&pf, &pd, &pm, &pflags, const_cast<int*>(&n)};
  ASSERT_TRUE(module->Launch("count", {8}, {128}, params).ok());
  EXPECT_EQ(f, 1024.0f);
  EXPECT_EQ(d, 512.0);
  EXPECT_EQ(max, 1000);
  EXPECT_EQ(flags, (1ULL << 61) | (1ULL << 62) | (1ULL << 63));
}

// Every half pattern to float, and floats around every half (the values,
// the ties between neighbours and a float ulp either side) plus a sweep of
// float patterns back, against core/half.h; NaN only needs to stay NaN
// (CUDA gives 0x7fff, core/half.h keeps the sign and payload).
TEST(SimtEmulatorTest, HalfAndBFloat16ConversionsMatchCoreHalf) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void convert(const float* in, unsigned short* half_bits,
                                   unsigned short* bf16_bits, float* from_half,
                                   float* from_bf16, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const __half h = __float2half_rn(in[i]);
    const __nv_bfloat16 b = __float2bfloat16_rn(in[i]);
    half_bits[i] = __half_as_ushort(h);
    bf16_bits[i] = __bfloat16_as_ushort(b);
    from_half[i] = __half2float(__ushort_as_half((unsigned short)i));
    from_bf16[i] = __bfloat162float(__ushort_as_bfloat16((unsigned short)i));
  }
}
)",
                             {"convert"});
  ASSERT_NE(module, nullptr);
  std::vector<float> in;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float v = HalfBitsToFloat(static_cast<uint16_t>(h));
    in.push_back(v);
    if ((h & 0x7fff) < 0x7bff) {
      const float next = HalfBitsToFloat(static_cast<uint16_t>(h + 1));
      const float tie = (v + next) / 2;  // exact: halves have 11 bits
      in.push_back(tie);
      in.push_back(std::nextafter(tie, 0.0f));
      in.push_back(std::nextafter(tie, 2 * next));
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 0x1003) {
    in.push_back(BitsToFloat(static_cast<uint32_t>(u)));
    in.push_back(BitsToFloat(static_cast<uint32_t>(u & 0xffff0000u) | 0x8000));
  }
  const int n = static_cast<int>(in.size());
  ASSERT_GE(n, 0x10000);
  std::vector<uint16_t> half_bits(n), bf16_bits(n);
  std::vector<float> from_half(n), from_bf16(n);
  const float* pin = in.data();
  uint16_t* ph = half_bits.data();
  uint16_t* pb = bf16_bits.data();
  float* pfh = from_half.data();
  float* pfb = from_bf16.data();
  void* params[] = {&pin, &ph, &pb, &pfh, &pfb, const_cast<int*>(&n)};
  ASSERT_TRUE(module->Launch("convert", {16}, {256}, params).ok());
  int failures = 0;
  for (int i = 0; i < n && failures < 10; ++i) {
    const float x = in[i];
    if (std::isnan(x)) {
      failures += half_bits[i] != 0x7fff || bf16_bits[i] != 0x7fff;
      EXPECT_EQ(half_bits[i], 0x7fff) << i;
      EXPECT_EQ(bf16_bits[i], 0x7fff) << i;
      continue;
    }
    failures += half_bits[i] != FloatToHalfBits(x) ||
                bf16_bits[i] != FloatToBFloat16Bits(x);
    EXPECT_EQ(half_bits[i], FloatToHalfBits(x))
        << std::hexfloat << x << " (" << FloatBits(x) << ")";
    EXPECT_EQ(bf16_bits[i], FloatToBFloat16Bits(x))
        << std::hexfloat << x << " (" << FloatBits(x) << ")";
  }
  for (uint32_t h = 0; h < 0x10000 && failures < 10; ++h) {
    const float want_half = HalfBitsToFloat(static_cast<uint16_t>(h));
    const float want_bf16 = BFloat16BitsToFloat(static_cast<uint16_t>(h));
    failures += FloatBits(from_bf16[h]) != FloatBits(want_bf16);
    EXPECT_EQ(FloatBits(from_bf16[h]), FloatBits(want_bf16)) << h;
    if (std::isnan(want_half)) {
      EXPECT_TRUE(std::isnan(from_half[h])) << h;
    } else {
      failures += FloatBits(from_half[h]) != FloatBits(want_half);
      EXPECT_EQ(FloatBits(from_half[h]), FloatBits(want_half)) << h;
    }
  }
}

TEST(SimtEmulatorTest, EarlyReturnDoesNotHangBarriersOrShuffles) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void early(int* out, int active) {
  __shared__ int total[1];
  const int t = threadIdx.x;
  if (t == 0) total[0] = 0;
  __syncthreads();
  if (t >= active) return;  // mid-warp: lanes 4..31 of warp 3 leave
  atomicAdd(total, 1);
  __syncthreads();
  int v = 1;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncwarp();
  __syncthreads();
  out[blockIdx.x * 2] = total[0];
  if (t % 32 == 0) atomicAdd(&out[blockIdx.x * 2 + 1], 1);
}
)",
                             {"early"});
  ASSERT_NE(module, nullptr);
  std::vector<int> out(6, 0);
  int* p = out.data();
  int active = 100;
  void* params[] = {&p, &active};
  SimtModule* m = module.get();
  auto status = std::make_shared<absl::Status>();
  const bool finished = FinishesWithin(
      [m, &params, status] {
        *status = m->Launch("early", {3}, {256}, params);
      },
      10);
  if (!finished) {
    module.release();  // its threads hang; destroying it would too
    FAIL() << "a launch with early returns did not finish";
  }
  ASSERT_TRUE(status->ok()) << *status;
  for (int b = 0; b < 3; ++b) {
    EXPECT_EQ(out[2 * b], 100) << b;
    EXPECT_EQ(out[2 * b + 1], 4) << b;  // warps with a live lane
  }
}

TEST(SimtEmulatorTest, CompileErrorNamesTheSourceLine) {
  auto module = SimtModule::Compile(R"(extern "C" __global__ void k(int* p) {
  p[0] = 1;
  p[1] = undeclared_name;
}
)",
                                    {"k"}, HostOptions());
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(module.status().message(), HasSubstr("kernel.cu:3"));
  EXPECT_THAT(module.status().message(), HasSubstr("undeclared_name"));
  EXPECT_LE(module.status().message().size(), 4096u + 512u);
}

TEST(SimtEmulatorTest, UnknownKernelsAreNotFound) {
  constexpr char kSource[] = R"(
extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }
)";
  auto missing = SimtModule::Compile(kSource, {"k", "other"}, HostOptions());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("'other'"));
  EXPECT_EQ(
      SimtModule::Compile(kSource, {"k(x)"}, HostOptions()).status().code(),
      absl::StatusCode::kInvalidArgument);

  auto module = CompileOrDie(kSource, {"k", "k"});  // a repeat is harmless
  ASSERT_NE(module, nullptr);
  int data[32] = {};
  int* p = data;
  void* params[] = {&p};
  absl::Status status = module->Launch("nope", {1}, {32}, params);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("'nope'"));
}

TEST(SimtEmulatorTest, BadLaunchConfigurationsAreInvalidArguments) {
  auto module = CompileOrDie(R"(
extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }
)",
                             {"k"});
  ASSERT_NE(module, nullptr);
  std::vector<int> data(2048);
  int* p = data.data();
  void* params[] = {&p};
  const absl::Status too_big = module->Launch("k", {1}, {2048}, params);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("2048"));
  EXPECT_EQ(module->Launch("k", {1}, {64, 32}, params).code(),
            absl::StatusCode::kInvalidArgument);  // 2048 threads in 2D
  EXPECT_EQ(module->Launch("k", {0}, {32}, params).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(module->Launch("k", {1}, {32, 0}, params).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(module->Launch("k", {1, 70000}, {32}, params).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(module->Launch("k", {1}, {1, 1, 65}, params).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(module->Launch("k", {1}, {32}, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(module->Launch("k", {1}, {1024}, params).ok());
  EXPECT_EQ(data[1023], 1);
  EXPECT_EQ(data[1024], 0);
}

TEST(SimtEmulatorTest, MissingCompilerIsUnavailable) {
  SimtOptions options;
  options.host_compiler = "/nonexistent/gj-no-such-c++";
  auto module = SimtModule::Compile("extern \"C\" __global__ void k() {}",
                                    {"k"}, options);
  EXPECT_EQ(module.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(module.status().message(), HasSubstr("gj-no-such-c++"));
}

TEST(SimtEmulatorTest, ConcurrentLaunchesOnOneModule) {
  auto module = CompileOrDie(kBlockSum, {"block_sum"});
  ASSERT_NE(module, nullptr);
  auto run = [&module](int seed, int* failures) {
    std::vector<long long> x(4 * 128);
    for (size_t i = 0; i < x.size(); ++i) x[i] = seed * 1000 + i;
    for (int rep = 0; rep < 10; ++rep) {
      std::vector<long long> sums(4, 0);
      long long* px = x.data();
      long long* psums = sums.data();
      void* params[] = {&px, &psums};
      if (!module->Launch("block_sum", {4}, {128}, params).ok()) ++*failures;
      for (int b = 0; b < 4; ++b) {
        long long expected = 0;
        for (int t = 0; t < 128; ++t) expected += x[b * 128 + t];
        if (sums[b] != expected) ++*failures;
      }
    }
  };
  int failures[2] = {0, 0};
  std::thread a(run, 1, &failures[0]);
  std::thread b(run, 2, &failures[1]);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], 0);
  EXPECT_EQ(failures[1], 0);
}

}  // namespace
}  // namespace guardjit
