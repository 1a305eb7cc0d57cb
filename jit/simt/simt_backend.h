#ifndef GUARDJIT_JIT_SIMT_SIMT_BACKEND_H_
#define GUARDJIT_JIT_SIMT_SIMT_BACKEND_H_

// The CUDA backend without a GPU: the CUDA C the generator writes for a
// program's kernels (cuda_codegen.h), compiled by the host compiler against
// the SIMT emulator's header and launched block by block with real threads
// (runtime/simt/simt_emulator.h). Buffers are host memory. Tests run the
// JIT's conformance suites through it (the same kernels NVRTC compiles for
// the device), and `guardjit compile --target cuda:sm_XX --emulate` runs
// any graph through it.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jit/cuda/cuda_codegen.h"
#include "jit/cuda/nvrtc_compiler.h"
#include "jit/kernel_backend.h"
#include "jit/kernel_cache.h"
#include "runtime/simt/simt_emulator.h"

namespace guardjit {

class SimtCudaBackend : public KernelBackend {
 public:
  struct Options {
    CudaCodegenOptions codegen;
    SimtOptions simt;
    // Grid size cap (rows are grid-strided beyond it): a few blocks keep
    // emulated launches short while still running several.
    int64_t max_blocks = 4;
    // Modules kept for reuse by identical programs (each holds a loaded
    // shared object and its launch threads): least recently used go first.
    int max_cached_modules = 16;
    // Also compile every module with NVRTC (a CUBIN), failing the compile if
    // NVRTC rejects it: what the emulator runs is then exactly what a device
    // would load. Modules take these archs in turn (one NVRTC compile each:
    // a test suite covers every arch at the cost of one). Empty: no NVRTC.
    std::vector<CudaArch> nvrtc_archs;
  };
  explicit SimtCudaBackend(Options options)
      : options_(std::move(options)), cache_(options_.max_cached_modules) {}
  SimtCudaBackend() : SimtCudaBackend(Options()) {}

  std::string name() const override { return "cuda-simt"; }
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override;
  KernelCacheStats cache_stats() const override { return cache_.stats(); }

  // Host compiles so far, and compiles saved by identical source.
  int compiled() const;
  int cache_hits() const;
  // NVRTC compiles checked (per arch) so far.
  int nvrtc_checked() const;

 private:
  // The module NVRTC checks (CompileModule, in the cache's compile).
  absl::StatusOr<std::shared_ptr<const KernelModule>> CompileModule(
      CudaModuleSource source);

  const Options options_;
  // Modules by ("cuda-simt", "", options, source): identical programs
  // compile once.
  KernelCache<std::shared_ptr<const KernelModule>> cache_;
  mutable std::mutex mu_;  // guards the NVRTC check's state below
  int nvrtc_checked_ = 0;
  uint64_t next_arch_ = 0;
  std::shared_ptr<NvrtcCompiler> nvrtc_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_SIMT_SIMT_BACKEND_H_
