#ifndef GUARDJIT_RUNTIME_PROGRAM_KERNEL_MODULE_H_
#define GUARDJIT_RUNTIME_PROGRAM_KERNEL_MODULE_H_

// Loaded code, as a program runs it: a backend compiles a program's fused
// kernels into a KernelModule (jit/kernel_backend.h), and the program's
// kernel steps launch them through it, or call a host module's functions
// directly. A device backend's DeviceTransfer moves tensors between host
// and device for the steps that stay on the host.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/device.h"
#include "core/executable.h"
#include "core/run_context.h"
#include "core/tensor.h"

namespace guardjit {

struct CudaKernelLaunch;  // runtime/cuda/cuda_graph.h

// A host kernel: runs the kernel's first outer loop over [begin, end) (all
// of it for a kernel without outer loops: 0, 1), the other loops whole, and
// returns the mask of its index checks that failed. The same type as
// jit/llvm/llvm_codegen.h's CompiledKernelFn.
using HostKernelFn = int64_t (*)(void* const* buffers, const int64_t* sizes,
                                 int64_t begin, int64_t end);

// Where a device program's kernels report failed index checks: one word per
// kernel of its module, which a kernel with checks ORs their bits into (bit
// min(check, 63)). The words belong to the caller, not to the module:
// loaded modules are cached and shared by every program (and cache entry)
// with the same source, so ProgramRunner keeps a pool of these per
// program and lends one to each call (device_faults.h), and a failed check
// is reported by the program and the call that made it.
class DeviceFaultWords {
 public:
  virtual ~DeviceFaultWords() = default;
  // The device address kernel `index` ORs its failed checks into.
  virtual uint64_t device_address(int index) const = 0;
  // Kernels the words cover.
  virtual int size() const = 0;
  // The first kernel whose word is set, as {kernel index, mask}, cleared;
  // {-1, 0} when none. Reads without waiting: the caller waited (Wait) or
  // saw Done.
  virtual std::pair<int, int64_t> Take() = 0;
  // Waits for ctx.stream: the kernels launched on it so far are done.
  virtual absl::Status Wait(const RunContext& ctx) = 0;
  // Marks the end of a call's launches on ctx.stream; Done then says
  // whether the device has reached the mark (the words are final).
  virtual absl::Status MarkEnd(const RunContext& ctx) = 0;
  virtual absl::StatusOr<bool> Done() const = 0;
};

// The compiled kernels of one program.
class KernelModule {
 public:
  virtual ~KernelModule() = default;
  // Runs kernel `index` (its position in the list Compile got) over all its
  // outer points, to completion: `buffers` holds one pointer per buffer
  // parameter, `sizes` one value per size parameter. Returns the mask of
  // its index checks that failed (bit min(check, 63)), as CPU kernels do.
  // A device backend enqueues the kernel on ctx.stream and returns 0: its
  // checks land in `faults` (from NewFaultWords; required by a kernel with
  // checks), which the caller reads once the kernel is done. Host backends
  // ignore `faults`.
  virtual absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                         absl::Span<const int64_t> sizes,
                                         const DeviceFaultWords* faults,
                                         const RunContext& ctx) const = 0;
  // Device backends: a fresh set of fault words for this module's kernels,
  // all clear. Others: null.
  virtual absl::StatusOr<std::unique_ptr<DeviceFaultWords>> NewFaultWords()
      const {
    return std::unique_ptr<DeviceFaultWords>();
  }
  // CUDA backends (reduce-overhead mode records launches into CUDA graphs):
  // fills `launch` with what Launch(index, buffers, sizes, faults, ...)
  // would pass cuLaunchKernel, its first parameters the buffer pointers in
  // order (the caller says which buffer each holds), its last the address
  // of the kernel's word in `faults` for a kernel with checks. Others:
  // UNIMPLEMENTED.
  virtual absl::Status DescribeLaunch(int index, void* const* buffers,
                                      absl::Span<const int64_t> sizes,
                                      const DeviceFaultWords* faults,
                                      CudaKernelLaunch* launch) const {
    (void)index;
    (void)buffers;
    (void)sizes;
    (void)faults;
    (void)launch;
    return absl::UnimplementedError("the backend does not record launches");
  }
  // A host backend's kernels as functions the caller may call itself (one
  // per kernel, in Compile's order; valid while the module lives), else
  // null.
  virtual const std::vector<HostKernelFn>* host_functions() const {
    return nullptr;
  }
  // Where the kernels' code came from (compiled, loaded from the persistent
  // compile cache, already in memory) when the module was made.
  virtual CodeOrigin origin() const { return {}; }
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
  // Waits for ctx.stream (a synchronizing call of a program without
  // device-side checks, which has no fault words to wait for).
  virtual absl::Status Synchronize(const RunContext& ctx) const = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_KERNEL_MODULE_H_
