// The SIMT emulator's costs: launch overhead, a block reduction's barriers,
// and the host compile of a small module at -O1 and -O2 (which picked
// SimtOptions' default). Uses $GJ_HOST_CXX, $CXX or c++.

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "runtime/simt/simt_emulator.h"

namespace guardjit {
namespace {

constexpr char kSource[] = R"(
extern "C" __global__ void empty() {}

// 64 blocks x 256 threads: a tree over __shared__, 9 __syncthreads a block.
extern "C" __global__ void block_sum(const float* x, float* sums) {
  __shared__ float partial[256];
  const unsigned t = threadIdx.x;
  partial[t] = x[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = partial[0];
}

// The same through warp shuffles: 5 __shfl_xor_sync and 2 __syncthreads.
extern "C" __global__ void warp_sum(const float* x, float* sums) {
  __shared__ float warps[8];
  const unsigned t = threadIdx.x;
  float v = x[blockIdx.x * blockDim.x + t];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (t % 32 == 0) warps[t / 32] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (int w = 0; w < 8; ++w) s += warps[w];
    sums[blockIdx.x] = s;
  }
  __syncthreads();
}
)";

SimtModule& Module() {
  static SimtModule* module = [] {
    auto m = SimtModule::Compile(kSource, {"empty", "block_sum", "warp_sum"});
    if (!m.ok()) {
      fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      abort();
    }
    return m->release();
  }();
  return *module;
}

void BM_LaunchEmpty(benchmark::State& state) {
  SimtModule& m = Module();
  const uint32_t threads = state.range(0);
  for (auto _ : state) {
    if (!m.Launch("empty", {1}, {threads}, nullptr).ok()) abort();
  }
}
BENCHMARK(BM_LaunchEmpty)->Arg(32)->Arg(256)->Arg(1024)->UseRealTime();

void BM_Reduce(benchmark::State& state, const char* kernel) {
  SimtModule& m = Module();
  std::vector<float> x(64 * 256, 1.0f), sums(64);
  const float* px = x.data();
  float* ps = sums.data();
  void* params[] = {&px, &ps};
  for (auto _ : state) {
    if (!m.Launch(kernel, {64}, {256}, params).ok()) abort();
  }
  if (sums[63] != 256.0f) state.SkipWithError("wrong sum");
}
BENCHMARK_CAPTURE(BM_Reduce, shared_tree, "block_sum")->UseRealTime();
BENCHMARK_CAPTURE(BM_Reduce, warp_shuffles, "warp_sum")->UseRealTime();

void BM_Compile(benchmark::State& state) {
  SimtOptions options;
  options.extra_flags = {absl::StrCat("-O", state.range(0))};
  for (auto _ : state) {
    auto m = SimtModule::Compile(kSource, {"empty", "block_sum", "warp_sum"},
                                 options);
    if (!m.ok()) state.SkipWithError("compile failed");
  }
}
BENCHMARK(BM_Compile)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace guardjit

BENCHMARK_MAIN();
