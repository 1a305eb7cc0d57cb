#ifndef GUARDJIT_JIT_CUDA_DEVICE_STEPS_H_
#define GUARDJIT_JIT_CUDA_DEVICE_STEPS_H_

// The CUDA backend's step runners (runtime/program/step_runner.h): a fused
// kernel launched through the module (jit/steps/kernel_steps.h's
// ModuleKernelStep), and the GEMM and conv steps on cuBLASLt
// (device_gemm_step.h, device_conv_step.h) with the step's kernel as their
// epilogue.

#include <memory>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "jit/schedule/fusion.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/step_runner.h"

namespace guardjit {

// The runner of device plan step `step`, whose kernel is `index` in
// `module`.
absl::StatusOr<std::unique_ptr<const StepRunner>> MakeDeviceStep(
    const PlanStep& step, const Graph& graph,
    std::shared_ptr<const KernelModule> module, int index);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_DEVICE_STEPS_H_
