#include "jit/llvm/llvm_backend.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/constant_arena.h"
#include "core/status_macros.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/packed_gemm.h"

namespace guardjit {
namespace {

class LlvmKernelModule : public KernelModule {
 public:
  LlvmKernelModule(std::vector<HostKernelFn> functions,
                   std::vector<IndexExpr> outer_extents,
                   std::vector<std::shared_ptr<const ModuleCode>> code,
                   CodeOrigin origin, std::shared_ptr<Allocator> packed_weights)
      : functions_(std::move(functions)),
        outer_extents_(std::move(outer_extents)),
        code_(std::move(code)),
        origin_(origin),
        packed_weights_(std::move(packed_weights)) {}

  // One block for the packed weights of the program's packed products
  // (core/constant_arena.h): whole huge pages where the weights add up to
  // them, not a 4 KiB fault per page of each (the GPT-2 models' twenty
  // weights of 0.25-1 MiB); null when it has none.
  const std::shared_ptr<Allocator>& packed_weights() const {
    return packed_weights_;
  }

  // The whole kernel on the calling thread.
  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    (void)faults;
    (void)ctx;
    if (index < 0 || index >= static_cast<int>(functions_.size())) {
      return absl::InternalError(absl::StrCat("no kernel ", index));
    }
    return functions_[index](buffers, sizes.data(), 0,
                             outer_extents_[index].Evaluate(sizes));
  }

  const std::vector<HostKernelFn>* host_functions() const override {
    return &functions_;
  }
  CodeOrigin origin() const override { return origin_; }

 private:
  const std::vector<HostKernelFn> functions_;
  const std::vector<IndexExpr> outer_extents_;
  // The modules the functions live in: their code is removed from the JIT
  // with the last owner (this module's programs, the compiler's cache).
  const std::vector<std::shared_ptr<const ModuleCode>> code_;
  const CodeOrigin origin_;
  const std::shared_ptr<Allocator> packed_weights_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const KernelModule>> LlvmKernelBackend::Compile(
    absl::Span<const Kernel* const> kernels,
    absl::Span<const std::string> labels) {
  std::vector<std::shared_ptr<const ModuleCode>> code;
  CodeOrigin origin;
  // Packed products on the library's ahead-of-time kernels compile nothing:
  // their place in `functions` stays null (MakePackedGemmStep finds theirs).
  std::vector<const Kernel*> to_compile;
  std::vector<std::string> compile_labels;
  std::vector<int> compiled_at;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i]->packed_gemm.has_value() &&
        AheadOfTimePackedGemm(*kernels[i]->packed_gemm) != nullptr) {
      continue;
    }
    compiled_at.push_back(static_cast<int>(i));
    to_compile.push_back(kernels[i]);
    if (i < labels.size()) compile_labels.push_back(labels[i]);
  }
  std::vector<CompiledKernelFn> functions(kernels.size(), nullptr);
  if (!to_compile.empty()) {
    ASSIGN_OR_RETURN(
        std::vector<CompiledKernelFn> compiled,
        compiler_->Compile(to_compile, &code, compile_labels, &origin));
    for (size_t j = 0; j < compiled.size(); ++j) {
      functions[compiled_at[j]] = compiled[j];
    }
  }
  std::vector<IndexExpr> extents;
  for (const Kernel* k : kernels) {
    extents.push_back(k->outer.empty() ? IndexExpr::Const(1)
                                       : k->outer[0].extent);
  }
  size_t packed_bytes = 0;
  for (const Kernel* k : kernels) {
    if (k->packed_gemm.has_value()) {
      packed_bytes += ConstantArena::Rounded(PackedGemmFloats(*k->packed_gemm) *
                                             sizeof(float));
    }
  }
  return std::make_shared<const LlvmKernelModule>(
      std::move(functions), std::move(extents), std::move(code), origin,
      packed_bytes > 0 ? ConstantArena::Create(packed_bytes) : nullptr);
}

bool LlvmKernelBackend::RunsKernelOf(const PlanStep& step) const {
  return HostStepRunsKernel(step);
}

absl::StatusOr<std::unique_ptr<const StepRunner>>
LlvmKernelBackend::MakeStepRunner(
    const PlanStep& step, const Graph& graph,
    std::shared_ptr<const KernelModule> module, int index,
    const std::shared_ptr<ThreadPool>& pool) const {
  if (step.gemm != nullptr && step.gemm->packed.has_value()) {
    // The packed product's code, then its epilogue's where it runs.
    const std::vector<HostKernelFn>* host = module->host_functions();
    const int count = HostStepRunsKernel(step) ? 2 : 1;
    if (host == nullptr || index < 0 ||
        index + count > static_cast<int>(host->size())) {
      return absl::InternalError(absl::StrCat(
          name(), ": no host functions for the packed product at ", index));
    }
    const auto* llvm_module =
        dynamic_cast<const LlvmKernelModule*>(module.get());
    return MakePackedGemmStep(
        step, graph, (*host)[index], count == 2 ? (*host)[index + 1] : nullptr,
        pool, llvm_module != nullptr ? llvm_module->packed_weights() : nullptr);
  }
  if (index == -1 && !HostStepRunsKernel(step)) {
    return MakeHostStep(step, graph, nullptr, pool);
  }
  const std::vector<HostKernelFn>* host = module->host_functions();
  if (host == nullptr || index < 0 || index >= static_cast<int>(host->size())) {
    return absl::InternalError(
        absl::StrCat(name(), ": no host function for kernel ", index));
  }
  return MakeHostStep(step, graph, (*host)[index], pool);
}

}  // namespace guardjit
