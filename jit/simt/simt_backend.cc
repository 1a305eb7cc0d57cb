#include "jit/simt/simt_backend.h"

#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

class SimtKernelModule : public KernelModule {
 public:
  SimtKernelModule(CudaModuleSource source, std::unique_ptr<SimtModule> module,
                   int64_t max_blocks)
      : source_(std::move(source)),
        module_(std::move(module)),
        max_blocks_(max_blocks) {}

  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* fault_words,
                                 const RunContext& ctx) const override {
    (void)fault_words;  // runs to completion here: the mask is returned
    (void)ctx;
    if (index < 0 || index >= static_cast<int>(source_.kernels.size())) {
      return absl::InternalError(absl::StrCat("no kernel ", index));
    }
    const CudaKernelInfo& info = source_.kernels[index];
    if (static_cast<int>(sizes.size()) != info.num_size_params) {
      return absl::InternalError(absl::StrCat(info.name, " takes ",
                                              info.num_size_params,
                                              " sizes, got ", sizes.size()));
    }
    // cuLaunchKernel's convention: a pointer to each argument's value.
    absl::InlinedVector<void*, 16> params;
    for (int b = 0; b < info.num_buffers; ++b) {
      params.push_back(const_cast<void**>(&buffers[b]));
    }
    absl::InlinedVector<long long, 8> values(sizes.begin(), sizes.end());
    for (long long& v : values) params.push_back(&v);
    unsigned long long faults = 0;
    unsigned long long* fault_flag = &faults;
    if (info.has_fault_flag) params.push_back(&fault_flag);
    const int64_t blocks = info.GridBlocks(sizes, max_blocks_);
    RETURN_IF_ERROR(module_->Launch(
        info.name, SimtDim3{static_cast<uint32_t>(blocks), 1, 1},
        SimtDim3{static_cast<uint32_t>(info.block_threads), 1, 1},
        params.data()));
    return static_cast<int64_t>(faults);
  }

 private:
  const CudaModuleSource source_;
  const std::unique_ptr<SimtModule> module_;
  const int64_t max_blocks_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const KernelModule>> SimtCudaBackend::Compile(
    absl::Span<const Kernel* const> kernels,
    absl::Span<const std::string> labels) {
  ASSIGN_OR_RETURN(CudaModuleSource source,
                   RenderCudaModule(kernels, options_.codegen));
  // The emulator's host compiler and flags change the code; the NVRTC archs
  // only what is checked.
  std::string options =
      absl::StrCat("block_threads=", options_.codegen.block_threads,
                   " max_blocks=", options_.max_blocks,
                   " cxx=", options_.simt.host_compiler);
  for (const std::string& flag : options_.simt.extra_flags) {
    absl::StrAppend(&options, " ", flag);
  }
  const KernelCacheKey key =
      KernelCacheKey::Make("cuda-simt", "", std::move(options), source.source);
  return cache_.GetOrCompile(key, ModuleLabel(labels, kernels.size()),
                             [&] { return CompileModule(std::move(source)); });
}

absl::StatusOr<std::shared_ptr<const KernelModule>>
SimtCudaBackend::CompileModule(CudaModuleSource source) {
  if (!options_.nvrtc_archs.empty()) {
    std::shared_ptr<NvrtcCompiler> nvrtc;
    CudaArch arch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (nvrtc_ == nullptr) {
        ASSIGN_OR_RETURN(nvrtc_, NvrtcCompiler::Create());
      }
      nvrtc = nvrtc_;
      arch = options_.nvrtc_archs[next_arch_++ % options_.nvrtc_archs.size()];
    }
    {
      CudaCompileRequest request;
      request.source = source.source;
      request.arch = arch;
      ASSIGN_OR_RETURN(auto result, nvrtc->Compile(request));
      if (result->ptx || result->kernels.size() != source.kernels.size()) {
        return absl::InternalError(absl::StrCat(
            "NVRTC gave ", result->ptx ? "PTX" : "a CUBIN", " with ",
            result->kernels.size(), " kernels for ", arch.ToString(),
            "; expected a CUBIN with ", source.kernels.size()));
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++nvrtc_checked_;
    }
  }
  std::vector<std::string> names;
  for (const CudaKernelInfo& k : source.kernels) names.push_back(k.name);
  ASSIGN_OR_RETURN(std::unique_ptr<SimtModule> simt,
                   SimtModule::Compile(source.source, names, options_.simt));
  auto module = std::make_shared<const SimtKernelModule>(
      std::move(source), std::move(simt), options_.max_blocks);
  return std::shared_ptr<const KernelModule>(std::move(module));
}

int SimtCudaBackend::compiled() const {
  return static_cast<int>(cache_.stats().compiles);
}

int SimtCudaBackend::nvrtc_checked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nvrtc_checked_;
}

int SimtCudaBackend::cache_hits() const {
  return static_cast<int>(cache_.stats().hits);
}

}  // namespace guardjit
