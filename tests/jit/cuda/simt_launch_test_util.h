#ifndef GUARDJIT_TESTS_JIT_CUDA_SIMT_LAUNCH_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_CUDA_SIMT_LAUNCH_TEST_UTIL_H_

// Runs generated CUDA C (RenderCudaModule's) on the SIMT emulator, launched
// as the CUDA backend launches it: one pointer per buffer, one long long per
// size parameter, then the fault word when the kernel has checks; the grid
// from CudaKernelInfo::GridBlocks, info.block_threads threads per block.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_codegen.h"
#include "runtime/simt/simt_emulator.h"
#include "test_paths.h"  // GJ_HOST_CXX, GJ_SIMT_CACHE_DIR_DEFAULT

namespace guardjit::testing {

// `module` compiled by the build's host compiler (every kernel launchable),
// through the build tree's SIMT module cache unless $GJ_SIMT_CACHE_DIR
// names another.
inline absl::StatusOr<std::unique_ptr<SimtModule>> CompileOnSimt(
    const CudaModuleSource& module) {
  std::vector<std::string> names;
  for (const CudaKernelInfo& k : module.kernels) names.push_back(k.name);
  SimtOptions options;
  options.host_compiler = GJ_HOST_CXX;
  // Empty: $GJ_SIMT_CACHE_DIR's cache.
  if (std::getenv("GJ_SIMT_CACHE_DIR") == nullptr) {
    options.cache_dir = GJ_SIMT_CACHE_DIR_DEFAULT;
  }
  return SimtModule::Compile(module.source, names, options);
}

// Launches kernel `info` of `module` over `buffers` (device = host memory
// here) with size parameters `sizes` and, when the kernel has checks, the
// fault word `faults`; at most `max_blocks` blocks (the rows are
// grid-strided beyond).
inline absl::Status LaunchOnSimt(const SimtModule& module,
                                 const CudaKernelInfo& info,
                                 std::vector<void*> buffers,
                                 std::vector<int64_t> sizes = {},
                                 unsigned long long* faults = nullptr,
                                 int64_t max_blocks = 4) {
  std::vector<long long> size_values(sizes.begin(), sizes.end());
  std::vector<void*> params;
  for (void*& b : buffers) params.push_back(&b);
  for (long long& s : size_values) params.push_back(&s);
  if (info.has_fault_flag) params.push_back(&faults);
  const int64_t blocks = info.GridBlocks(sizes, max_blocks);
  return module.Launch(
      info.name, SimtDim3{static_cast<uint32_t>(blocks), 1, 1},
      SimtDim3{static_cast<uint32_t>(info.block_threads), 1, 1}, params.data());
}

// A test suite's kernels rendered as one module (RenderCudaModule,
// `Suite::kBlockThreads` threads per block) and compiled on the SIMT
// emulator once, before its first test: `Suite::Kernels()` makes them.
// A suite whose module did not compile fails each test at SetUp.
template <typename Suite>
class SimtModuleSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    kernels_ = new std::vector<Kernel>(Suite::Kernels());
    std::vector<const Kernel*> pointers;
    for (const Kernel& k : *kernels_) pointers.push_back(&k);
    absl::StatusOr<CudaModuleSource> module =
        RenderCudaModule(pointers, {.block_threads = Suite::kBlockThreads});
    ASSERT_TRUE(module.ok()) << module.status();
    source_ = new CudaModuleSource(*std::move(module));
    absl::StatusOr<std::unique_ptr<SimtModule>> simt = CompileOnSimt(*source_);
    ASSERT_TRUE(simt.ok()) << simt.status();
    simt_ = simt->release();
  }
  static void TearDownTestSuite() {
    delete simt_;
    delete source_;
    delete kernels_;
    simt_ = nullptr;
    source_ = nullptr;
    kernels_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(simt_, nullptr) << "the module did not compile";
  }
  static const CudaKernelInfo& Info(int i) { return source_->kernels[i]; }

  static inline std::vector<Kernel>* kernels_ = nullptr;
  static inline CudaModuleSource* source_ = nullptr;
  static inline SimtModule* simt_ = nullptr;
};

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_JIT_CUDA_SIMT_LAUNCH_TEST_UTIL_H_
