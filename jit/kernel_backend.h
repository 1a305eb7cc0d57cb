#ifndef GUARDJIT_JIT_KERNEL_BACKEND_H_
#define GUARDJIT_JIT_KERNEL_BACKEND_H_

// Where a program's fused kernels run. CompiledProgram runs a plan: kernel
// steps, eager steps and extern steps, allocating and releasing their
// buffers; a KernelBackend turns the plan's loop-IR kernels into something
// it can launch. The CPU backend is built in (LLVM ORC through
// KernelCompiler, the kernels' first outer loop split across a ThreadPool);
// others plug in here: the CUDA C generator through the SIMT emulator
// (jit/cuda/simt_backend.h) today, NVRTC + the driver API next.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/run_context.h"
#include "jit/loop_ir.h"

namespace guardjit {

// The compiled kernels of one program.
class KernelModule {
 public:
  virtual ~KernelModule() = default;
  // Runs kernel `index` (its position in the list Compile got) over all its
  // outer points, to completion: `buffers` holds one pointer per buffer
  // parameter, `sizes` one value per size parameter. Returns the mask of
  // its index checks that failed (bit min(check, 63)), as CPU kernels do.
  virtual absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                         absl::Span<const int64_t> sizes,
                                         const RunContext& ctx) const = 0;
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
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_KERNEL_BACKEND_H_
