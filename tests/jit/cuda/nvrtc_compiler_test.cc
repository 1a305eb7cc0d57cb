// NVRTC needs no GPU: these compile CUDA C to CUBIN on any machine with the
// toolkit, and skip where NVRTC cannot be loaded.

#include "jit/cuda/nvrtc_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

// Pointwise float and __half kernels and a row sum using warp shuffles and
// shared memory: the constructs generated kernels use.
constexpr char kKernels[] = R"(
#include <cuda_fp16.h>

extern "C" __global__ void add_f32(const float* __restrict__ x,
                                   const float* __restrict__ y,
                                   float* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i] * 2.0f;
}

extern "C" __global__ void mul_f16(const __half* __restrict__ x,
                                   const __half* __restrict__ y,
                                   __half* __restrict__ out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = __float2half(__half2float(x[i]) * __half2float(y[i]));
  }
}

extern "C" __global__ void row_sum(const float* __restrict__ x,
                                   float* __restrict__ out, int cols) {
  __shared__ float partial[32];
  const float* row = x + (long long)blockIdx.x * cols;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += row[c];
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < (blockDim.x + 31) / 32 ? partial[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
  }
}
)";

// A compiler with NVRTC loaded, or skips the test naming why there is none.
#define GJ_COMPILER_OR_SKIP(compiler, ...)                       \
  absl::StatusOr<std::shared_ptr<NvrtcCompiler>> compiler##_or = \
      NvrtcCompiler::Create(__VA_ARGS__);                        \
  if (!compiler##_or.ok()) {                                     \
    GTEST_SKIP() << "no NVRTC: " << compiler##_or.status();      \
  }                                                              \
  NvrtcCompiler& compiler = **compiler##_or

CudaCompileRequest Request(absl::string_view source, CudaArch arch) {
  CudaCompileRequest request;
  request.source = source;
  request.arch = arch;
  return request;
}

TEST(NvrtcCompilerTest, CompilesCubinForSm80AndSm90) {
  GJ_COMPILER_OR_SKIP(compiler);
  for (const CudaArch arch : {CudaArch{8, 0}, CudaArch{9, 0}}) {
    SCOPED_TRACE(arch.ToString());
    absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
        compiler.Compile(Request(kKernels, arch));
    ASSERT_TRUE(result.ok()) << result.status();
    const CudaCompileResult& r = **result;
    EXPECT_FALSE(r.ptx);
    EXPECT_EQ(r.arch, arch);
    EXPECT_TRUE(r.note.empty()) << r.note;
    ASSERT_GT(r.image.size(), 4u);
    EXPECT_EQ(r.image.substr(0, 4),
              "\x7f"
              "ELF");
    EXPECT_GT(r.compile_time, absl::ZeroDuration());
    EXPECT_EQ(r.nvrtc_version, compiler.nvrtc_version());
    EXPECT_THAT(r.options, Contains(absl::StrCat("-arch=", arch.ToString())));
    EXPECT_THAT(r.options, Contains("--std=c++17"));
    EXPECT_THAT(r.options, Not(Contains("--use_fast_math")));
    EXPECT_THAT(r.options, Not(Contains("-lineinfo")));
    ASSERT_THAT(r.kernels, SizeIs(3)) << r.log;
    std::vector<std::string> names;
    for (const CudaKernelResources& kernel : r.kernels) {
      names.push_back(kernel.name);
      EXPECT_GT(kernel.registers, 0) << kernel.name;
      EXPECT_EQ(kernel.spill_store_bytes, 0) << kernel.name;
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names,
              (std::vector<std::string>{"add_f32", "mul_f16", "row_sum"}));
    for (const CudaKernelResources& kernel : r.kernels) {
      if (kernel.name == "row_sum") {
        EXPECT_EQ(kernel.shared_memory_bytes, 32 * 4);
      }
    }
  }
}

