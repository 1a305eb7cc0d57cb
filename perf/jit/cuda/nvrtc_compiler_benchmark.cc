// How long NVRTC takes to compile a cache entry's translation unit, and a
// compile that hits NvrtcCompiler's cache. Needs NVRTC, not a GPU.
//   BM_NvrtcCold/K/H   K pointwise kernels of 10 ops each (exp, tanh,
//                      sigmoid, ...) for sm_90, with (H=1) or without
//                      cuda_fp16.h and __half loads; every iteration's source
//                      differs, so every one compiles
//   BM_NvrtcCacheHit   the same source every time
// Run with --benchmark_repetitions=N for medians.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "jit/cuda/nvrtc_compiler.h"

namespace guardjit {
namespace {

std::string PointwiseTu(int kernels, bool half, int64_t salt) {
  std::string source = half ? "#include <cuda_fp16.h>\n" : "";
  const char* in = half ? "__half" : "float";
  const char* load_a = half ? "__half2float(x[i])" : "x[i]";
  const char* load_b = half ? "__half2float(y[i])" : "y[i]";
  for (int k = 0; k < kernels; ++k) {
    absl::StrAppend(
        &source, "extern \"C\" __global__ void pointwise_", k, "(const ", in,
        "* __restrict__ x, const ", in,
        "* __restrict__ y, float* __restrict__ out, long long n) {\n"
        "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  const float a = ",
        load_a, ", b = ", load_b, ";\n  float v = a * ", 1 + k + salt,
        ".0f;\n"
        "  v = v + b;\n  v = tanhf(v);\n  v = v * a;\n"
        "  v = 1.0f / (1.0f + expf(-v));\n  v = v - b;\n  v = fmaxf(v, 0.0f);\n"
        "  v = expf(v);\n  v = fmaxf(v, a);\n  v = v / b;\n  out[i] = v;\n}\n");
  }
  return source;
}

void BM_NvrtcCold(benchmark::State& state) {
  auto compiler = NvrtcCompiler::Create();
  if (!compiler.ok()) {
    state.SkipWithError(std::string(compiler.status().message()).c_str());
    return;
  }
  static int64_t salt = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string source = PointwiseTu(static_cast<int>(state.range(0)),
                                           state.range(1) != 0, ++salt * 100);
    CudaCompileRequest request;
    request.source = source;
    request.arch = CudaArch{9, 0};
    state.ResumeTiming();
    auto result = (*compiler)->Compile(request);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_NvrtcCold)
    ->ArgsProduct({{1, 10}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

void BM_NvrtcCacheHit(benchmark::State& state) {
  auto compiler = NvrtcCompiler::Create();
  if (!compiler.ok()) {
    state.SkipWithError(std::string(compiler.status().message()).c_str());
    return;
  }
  const std::string source = PointwiseTu(10, false, 0);
  CudaCompileRequest request;
  request.source = source;
  request.arch = CudaArch{9, 0};
  (void)(*compiler)->Compile(request);
  for (auto _ : state) {
    auto result = (*compiler)->Compile(request);
    benchmark::DoNotOptimize(result);
  }
  state.counters["compiles"] = static_cast<double>((*compiler)->compiled());
}
BENCHMARK(BM_NvrtcCacheHit)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace guardjit

BENCHMARK_MAIN();
