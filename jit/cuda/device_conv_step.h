#ifndef GUARDJIT_JIT_CUDA_DEVICE_CONV_STEP_H_
#define GUARDJIT_JIT_CUDA_DEVICE_CONV_STEP_H_

// A convolution step (conv_step.h) of a program whose kernels run on a CUDA
// device, as im2col + cuBLASLt (runtime/cuda/cublaslt_gemm.h):
// - an im2col kernel, an ordinary kernel step of the plan right before the
//   convolution (loop IR, rendered by the CUDA C generator with the entry's
//   other kernels), writes every image's column matrices into a slot of
//   their own, [N, groups, in_channels x kernel volume, output positions];
//   a pointwise convolution (1x1 kernel, stride 1, no padding) whose input
//   cuBLASLt reads in place has none;
// - one strided-batched cuBLASLt product per group over the images (or per
//   image over the groups, when there are more groups than images) writes
//   the whole result into a buffer from the call's allocator;
// - the step's epilogue kernel, the one FuseConvSteps built for the CPU
//   (bias, activations, a residual add, ...), runs once over that result
//   and stores the step's outputs; an epilogue that only stores the result
//   is not launched: cuBLASLt writes the step's output itself.
// cuDNN is not used: it would be a second dependency tree (its own
// libraries and descriptors) that no test here can run without a GPU,
// while cuBLASLt is already loaded for matrix products and has an emulator.
// The column matrices of the whole batch live until the products are
// enqueued (the allocator is stream-ordered), so device memory grows with
// the batch; one image's matrices are capped at plan time (conv_epilogue.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "jit/kernel_backend.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/conv_step.h"
#include "runtime/cuda/cublaslt_gemm.h"

namespace guardjit {

// Makes `conv`, whose epilogue kernel is `epilogue` (conv.product_param
// set), a device convolution (sets conv.device). Unless it reads its input
// in place, adds the slot of its column matrices to `plan` (its own
// allocation, not a shared buffer) and returns the im2col kernel step that
// writes it, to run right before the convolution step; `label` names the
// node for the plan ("conv1 (im2col)").
std::optional<PlanStep> PlanDeviceConv(ConvStep& conv,
                                       const KernelStep& epilogue, Plan& plan,
                                       const std::string& label);

// Runs device convolution `step` (bound to the call's `symbols` when
// dynamic) on `device`: `slots` holds the program's memory (the input, the
// weight, the column matrices the im2col kernel wrote, and the step's
// outputs already allocated), `params` the epilogue kernel's buffer
// pointers (the result's entry is replaced by the product buffer), `kernel`
// its index in `module`, launched with the call's fault words `faults`. A
// weight whose strides cuBLASLt cannot read is copied contiguous on the
// device first. Returns the epilogue kernel's failed checks, as
// KernelModule::Launch does. Errors name `node`.
absl::StatusOr<int64_t> RunDeviceConvStep(
    const ConvStep& step, const Node& node, const KernelModule& module,
    int kernel, const DeviceFaultWords* faults, absl::Span<void* const> params,
    absl::Span<const Tensor> slots, absl::Span<const int64_t> symbols,
    Device device, const std::shared_ptr<Allocator>& allocator,
    const RunContext& ctx);

// reduce-overhead mode (runtime/cuda/cuda_graph.h): the cuBLASLt products
// of `step` (already bound to the call's symbols) over `slots` (the weight,
// the column matrices in the key's pool or the input read in place),
// writing the whole contiguous result at `product` (the step's output slot
// when cuBLASLt writes it, else the buffer the epilogue kernel reads), each
// operand's address first passed through `where(slot, address)` (an operand
// staged through the graph's pool is read there). FAILED_PRECONDITION,
// naming the operand, when cuBLASLt cannot read the weight's strides (the
// plain path copies it contiguous from the call's allocator, which a
// captured graph cannot do) or a pointwise convolution's input in place.
absl::StatusOr<absl::InlinedVector<CublasLtGemmArgs, 4>> GraphedConvArgs(
    const ConvStep& step, absl::Span<const Tensor> slots, const void* product,
    absl::FunctionRef<const void*(int slot, const void* address)> where);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_DEVICE_CONV_STEP_H_
