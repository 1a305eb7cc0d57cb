#include "jit/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/cuda/cuda_index_range.h"
#include "jit/cuda/device_steps.h"
#include "jit/cuda/program_graphs.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_graph.h"
#include "runtime/cuda/cuda_transfer.h"

namespace guardjit {
namespace {

// GJ_LOGS=codegen: a device module's kernels, the width of each one's index
// math and the size bounds that decided it, then its CUDA C.
[[maybe_unused]] void LogModule(const std::string& backend,
                                const CudaModuleSource& source,
                                absl::Span<const std::string> labels,
                                absl::Span<const int64_t> size_bounds) {
  std::vector<std::string> bounds;
  for (size_t i = 0; i < size_bounds.size(); ++i) {
    if (size_bounds[i] >= 0) {
      bounds.push_back(absl::StrCat("s", i, " <= ", size_bounds[i]));
    }
  }
  std::string text =
      absl::StrCat(backend, ": module of ", source.kernels.size(), " kernels");
  if (!bounds.empty()) {
    absl::StrAppend(&text, ", size bounds ", absl::StrJoin(bounds, ", "));
  }
  absl::StrAppend(&text, "\n");
  for (size_t k = 0; k < source.kernels.size(); ++k) {
    absl::StrAppend(&text, "  ", source.kernels[k].name, " ",
                    k < labels.size() ? labels[k] : "", ": ",
                    source.kernels[k].index32 ? "32" : "64",
                    "-bit index math\n");
  }
  absl::StrAppend(&text, source.source);
  Log(LogTopic::kCodegen, text);
}

// CudaKernelBackend with one entry's size bounds (WithSizeBounds).
class SizeBoundedCudaBackend : public KernelBackend {
 public:
  SizeBoundedCudaBackend(std::shared_ptr<CudaKernelBackend> backend,
                         std::vector<int64_t> size_bounds)
      : backend_(std::move(backend)), size_bounds_(std::move(size_bounds)) {}

  std::string name() const override { return backend_->name(); }
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override {
    return backend_->CompileBounded(kernels, labels, size_bounds_);
  }
  const DeviceTransfer* transfer() const override {
    return backend_->transfer();
  }
  bool host_code() const override { return backend_->host_code(); }
  KernelCacheStats cache_stats() const override {
    return backend_->cache_stats();
  }
  absl::StatusOr<std::unique_ptr<const StepRunner>> MakeStepRunner(
      const PlanStep& step, const Graph& graph,
      std::shared_ptr<const KernelModule> module, int index,
      const std::shared_ptr<ThreadPool>& pool) const override {
    return backend_->MakeStepRunner(step, graph, std::move(module), index,
                                    pool);
  }
  absl::StatusOr<std::unique_ptr<ProgramGraphs>> MakeGraphs(
      const Program& program, const Plan& plan) const override {
    return backend_->MakeGraphs(program, plan);
  }

