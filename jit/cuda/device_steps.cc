#include "jit/cuda/device_steps.h"

#include <utility>

#include "core/status_macros.h"
#include "jit/cuda/device_conv_step.h"
#include "jit/cuda/device_gemm_step.h"
#include "jit/steps/kernel_steps.h"

namespace guardjit {
namespace {

// A cuBLASLt matrix product or convolution with the step's kernel as its
// epilogue, launched on the call's stream.
template <typename Extern, auto kRun>
class DeviceExternStep : public StepRunner {
 public:
  DeviceExternStep(const PlanStep& step, std::shared_ptr<const Extern> plan,
                   const Node& node, std::shared_ptr<const KernelModule> module,
                   int index)
      : plan_(std::move(plan)),
        node_(node),
        module_(std::move(module)),
        index_(index),
        buffer_slots_(step.kernel.buffer_slots),
        checks_(step.kernel.checks) {}

  absl::Status Run(StepCall& call) const override {
    const absl::InlinedVector<void*, 16> pointers =
        KernelParams(call, buffer_slots_);
    ASSIGN_OR_RETURN(const int64_t failed,
                     kRun(*plan_, node_, *module_, index_, call.fault_words,
                          pointers, call.slots, call.symbols,
                          call.program.device(), call.allocator, call.ctx));
    return failed == 0 ? absl::OkStatus()
                       : FailedCheck(checks_, failed, call.symbols);
  }
  int module_kernel() const override { return index_; }
  absl::Status CheckError(int check,
                          absl::Span<const int64_t> symbols) const override {
    return FailedCheck(checks_, int64_t{1} << check, symbols);
  }

 private:
  const std::shared_ptr<const Extern> plan_;
  const Node& node_;  // the program's graph outlives its steps
  const std::shared_ptr<const KernelModule> module_;
  const int index_;
  const std::vector<int> buffer_slots_;
  const std::vector<IndexCheck> checks_;
};

using DeviceGemmStep = DeviceExternStep<GemmStep, &RunDeviceGemmStep>;
using DeviceConvStep = DeviceExternStep<ConvStep, &RunDeviceConvStep>;

}  // namespace

absl::StatusOr<std::unique_ptr<const StepRunner>> MakeDeviceStep(
    const PlanStep& step, const Graph& graph,
    std::shared_ptr<const KernelModule> module, int index) {
  if (step.gemm != nullptr) {
    return std::make_unique<DeviceGemmStep>(
        step, step.gemm, graph.node(step.node), std::move(module), index);
  }
  if (step.conv != nullptr) {
    return std::make_unique<DeviceConvStep>(
        step, step.conv, graph.node(step.node), std::move(module), index);
  }
  return std::make_unique<ModuleKernelStep>(step.kernel, std::move(module),
                                            index);
}

}  // namespace guardjit
