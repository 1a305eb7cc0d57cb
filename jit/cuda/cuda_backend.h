#ifndef GUARDJIT_JIT_CUDA_CUDA_BACKEND_H_
#define GUARDJIT_JIT_CUDA_CUDA_BACKEND_H_

// The CUDA backend on a device: a program's kernels rendered to one CUDA C
// translation unit (cuda_codegen.h), compiled by NVRTC for the device's arch
// (nvrtc_compiler.h), loaded into the device's primary context and launched
// with cuLaunchKernel on the call's stream. Index checks that fail on the
// device OR their bit into a per-kernel word of mapped, pinned host memory,
// which the host reads without a copy. The words belong to the caller
// (NewFaultWords; ProgramRunner lends a set to each call, see
// runtime/program/device_faults.h), not to the cached module that programs with
// the same source share: a failed check is reported at the end of the call that
// made it when that call synchronizes, else at the start of the program's next
// call once the device is past it. The same code runs against the emulated
// driver (testing/cuda/emulated_driver.h) in CI, which loads the CUDA C source
// instead of the CUBIN NVRTC made of it (NVRTC still compiles it).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/cuda/cuda_codegen.h"
#include "jit/cuda/nvrtc_compiler.h"
#include "jit/kernel_backend.h"
#include "jit/kernel_cache.h"
#include "runtime/cuda/cuda_device.h"

namespace guardjit {

class CudaKernelBackend : public KernelBackend, public DeviceTransfer {
 public:
  struct Options {
    int device = 0;  // the CUDA ordinal
    // Threads per block; 0: 256.
    int block_threads = 0;
    // Grid size cap; 0: enough blocks to fill the device (SMs x blocks an SM
    // holds at block_threads).
    int64_t max_blocks = 0;
    // Loaded modules kept for identical programs (LRU beyond).
    int max_cached_modules = 64;
    // The persistent compile cache NVRTC's results go through
    // (NvrtcCompiler::Options::persistent); null: none.
    std::shared_ptr<CompileCache> compile_cache;
  };
  static absl::StatusOr<std::shared_ptr<CudaKernelBackend>> Create(
      Options options);

  std::string name() const override;
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override;
  KernelCacheStats cache_stats() const override { return cache_.stats(); }
  const DeviceTransfer* transfer() const override { return this; }
  // Kernel launches and cuBLASLt GEMM and conv steps (device_steps.h).
  absl::StatusOr<std::unique_ptr<const StepRunner>> MakeStepRunner(
      const PlanStep& step, const Graph& graph,
      std::shared_ptr<const KernelModule> module, int index,
      const std::shared_ptr<ThreadPool>& pool) const override;
  // A dynamic entry's kernels rendered with its size bounds (32-bit index
  // math where they prove it; cuda_index_range.h), bounds chosen from the
  // call that made it guarded by the entry.
  absl::StatusOr<EntryBackend> ForEntry(std::shared_ptr<KernelBackend> self,
                                        const Graph& graph,
                                        const Specialization& spec,
                                        const Plan& plan) const override;
  // reduce-overhead mode (program_graphs.h).
  absl::StatusOr<std::unique_ptr<ProgramGraphs>> MakeGraphs(
      const Program& program, const Plan& plan) const override;

  // Compile with the entry's symbols bounded (CudaCodegenOptions::
  // size_bounds; -1 or missing: unbounded): kernels whose index math the
  // bounds prove within 32 bits compute it in int. The caller guarantees
  // every call stays within them (the entry's guards).
  absl::StatusOr<std::shared_ptr<const KernelModule>> CompileBounded(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels,
      absl::Span<const int64_t> size_bounds);
  // `self` (this backend) as a KernelBackend whose Compile is
  // CompileBounded(..., size_bounds); everything else is `self`'s. For one
  // entry's program (BuildProgram compiles through a KernelBackend); it
  // keeps `self` alive.
  static std::shared_ptr<KernelBackend> WithSizeBounds(
      std::shared_ptr<CudaKernelBackend> self,
      std::vector<int64_t> size_bounds);

  Device device() const override {
    return Device{DeviceType::kCUDA, options_.device};
  }
  absl::StatusOr<Tensor> ToHost(const Tensor& t,
                                const RunContext& ctx) const override;
  absl::StatusOr<Tensor> ToDevice(const Tensor& t,
                                  const RunContext& ctx) const override;
  absl::StatusOr<std::shared_ptr<Allocator>> DefaultAllocator(
      const RunContext& ctx) const override;
  bool launch_blocking() const override;
  absl::Status Synchronize(const RunContext& ctx) const override;

  // Modules NVRTC compiled and loaded, and compiles saved by identical source.
  int compiled() const;
  int cache_hits() const;

 private:
  CudaKernelBackend(Options options, const CudaDevice* device,
                    std::shared_ptr<NvrtcCompiler> nvrtc)
      : options_(options),
        device_(device),
        nvrtc_(std::move(nvrtc)),
        cache_(options.max_cached_modules) {}

  const Options options_;
  const CudaDevice* device_;
  const std::shared_ptr<NvrtcCompiler> nvrtc_;
  // Loaded modules by ("cuda", arch, options, source).
  KernelCache<std::shared_ptr<const KernelModule>> cache_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_BACKEND_H_
