#ifndef GUARDJIT_JIT_KERNEL_BACKEND_H_
#define GUARDJIT_JIT_KERNEL_BACKEND_H_

// Where a program's fused kernels run. A program (runtime/program/) runs a
// plan's kernel steps, eager steps and extern steps, each by a runner of
// its kind; it gets its kernels and their runners from one KernelBackend,
// whichever the target: rendering the plan's loop-IR kernels, compiling
// them for the backend's target and loading them are the backend's
// Compile, which returns a KernelModule, and MakeStepRunner supplies each
// kernel step's runner (jit/program_builder.h puts them together). Three
// backends implement it:
//   - LLVM on the host (jit/llvm/llvm_backend.h: KernelCompiler over OrcJit).
//   Its
//     modules also expose the kernels' host function pointers, which its
//     runners call directly, splitting their first outer loop across a
//     ThreadPool (no virtual call or Status per chunk), and its plans get
//     GEMM and conv steps (CPU epilogues: jit/steps/kernel_steps.h);
//   - the CUDA C generator through the SIMT emulator (jit/simt/simt_backend.h);
//   - the CUDA C generator through NVRTC + the driver API on a device
//     (jit/cuda/cuda_backend.h).
// Each keeps its compiled code in a KernelCache (jit/kernel_cache.h) keyed by
// (backend, target, options, source): the LLVM backend per kernel, the CUDA
// ones per module. Under the ASSERT_COMPILE switch (GJ_ASSERT_NO_COMPILE=1 or
// ScopedForbidKernelCompiles) a cache miss fails Compile with
// FAILED_PRECONDITION, which the JIT returns to the caller.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compiler.h"
#include "core/executable.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "jit/kernel_cache.h"
#include "jit/lowering/loop_ir.h"
#include "jit/schedule/fusion.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/program_graphs.h"
#include "runtime/program/step_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

class KernelBackend;

// What a backend makes of one cache entry beyond its plan's kernels
// (KernelBackend::ForEntry).
struct EntryBackend {
  // Compiles the entry's program: the backend itself, or one bound to the
  // entry.
  std::shared_ptr<KernelBackend> backend;
  // Bounds on the entry's symbols its code relies on, chosen from the call
  // that made it (Executable::chosen_bounds: the entry guards them), each
  // with its symbol's source ("x.size()[0]"), and why they exist
  // (Executable::chosen_bounds_purpose).
  std::vector<SymbolBound> chosen_bounds;
  std::vector<std::string> chosen_sources;
  std::string chosen_purpose;
  // For explain(): "32-bit index math in 2 of 3 kernels (x.size()[0] <=
  // 1048576)"; empty when the entry's code is the backend's as is.
  std::string description;
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  // "cuda:sm_90", "llvm:x86_64-pc-linux-gnu/znver3": for explain() and
  // logs.
  virtual std::string name() const = 0;
  // Compiles `kernels` (one module for all of a program's kernels), or
  // takes them from the backend's kernel cache. `labels`: one per kernel
  // ("kernel 0 (computing add, relu)") for the error of a forbidden compile,
  // or empty. Must be thread-safe.
  virtual absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) = 0;
  // Non-null for a backend whose kernels read device memory.
  virtual const DeviceTransfer* transfer() const { return nullptr; }
  // Whether the modules are host code (host_functions() non-null): plans
  // for the backend then get GEMM and conv steps, whose epilogues are host
  // kernels.
  virtual bool host_code() const { return false; }
  // Whether the runner of kernel step `step` ever runs its kernel; one that
  // does not is left out of Compile, and MakeStepRunner gets index -1 for
  // it (unless the step has code of its own: a host plan's packed product,
  // gemm_step.h, whose kernel comes first, its epilogue's after it). The
  // default: every step runs its kernel.
  virtual bool RunsKernelOf(const PlanStep& step) const {
    (void)step;
    return true;
  }
  // The backend's kernel cache: compiles, hits, evictions, entries.
  virtual KernelCacheStats cache_stats() const = 0;
  // The runner of kernel step `step` (a fused kernel, or a GEMM or conv step
  // with it as the epilogue), whose kernel is `index` in `module` (a packed
  // product: its code at `index`, then its epilogue's). The
  // default launches the kernel through the module and takes no GEMM or
  // conv steps (the SIMT backend's); the LLVM backend calls host functions
  // and runs BLAS steps, a CUDA device's runs cuBLASLt steps.
  virtual absl::StatusOr<std::unique_ptr<const StepRunner>> MakeStepRunner(
      const PlanStep& step, const Graph& graph,
      std::shared_ptr<const KernelModule> module, int index,
      const std::shared_ptr<ThreadPool>& pool) const;
  // The backend for one entry of `graph` specialized as `spec`, whose plan
  // is `plan`; `self` is this backend. The default: `self` as is. A CUDA
  // device's renders a dynamic entry's index math in 32 bits where size
  // bounds prove it fits, bounds it may choose from the call that made the
  // entry (the entry then guards them).
  virtual absl::StatusOr<EntryBackend> ForEntry(
      std::shared_ptr<KernelBackend> self, const Graph& graph,
      const Specialization& spec, const Plan& plan) const {
    (void)graph;
    (void)spec;
    (void)plan;
    return EntryBackend{.backend = std::move(self)};
  }
  // reduce-overhead mode's CUDA graphs over `program`, whose steps `plan`
  // made (runtime/program/program_graphs.h), or null for a backend that
  // records none (the default).
  virtual absl::StatusOr<std::unique_ptr<ProgramGraphs>> MakeGraphs(
      const Program& program, const Plan& plan) const {
    (void)program;
    (void)plan;
    return std::unique_ptr<ProgramGraphs>();
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_KERNEL_BACKEND_H_
