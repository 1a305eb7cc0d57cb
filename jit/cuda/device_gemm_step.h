#ifndef GUARDJIT_JIT_CUDA_DEVICE_GEMM_STEP_H_
#define GUARDJIT_JIT_CUDA_DEVICE_GEMM_STEP_H_

// A GEMM step (gemm_step.h) of a program whose kernels run on a CUDA device:
// the product runs on cuBLASLt (runtime/cuda/cublaslt_gemm.h), on the call's
// stream, and the epilogue either runs inside it (GemmStep::device_epilogue:
// a bare product, relu or tanh-gelu, addmm's bias as the epilogue's bias
// vector or as cuBLASLt's C matrix at addmm's beta; cuBLASLt writes the
// step's output) or as the step's epilogue kernel, launched by the device
// backend right after cuBLASLt wrote the whole product into a buffer from
// the call's allocator. The plans come from the CPU's pattern matching
// (FuseGemmEpilogues with `device`), so both targets fuse the same graphs.

#include <cstdint>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "jit/kernel_backend.h"
#include "jit/steps/gemm_step.h"
#include "runtime/cuda/cublaslt_gemm.h"

namespace guardjit {

// Runs `step` (bound to the call's `symbols` when dynamic) on `device`:
// `slots` holds the program's memory (operands, and the step's outputs
// already allocated), `params` the epilogue kernel's buffer pointers (the
// product's entry is replaced by the product buffer), `kernel` its index in
// `module`, launched with the call's fault words `faults`. Operands whose
// strides cuBLASLt cannot read are copied contiguous on the device first.
// Returns the epilogue kernel's failed checks, as KernelModule::Launch does.
// Errors name `node`.
absl::StatusOr<int64_t> RunDeviceGemmStep(
    const GemmStep& step, const Node& node, const KernelModule& module,
    int kernel, const DeviceFaultWords* faults, absl::Span<void* const> params,
    absl::Span<const Tensor> slots, absl::Span<const int64_t> symbols,
    Device device, const std::shared_ptr<Allocator>& allocator,
    const RunContext& ctx);

// reduce-overhead mode (runtime/cuda/cuda_graph.h): the cuBLASLt arguments
// of `step` (already bound to the call's symbols) over `slots`, the product
// written at `product` (the step's output slot for a device epilogue, else
// the buffer the epilogue kernel reads), each operand's address first
// passed through `where(slot, address)` (an operand staged through the
// graph's pool is read or written there). FAILED_PRECONDITION, naming the
// operand, when cuBLASLt cannot read an operand's strides (the plain path
// copies it contiguous from the call's allocator, which a captured graph
// cannot do).
absl::StatusOr<CublasLtGemmArgs> GraphedGemmArgs(
    const GemmStep& step, absl::Span<const Tensor> slots, const void* product,
    absl::FunctionRef<const void*(int slot, const void* address)> where);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_DEVICE_GEMM_STEP_H_