TEST(NvrtcCompilerTest, FindsTheToolkitHeaders) {
  GJ_COMPILER_OR_SKIP(compiler);
  ASSERT_THAT(compiler.include_dirs(), SizeIs(1));
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      compiler.Compile(Request(kKernels, CudaArch{9, 0}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT((*result)->options,
              Contains(absl::StrCat("-I", compiler.include_dirs()[0])));
}

TEST(NvrtcCompilerTest, ArchNewerThanNvrtcGivesPtx) {
  GJ_COMPILER_OR_SKIP(compiler);
  const int newest = compiler.supported_archs().back();
  const CudaArch future{(newest + 10) / 10, 0};
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      compiler.Compile(Request(kKernels, future));
  ASSERT_TRUE(result.ok()) << result.status();
  const CudaCompileResult& r = **result;
  EXPECT_TRUE(r.ptx);
  EXPECT_EQ(r.arch.number(), newest);
  EXPECT_THAT(r.options, Contains(absl::StrCat("-arch=compute_", newest)));
  EXPECT_THAT(r.note, HasSubstr(future.ToString()));
  EXPECT_THAT(r.note, HasSubstr(absl::StrCat("compute_", newest)));
  EXPECT_THAT(r.image, HasSubstr(".entry add_f32"));
  EXPECT_THAT(r.image, HasSubstr(absl::StrCat(".target sm_", newest)));
  EXPECT_EQ(r.image.back(), '\0') << "PTX keeps its NUL for cuModuleLoadData";
  EXPECT_TRUE(r.kernels.empty());
}

TEST(NvrtcCompilerTest, SelectsTargets) {
  const std::vector<int> archs = {75, 80, 86, 87, 89, 90, 100, 120};
  auto select = [&](CudaArch arch) {
    absl::StatusOr<NvrtcTarget> target = SelectNvrtcTarget(arch, archs);
    EXPECT_TRUE(target.ok()) << target.status();
    return *target;
  };
  NvrtcTarget t = select({9, 0});
  EXPECT_EQ(t.arch, (CudaArch{9, 0}));
  EXPECT_FALSE(t.ptx);
  EXPECT_TRUE(t.note.empty());
  t = select({9, 0, 'a'});
  EXPECT_EQ(t.arch.ToString(), "sm_90a");
  EXPECT_FALSE(t.ptx);
  // Unlisted, same major below: that major's CUBIN runs on it.
  t = select({8, 8});
  EXPECT_EQ(t.arch, (CudaArch{8, 7}));
  EXPECT_FALSE(t.ptx);
  EXPECT_THAT(t.note, HasSubstr("sm_88"));
  // Unlisted, no arch of its major below: PTX of the newest below.
  t = select({11, 0});
  EXPECT_EQ(t.arch, (CudaArch{10, 0}));
  EXPECT_TRUE(t.ptx);
  // Newer than all: PTX of the newest.
  t = select({13, 0});
  EXPECT_EQ(t.arch, (CudaArch{12, 0}));
  EXPECT_TRUE(t.ptx);
  EXPECT_THAT(t.note, HasSubstr("newer"));
  // Older than all: refused.
  absl::StatusOr<NvrtcTarget> old = SelectNvrtcTarget({5, 2}, archs);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(old.status().message(), HasSubstr("sm_52"));
  EXPECT_THAT(old.status().message(), HasSubstr("sm_75"));
}

TEST(NvrtcCompilerTest, SyntaxErrorIsInternalWithTheLog) {
  GJ_COMPILER_OR_SKIP(compiler);
  CudaCompileRequest request = Request(
      "extern \"C\" __global__ void broken(float* x) {\n  x[0] = ;\n}\n",
      CudaArch{9, 0});
  request.name = "broken.cu";
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      compiler.Compile(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(result.status().message(), HasSubstr("broken.cu(2): error"));
  EXPECT_THAT(result.status().message(), HasSubstr("sm_90"));
  EXPECT_THAT(result.status().message(), HasSubstr("NVRTC_ERROR_COMPILATION"));
  EXPECT_EQ(compiler.cache_size(), 0u) << "failures are not cached";

  // With caller options the caller may be at fault.
  request.options = {"-DX=1"};
  EXPECT_EQ(compiler.Compile(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  // So is an option NVRTC does not know.
  CudaCompileRequest bad_option = Request(kKernels, CudaArch{9, 0});
  bad_option.options = {"--no-such-option"};
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> refused =
      compiler.Compile(bad_option);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("--no-such-option"));
}

TEST(NvrtcCompilerTest, LogInErrorIsBounded) {
  GJ_COMPILER_OR_SKIP(compiler);
  std::string source;
  for (int i = 0; i < 400; ++i) {
    absl::StrAppend(&source, "__global__ void k", i, "() { int x = ; }\n");
  }
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      compiler.Compile(Request(source, CudaArch{9, 0}));
  ASSERT_FALSE(result.ok());
  EXPECT_LT(result.status().message().size(), 4096u + 1024u);
  EXPECT_THAT(result.status().message(), HasSubstr("more bytes)"));
  EXPECT_THAT(result.status().message(), HasSubstr("guardjit.cu(1): error"));
}

TEST(NvrtcCompilerTest, CachesBySourceArchAndOptions) {
  GJ_COMPILER_OR_SKIP(compiler);
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> first =
      compiler.Compile(Request(kKernels, CudaArch{8, 0}));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(compiler.compiled(), 1);
  EXPECT_EQ(compiler.cache_hits(), 0);

  // The same text from another buffer: a hit, the same result object.
  const std::string copy(kKernels);
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> second =
      compiler.Compile(Request(copy, CudaArch{8, 0}));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->get(), first->get());
  EXPECT_EQ(compiler.compiled(), 1);
  EXPECT_EQ(compiler.cache_hits(), 1);

  CudaCompileRequest with_option = Request(kKernels, CudaArch{8, 0});
  with_option.options = {"-DGJ_UNUSED=1"};
  ASSERT_TRUE(compiler.Compile(with_option).ok());
  EXPECT_EQ(compiler.compiled(), 2) << "other options: a miss";
  ASSERT_TRUE(compiler.Compile(Request(kKernels, CudaArch{8, 6})).ok());
  EXPECT_EQ(compiler.compiled(), 3) << "another arch: a miss";
  ASSERT_TRUE(
      compiler.Compile(Request(absl::StrCat(kKernels, "\n"), CudaArch{8, 0}))
          .ok());
  EXPECT_EQ(compiler.compiled(), 4) << "another source: a miss";
  ASSERT_TRUE(compiler.Compile(with_option).ok());
  EXPECT_EQ(compiler.compiled(), 4);
  EXPECT_EQ(compiler.cache_hits(), 2);
  EXPECT_EQ(compiler.cache_size(), 4u);
}

TEST(NvrtcCompilerTest, LineInfoIsAnOptionAndAKey) {
  NvrtcCompiler::Options options;
  options.line_info = true;
  GJ_COMPILER_OR_SKIP(compiler, options);
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
      compiler.Compile(Request(kKernels, CudaArch{9, 0}));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT((*result)->options, Contains("-lineinfo"));
}

TEST(NvrtcCompilerTest, EvictsLeastRecentlyUsed) {
  NvrtcCompiler::Options options;
  options.cache_capacity = 2;
  GJ_COMPILER_OR_SKIP(compiler, options);
  auto source = [](int i) {
    return absl::StrCat("extern \"C\" __global__ void k(float* x) { x[0] = ", i,
                        ".0f; }\n");
  };
  const CudaArch arch{9, 0};
  for (int i : {0, 1, 0, 2}) {  // 1 is least recently used when 2 comes
    ASSERT_TRUE(compiler.Compile(Request(source(i), arch)).ok());
  }
  EXPECT_EQ(compiler.compiled(), 3);
  EXPECT_EQ(compiler.cache_size(), 2u);
  ASSERT_TRUE(compiler.Compile(Request(source(0), arch)).ok());
  EXPECT_EQ(compiler.compiled(), 3) << "0 stayed";
  ASSERT_TRUE(compiler.Compile(Request(source(1), arch)).ok());
  EXPECT_EQ(compiler.compiled(), 4) << "1 was evicted";
}

TEST(NvrtcCompilerTest, ConcurrentCompilesOfOneSourceShareOneCompile) {
  GJ_COMPILER_OR_SKIP(compiler);
  constexpr int kThreads = 4;
  std::vector<std::shared_ptr<const CudaCompileResult>> results(kThreads);
  std::vector<absl::Status> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<std::shared_ptr<const CudaCompileResult>> result =
          compiler.Compile(Request(kKernels, CudaArch{9, 0}));
      statuses[t] = result.status();
      if (result.ok()) results[t] = *result;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(statuses[t].ok()) << statuses[t];
    EXPECT_EQ(results[t], results[0]);
  }
  EXPECT_EQ(compiler.compiled(), 1);
  EXPECT_EQ(compiler.cache_hits(), kThreads - 1);
}

TEST(NvrtcCompilerTest, ConcurrentCompilesOfDifferentSources) {
  GJ_COMPILER_OR_SKIP(compiler);
  constexpr int kThreads = 4;
  std::vector<absl::Status> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string source = absl::StrCat(kKernels, "// variant ", t, "\n");
      statuses[t] = compiler.Compile(Request(source, CudaArch{8, 0})).status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : statuses)
    EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(compiler.compiled(), kThreads);
}

// Issue #31: a second compiler over the same compile cache (another
// process, as far as the cache can tell) loads the CUBIN and its log instead
// of running NVRTC; the result is the same image with the same per-kernel
// resources.
TEST(NvrtcCompilerTest, PersistentCacheLoadsInsteadOfCompiling) {
  const std::string dir =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("gj_nvrtc_cache_", ::getpid()))
          .string();
  std::filesystem::remove_all(dir);
  CompileCacheOptions cache_options;
  cache_options.dir = dir;
  NvrtcCompiler::Options options;
  options.persistent = *CompileCache::Create(cache_options);
  std::shared_ptr<const CudaCompileResult> first;
  {
    GJ_COMPILER_OR_SKIP(compiler, options);
    auto result = compiler.Compile(Request(kKernels, CudaArch{8, 0}));
    ASSERT_TRUE(result.ok()) << result.status();
    first = *result;
    EXPECT_EQ(compiler.compiled(), 1);
    EXPECT_EQ(compiler.loaded(), 0);
    EXPECT_EQ(options.persistent->stats().disk_stores, 1);
  }
  options.persistent = *CompileCache::Create(cache_options);
  GJ_COMPILER_OR_SKIP(compiler, options);
  auto second = compiler.Compile(Request(kKernels, CudaArch{8, 0}));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(compiler.compiled(), 0);
  EXPECT_EQ(compiler.loaded(), 1);
  EXPECT_EQ((*second)->image, first->image);
  EXPECT_EQ((*second)->log, first->log);
  EXPECT_EQ((*second)->options, first->options);
  EXPECT_EQ((*second)->arch, first->arch);
  ASSERT_EQ((*second)->kernels.size(), first->kernels.size());
  for (size_t i = 0; i < first->kernels.size(); ++i) {
    EXPECT_EQ((*second)->kernels[i].name, first->kernels[i].name);
    EXPECT_EQ((*second)->kernels[i].registers, first->kernels[i].registers);
  }
  // Another arch is another key: compiled.
  ASSERT_TRUE(compiler.Compile(Request(kKernels, CudaArch{9, 0})).ok());
  EXPECT_EQ(compiler.compiled(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace guardjit
