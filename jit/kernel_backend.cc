#include "jit/kernel_backend.h"

#include "absl/strings/str_cat.h"
#include "jit/steps/kernel_steps.h"

namespace guardjit {

absl::StatusOr<std::unique_ptr<const StepRunner>> KernelBackend::MakeStepRunner(
    const PlanStep& step, const Graph& graph,
    std::shared_ptr<const KernelModule> module, int index,
    const std::shared_ptr<ThreadPool>& pool) const {
  (void)graph;
  (void)pool;
  if (step.gemm != nullptr || step.conv != nullptr) {
    return absl::InternalError(absl::StrCat(
        "a GEMM or conv step in a plan for the ", name(), " backend"));
  }
  return std::make_unique<ModuleKernelStep>(step.kernel, std::move(module),
                                            index);
}

}  // namespace guardjit
