#ifndef GUARDJIT_JIT_KERNEL_BACKEND_H_
#define GUARDJIT_JIT_KERNEL_BACKEND_H_

// Where a program's fused kernels run. CompiledProgram runs a plan: kernel
// steps, eager steps and extern steps, allocating and releasing their
// buffers; a KernelBackend turns the plan's loop-IR kernels into something
// it can launch. The CPU backend is built in (LLVM ORC through
// KernelCompiler, the kernels' first outer loop split across a ThreadPool);
// others plug in here: the CUDA C generator through the SIMT emulator
// (jit/cuda/simt_backend.h) and through NVRTC + the driver API on a device
// (jit/cuda/cuda_backend.h).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/run_context.h"
#include "jit/loop_ir.h"

namespace guardjit {

struct CudaKernelLaunch;  // runtime/cuda/cuda_graph.h

// The compiled kernels of one program.
class KernelModule {
 public:
  virtual ~KernelModule() = default;
  // Runs kernel `index` (its position in the list Compile got) over all its
  // outer points, to completion: `buffers` holds one pointer per buffer
  // parameter, `sizes` one value per size parameter. Returns the mask of
  // its index checks that failed (bit min(check, 63)), as CPU kernels do.
  // A device backend enqueues the kernel on ctx.stream and returns 0: its
  // checks land in a device flag that TakeFaults reads.
  virtual absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                         absl::Span<const int64_t> sizes,
                                         const RunContext& ctx) const = 0;
  // Device backends: index checks that failed in kernels launched so far
  // (by any call), as {kernel index, mask}, cleared; {-1, 0} when none.
  // `wait`: wait for ctx.stream first, so this call's kernels count too.
  virtual absl::StatusOr<std::pair<int, int64_t>> TakeFaults(
      const RunContext& ctx, bool wait) const {
    (void)ctx;
    (void)wait;
    return std::pair<int, int64_t>(-1, 0);
  }
  // CUDA backends (reduce-overhead mode records launches into CUDA graphs):
  // fills `launch` with what Launch(index, buffers, sizes, ...) would pass
  // cuLaunchKernel, its first parameters the buffer pointers in order (the
  // caller says which buffer each holds). Others: UNIMPLEMENTED.
  virtual absl::Status DescribeLaunch(int index, void* const* buffers,
                                      absl::Span<const int64_t> sizes,
                                      CudaKernelLaunch* launch) const {
    (void)index;
    (void)buffers;
    (void)sizes;
    (void)launch;
    return absl::UnimplementedError("the backend does not record launches");
  }
};

// How a backend whose kernels read device memory moves tensors: the
// program uploads its constants and the CPU scalars a call passes, and runs
// the steps that stay on the host on copies.
class DeviceTransfer {
 public:
  virtual ~DeviceTransfer() = default;
  virtual Device device() const = 0;
  // A host copy of device tensor `t` (same strides); waits for ctx.stream.
  virtual absl::StatusOr<Tensor> ToHost(const Tensor& t,
                                        const RunContext& ctx) const = 0;
  // A device copy of host tensor `t` with its strides, from ctx.allocator,
  // or when that is null from DefaultAllocator.
  virtual absl::StatusOr<Tensor> ToDevice(const Tensor& t,
                                          const RunContext& ctx) const = 0;
  // Device memory for a run whose context brings no allocator: the device's
  // caching allocator on ctx.stream.
  virtual absl::StatusOr<std::shared_ptr<Allocator>> DefaultAllocator(
      const RunContext& ctx) const = 0;
  // Whether every run waits for its stream and reports device-side checks
  // itself (GJ_CUDA_LAUNCH_BLOCKING=1, as CUDA_LAUNCH_BLOCKING for PyTorch).
  virtual bool launch_blocking() const { return false; }
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  // "cuda-simt:sm_90": for explain() and logs.
  virtual std::string name() const = 0;
  // Compiles `kernels` (one module for all of a program's kernels). Must be
  // thread-safe.
  virtual absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels) = 0;
  // Non-null for a backend whose kernels read device memory.
  virtual const DeviceTransfer* transfer() const { return nullptr; }
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_KERNEL_BACKEND_H_
