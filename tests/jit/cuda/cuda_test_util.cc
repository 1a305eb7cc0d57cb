#include "tests/jit/cuda/cuda_test_util.h"

#include <vector>

namespace guardjit::testing {

absl::StatusOr<CudaModuleSource> RenderPlan(const Plan& plan,
                                            const CudaCodegenOptions& options) {
  std::vector<const Kernel*> kernels;
  for (const PlanStep& step : plan.steps) {
    if (step.is_kernel) kernels.push_back(&step.kernel.kernel);
  }
  return RenderCudaModule(kernels, options);
}

}  // namespace guardjit::testing
