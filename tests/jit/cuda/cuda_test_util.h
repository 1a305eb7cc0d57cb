#ifndef GUARDJIT_TESTS_JIT_CUDA_CUDA_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_CUDA_CUDA_TEST_UTIL_H_

// Helpers of the CUDA backend's tests.

#include "absl/status/statusor.h"
#include "jit/cuda/cuda_codegen.h"
#include "jit/schedule/fusion.h"

namespace guardjit::testing {

// The CUDA C of every fused kernel of `plan` (its kernel steps in order).
absl::StatusOr<CudaModuleSource> RenderPlan(
    const Plan& plan, const CudaCodegenOptions& options = {});

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_JIT_CUDA_CUDA_TEST_UTIL_H_