 private:
  const std::shared_ptr<CudaKernelBackend> backend_;
  const std::vector<int64_t> size_bounds_;
};

constexpr char kIndexBoundsPurpose[] =
    "the entry's CUDA kernels index in 32 bits";

// "x.size()[0]": where a call supplies symbol `s`.
std::string SymbolSourceName(const Graph& graph, const SymbolSource& s) {
  return absl::StrCat(graph.node(graph.inputs()[s.input]).name, ".size()[",
                      s.dim, "]");
}

// A dynamic device entry's size bounds: the specialization's known ones,
// and, where it allows, bounds chosen from the call that made the entry
// under which more kernels narrow to 32-bit index math.
void PlanIndexBounds(const Graph& graph, const Specialization& spec,
                     const Plan& plan, IndexBounds& bounds, EntryBackend& out) {
  const int n = static_cast<int>(spec.symbols.size());
  std::vector<int64_t> known(n, -1);
  for (int i = 0; i < n && i < static_cast<int>(spec.symbol_max.size()); ++i) {
    if (spec.symbol_max[i] != Specialization::kUnbounded) {
      known[i] = spec.symbol_max[i];
    }
  }
  std::vector<int64_t> hints;
  if (spec.may_choose_bounds &&
      spec.example_sizes.size() == spec.inputs.size()) {
    for (const SymbolSource& s : spec.symbols) {
      hints.push_back(spec.example_sizes[s.input][s.dim]);
    }
  }
  std::vector<const Kernel*> kernels;
  for (const PlanStep& step : plan.steps) {
    if (step.is_kernel) kernels.push_back(&step.kernel.kernel);
  }
  bounds = ChooseIndexBounds(kernels, known, hints);
  for (int i : bounds.chosen) {
    out.chosen_bounds.push_back({i, bounds.size_bounds[i]});
    out.chosen_sources.push_back(SymbolSourceName(graph, spec.symbols[i]));
  }
  std::vector<std::string> used;
  for (int i = 0; i < n; ++i) {
    if (bounds.size_bounds[i] < 0) continue;
    used.push_back(absl::StrCat(SymbolSourceName(graph, spec.symbols[i]),
                                " <= ", bounds.size_bounds[i]));
  }
  if (!used.empty()) {
    int narrow = 0;
    for (bool b : bounds.index32) narrow += b;
    out.description =
        absl::StrCat("32-bit index math in ", narrow, " of ", kernels.size(),
                     " kernels (", absl::StrJoin(used, ", "), ")");
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<const StepRunner>>
CudaKernelBackend::MakeStepRunner(const PlanStep& step, const Graph& graph,
                                  std::shared_ptr<const KernelModule> module,
                                  int index,
                                  const std::shared_ptr<ThreadPool>&) const {
  return MakeDeviceStep(step, graph, std::move(module), index);
}

absl::StatusOr<std::unique_ptr<ProgramGraphs>> CudaKernelBackend::MakeGraphs(
    const Program& program, const Plan& plan) const {
  return CudaProgramGraphs::Create(program, plan);
}

absl::StatusOr<EntryBackend> CudaKernelBackend::ForEntry(
    std::shared_ptr<KernelBackend> self, const Graph& graph,
    const Specialization& spec, const Plan& plan) const {
  if (spec.symbols.empty()) return EntryBackend{.backend = std::move(self)};
  if (self.get() != this) {
    return absl::InternalError("ForEntry of another backend");
  }
  auto cuda = std::static_pointer_cast<CudaKernelBackend>(std::move(self));
  EntryBackend entry;
  IndexBounds bounds;
  PlanIndexBounds(graph, spec, plan, bounds, entry);
  entry.chosen_purpose = kIndexBoundsPurpose;
  entry.backend =
      WithSizeBounds(std::move(cuda), std::move(bounds.size_bounds));
  if (!entry.description.empty() && LogEnabled(LogTopic::kCodegen)) {
    Log(LogTopic::kCodegen,
        absl::StrCat("graph '", graph.name(), "': ", entry.description,
                     entry.chosen_bounds.empty()
                         ? ""
                         : absl::StrCat("; the entry guards ",
                                        entry.chosen_bounds.size(),
                                        " bounds chosen for it")));
  }
  return entry;
}

std::shared_ptr<KernelBackend> CudaKernelBackend::WithSizeBounds(
    std::shared_ptr<CudaKernelBackend> self, std::vector<int64_t> size_bounds) {
  return std::make_shared<SizeBoundedCudaBackend>(std::move(self),
                                                  std::move(size_bounds));
}

namespace {

// One caller's fault words: pinned host memory the device writes through its
// mapped address (no copy to read them), and an event marking the end of the
// call that last launched with them.
class CudaFaultWords : public DeviceFaultWords {
 public:
  static absl::StatusOr<std::unique_ptr<CudaFaultWords>> Create(
      const CudaDevice* device, int kernels) {
    std::unique_ptr<CudaFaultWords> words(new CudaFaultWords(device, kernels));
    const CudaDriver& driver = device->driver();
    ASSIGN_OR_RETURN(CudaContextScope scope, device->MakeCurrent());
    const size_t n = std::max<size_t>(1, static_cast<size_t>(kernels));
    void* host = nullptr;
    RETURN_IF_CUDA_ERROR(driver.cuMemHostAlloc(
        &host, n * sizeof(uint64_t),
        CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    words->host_ = static_cast<uint64_t*>(host);
    std::fill(words->host_, words->host_ + n, 0);
    RETURN_IF_CUDA_ERROR(
        driver.cuMemHostGetDevicePointer(&words->device_address_, host, 0));
    RETURN_IF_CUDA_ERROR(
        driver.cuEventCreate(&words->end_, CU_EVENT_DISABLE_TIMING));
    return words;
  }

  ~CudaFaultWords() override {
    const CudaDriver& driver = device_->driver();
    absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
    if (!scope.ok()) return;
    if (end_ != nullptr) (void)driver.cuEventDestroy(end_);
    if (host_ != nullptr) (void)driver.cuMemFreeHost(host_);
  }

  uint64_t device_address(int index) const override {
    return device_address_ + static_cast<uint64_t>(index) * sizeof(uint64_t);
  }
  int size() const override { return kernels_; }

  std::pair<int, int64_t> Take() override {
    for (int k = 0; k < kernels_; ++k) {
      if (__atomic_load_n(&host_[k], __ATOMIC_ACQUIRE) == 0) continue;
      const uint64_t mask = __atomic_exchange_n(&host_[k], 0, __ATOMIC_ACQ_REL);
      if (mask != 0) return {k, static_cast<int64_t>(mask)};
    }
    return {-1, 0};
  }

  absl::Status Wait(const RunContext& ctx) override {
    ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
    RETURN_IF_CUDA_ERROR(device_->driver().cuStreamSynchronize(
        static_cast<CUstream>(ctx.stream)));
    return absl::OkStatus();
  }

  absl::Status MarkEnd(const RunContext& ctx) override {
    ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
    RETURN_IF_CUDA_ERROR(device_->driver().cuEventRecord(
        end_, static_cast<CUstream>(ctx.stream)));
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Done() const override {
    ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
    const CUresult r = device_->driver().cuEventQuery(end_);
    if (r == CUDA_ERROR_NOT_READY) return false;
    RETURN_IF_CUDA_ERROR(r);
    return true;
  }

 private:
  CudaFaultWords(const CudaDevice* device, int kernels)
      : device_(device), kernels_(kernels) {}

  const CudaDevice* device_;
  const int kernels_;
  uint64_t* host_ = nullptr;
  CUdeviceptr device_address_ = 0;
  CUevent end_ = nullptr;
};

class CudaDeviceModule : public KernelModule {
 public:
  CudaDeviceModule(const CudaDevice* device, CudaModuleSource source,
                   int64_t max_blocks)
      : device_(device), source_(std::move(source)), max_blocks_(max_blocks) {}

  ~CudaDeviceModule() override {
    const CudaDriver& driver = device_->driver();
    absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
    if (!scope.ok()) return;
    if (module_ != nullptr) (void)driver.cuModuleUnload(module_);
  }

  absl::Status Load(const std::string& image) {
    // A program with no fused kernels (views and host steps only) loads
    // nothing.
    if (source_.kernels.empty()) return absl::OkStatus();
    const CudaDriver& driver = device_->driver();
    ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
    RETURN_IF_CUDA_ERROR(driver.cuModuleLoadData(&module_, image.data()));
    for (const CudaKernelInfo& k : source_.kernels) {
      CUfunction fn = nullptr;
      absl::Status found =
          CudaStatus(driver.cuModuleGetFunction(&fn, module_, k.name.c_str()),
                     absl::StrCat("cuModuleGetFunction(", k.name, ")"));
      RETURN_IF_ERROR(found);
      functions_.push_back(fn);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<DeviceFaultWords>> NewFaultWords()
      const override {
    ASSIGN_OR_RETURN(std::unique_ptr<CudaFaultWords> words,
                     CudaFaultWords::Create(
                         device_, static_cast<int>(source_.kernels.size())));
    return std::unique_ptr<DeviceFaultWords>(std::move(words));
  }

  absl::Status DescribeLaunch(int index, void* const* buffers,
                              absl::Span<const int64_t> sizes,
                              const DeviceFaultWords* faults,
                              CudaKernelLaunch* launch) const override {
    if (index < 0 || index >= static_cast<int>(functions_.size())) {
      return absl::InternalError(absl::StrCat("no kernel ", index));
    }
    const CudaKernelInfo& info = source_.kernels[index];
    if (static_cast<int>(sizes.size()) != info.num_size_params) {
      return absl::InternalError(absl::StrCat(info.name, " takes ",
                                              info.num_size_params,
                                              " sizes, got ", sizes.size()));
    }
    if (info.has_fault_flag && (faults == nullptr || index >= faults->size())) {
      return absl::InternalError(absl::StrCat(
          info.name, " has index checks but the launch brings no fault word"));
    }
    // Every parameter is 8 bytes: pointers, long long sizes, the fault
    // word's device address.
    launch->function = functions_[index];
    launch->params.clear();
    for (int b = 0; b < info.num_buffers; ++b) {
      launch->params.push_back(reinterpret_cast<uintptr_t>(buffers[b]));
    }
    for (int64_t v : sizes) launch->params.push_back(static_cast<uint64_t>(v));
    if (info.has_fault_flag) {
      launch->params.push_back(faults->device_address(index));
    }
    launch->buffers.assign(launch->params.size(), CudaGraphBuffer{});
    launch->grid_x = static_cast<unsigned>(info.GridBlocks(sizes, max_blocks_));
    launch->block_x = static_cast<unsigned>(info.block_threads);
    launch->shared_bytes = 0;
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    CudaKernelLaunch launch;
    RETURN_IF_ERROR(DescribeLaunch(index, buffers, sizes, faults, &launch));
    ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
    RETURN_IF_ERROR(LaunchKernel(device_->driver(), launch,
                                 static_cast<CUstream>(ctx.stream)));
    return 0;
  }

 private:
  const CudaDevice* device_;
  const CudaModuleSource source_;
  const int64_t max_blocks_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<CudaKernelBackend>> CudaKernelBackend::Create(
    Options options) {
  ASSIGN_OR_RETURN(const CudaDevice* device, CudaDevice::Get(options.device));
  NvrtcCompiler::Options nvrtc_options;
  nvrtc_options.persistent = options.compile_cache;
  ASSIGN_OR_RETURN(std::shared_ptr<NvrtcCompiler> nvrtc,
                   NvrtcCompiler::Create(std::move(nvrtc_options)));
  const CudaDeviceProperties& props = device->properties();
  if (options.block_threads <= 0) options.block_threads = 256;
  options.block_threads = std::min(options.block_threads,
                                   std::max(32, props.max_threads_per_block));
  if (options.max_blocks <= 0) {
    const int per_sm = std::max(
        1, props.max_threads_per_multiprocessor / options.block_threads);
    options.max_blocks =
        std::max<int64_t>(1, int64_t{props.multiprocessor_count} * per_sm);
  }
  return std::shared_ptr<CudaKernelBackend>(
      new CudaKernelBackend(options, device, std::move(nvrtc)));
}

std::string CudaKernelBackend::name() const {
  return absl::StrCat("cuda:", device_->properties().arch.ToString());
}

absl::StatusOr<std::shared_ptr<const KernelModule>> CudaKernelBackend::Compile(
    absl::Span<const Kernel* const> kernels,
    absl::Span<const std::string> labels) {
  return CompileBounded(kernels, labels, {});
}

absl::StatusOr<std::shared_ptr<const KernelModule>>
CudaKernelBackend::CompileBounded(absl::Span<const Kernel* const> kernels,
                                  absl::Span<const std::string> labels,
                                  absl::Span<const int64_t> size_bounds) {
  CudaCodegenOptions codegen;
  codegen.block_threads = options_.block_threads;
  codegen.size_bounds.assign(size_bounds.begin(), size_bounds.end());
  ASSIGN_OR_RETURN(CudaModuleSource source, RenderCudaModule(kernels, codegen));
  if (LogEnabled(LogTopic::kCodegen)) {
    LogModule(name(), source, labels, size_bounds);
  }
  const KernelCacheKey key = KernelCacheKey::Make(
      "cuda", device_->properties().arch.ToString(),
      absl::StrCat("block_threads=", options_.block_threads,
                   " max_blocks=", options_.max_blocks),
      source.source);
  return cache_.GetOrCompile(
      key, ModuleLabel(labels, kernels.size()),
      [&]() -> absl::StatusOr<std::shared_ptr<const KernelModule>> {
        CudaCompileRequest request;
        request.source = source.source;
        request.arch = device_->properties().arch;
        ASSIGN_OR_RETURN(std::shared_ptr<const CudaCompileResult> compiled,
                         nvrtc_->Compile(request));
        // A real driver loads NVRTC's image (CUBIN, or PTX past NVRTC's
        // newest arch, which the driver JIT-compiles); the emulated one the
        // source.
        std::string image = device_->driver().loads_cuda_source
                                ? source.source
                                : compiled->image;
        image.push_back('\0');
        auto module = std::make_shared<CudaDeviceModule>(
            device_, std::move(source), options_.max_blocks);
        RETURN_IF_ERROR(module->Load(image));
        return std::shared_ptr<const KernelModule>(std::move(module));
      });
}

absl::StatusOr<Tensor> CudaKernelBackend::ToHost(const Tensor& t,
                                                 const RunContext& ctx) const {
  ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
  return CudaToHost(t, ctx.stream);
}

absl::StatusOr<std::shared_ptr<Allocator>> CudaKernelBackend::DefaultAllocator(
    const RunContext& ctx) const {
  ASSIGN_OR_RETURN(CudaCachingAllocator * pool,
                   CudaCachingAllocator::ForDevice(options_.device));
  return pool->OnStream(ctx.stream);
}

absl::Status CudaKernelBackend::Synchronize(const RunContext& ctx) const {
  ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
  RETURN_IF_CUDA_ERROR(
      device_->driver().cuStreamSynchronize(static_cast<CUstream>(ctx.stream)));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> CudaKernelBackend::ToDevice(
    const Tensor& t, const RunContext& ctx) const {
  ASSIGN_OR_RETURN(CudaContextScope scope, device_->MakeCurrent());
  std::shared_ptr<Allocator> allocator = ctx.allocator;
  if (allocator == nullptr) {
    ASSIGN_OR_RETURN(allocator, DefaultAllocator(ctx));
  }
  ASSIGN_OR_RETURN(Tensor dev,
                   CudaToDevice(t, device(), std::move(allocator), ctx.stream));
  return dev;
}

bool CudaKernelBackend::launch_blocking() const {
  static const bool kBlocking = [] {
    const char* v = std::getenv("GJ_CUDA_LAUNCH_BLOCKING");
    return v != nullptr && std::string(v) == "1";
  }();
  return kBlocking;
}

int CudaKernelBackend::compiled() const {
  return static_cast<int>(cache_.stats().compiles);
}

int CudaKernelBackend::cache_hits() const {
  return static_cast<int>(cache_.stats().hits);
}

}  // namespace guardjit
