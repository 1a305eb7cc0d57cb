#include "jit/steps/parallel_loop.h"

#include <algorithm>

#include "jit/steps/kernel_steps.h"

namespace guardjit {
namespace {

bool IsUnit(const LoopRange& loop) {
  return loop.extent.is_const() && loop.extent.value() == 1;
}

}  // namespace

void LeadWithParallelLoop(Kernel& kernel) {
  std::vector<LoopRange>& outer = kernel.outer;
  const auto first = std::find_if_not(outer.begin(), outer.end(), IsUnit);
  if (first == outer.begin() || first == outer.end()) return;
  if (!first->extent.is_const()) return;
  Kernel rotated = kernel;
  const auto at = rotated.outer.begin() + (first - outer.begin());
  std::rotate(rotated.outer.begin(), at, at + 1);
  if (StaticSplitOf(rotated).grain > 0) kernel.outer = std::move(rotated.outer);
}

void LeadWithParallelLoops(Plan& plan) {
  for (PlanStep& step : plan.steps) {
    if (!step.is_kernel || step.gemm != nullptr || step.conv != nullptr) {
      continue;
    }
    LeadWithParallelLoop(step.kernel.kernel);
  }
}

}  // namespace guardjit
