#ifndef GUARDJIT_JIT_COMPILED_PROGRAM_H_
#define GUARDJIT_JIT_COMPILED_PROGRAM_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "jit/device_faults.h"
#include "jit/fusion.h"
#include "jit/kernel_backend.h"
#include "runtime/cuda/cuda_graph.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// A compiled graph for one input layout: the plan's kernels in order, with
// the nodes the JIT left alone run by their eager reference kernels in
// between. A kernel with enough work splits its first outer loop across the
// program's ThreadPool. Run is thread-safe.
//
// Memory: the intermediates only kernels touch live at offsets in one arena
// per call (the plan's liveness-shared buffers, laid end to end), one block
// of the call's allocator taken when the call starts and returned when it
// ends: the caching allocator hands a hit the last call's block, so a hit
// with caller destinations makes no heap allocation (a dynamic program's
// evaluated sizes live in pooled workspaces, one per concurrent call), and
// between calls the block counts as cached memory, not in use. Outputs
// without a destination, and the values eager steps read or return, are
// allocated per call. A device program allocates its buffers per call from
// the stream-ordered device allocator.
//
// Defined over three files: compiled_program.cc (Create, the sizes, Run),
// compiled_program_outputs.cc (which outputs are written in place, and why
// the others are copied), compiled_program_graphed.cc (reduce-overhead mode's
// CUDA graph replays).
class CompiledProgram {
 public:
  // Gets the plan's kernels from `backend` (which must outlive this: its
  // module's code stays loaded while the program lives, whatever the
  // backend's cache evicts). A host backend's kernels (LlvmKernelBackend)
  // are called directly, their parallel ones split across `pool`, which also
  // runs GEMM and conv steps; other backends' are launched through their
  // module, and their plans have GEMM and conv steps only on a device
  // (cuBLASLt, im2col: jit/cuda/device_gemm_step.h, device_conv_step.h).
  // `metas` are symbolic for a dynamic program, over `num_symbols` symbols.
  static absl::StatusOr<std::unique_ptr<CompiledProgram>> Create(
      std::shared_ptr<const Graph> graph, GraphMeta metas, Plan plan,
      KernelBackend& backend, std::shared_ptr<ThreadPool> pool,
      int num_symbols = 0);

  // Inputs must have the dtypes, layout and (static program) sizes the
  // program was built for; `symbols` holds the call's symbol values (one per
  // symbol, empty for a static program).
  //
  // Outputs with a destination in `ctx` are written straight into it when
  // their last producer is a kernel that allocates them, they are the whole
  // contiguous slot, the destination is contiguous and overlaps no input,
  // no step that can still fail (a kernel with index checks, an eager step)
  // runs at or after that kernel, and `ctx` has no stop conditions (a stop
  // between steps would leave them half-written). Others come back as
  // tensors the caller copies. Destinations are checked before any step.
  absl::StatusOr<std::vector<Tensor>> Run(
      const RunContext& ctx, absl::Span<const Tensor> inputs,
      absl::Span<const int64_t> symbols = {}) const;
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs,
      absl::Span<const int64_t> symbols = {}) const {
    return Run(RunContext(), inputs, symbols);
  }
  // Run writing the outputs into `results` (one per output).
  absl::Status RunInto(const RunContext& ctx, absl::Span<const Tensor> inputs,
                       absl::Span<const int64_t> symbols,
                       absl::Span<Tensor> results) const;
  // How many outputs a call with destinations for all of them writes in
  // place (for explain and tests).
  int num_direct_outputs() const;
  // explain()'s account of the outputs a call with destinations still
  // copies, each with its reason ("outputs copied: 1 'v' (a view of input
  // 'x')"), or empty when every output is written in place (given a
  // contiguous destination overlapping no input, on a call without stop
  // conditions).
  std::string DescribeOutputCopies() const;
  // The intermediates' arena: how many plan buffers it holds, and its size
  // at the program's sizes (a static program) or -1 (a dynamic one: it
  // depends on the call's symbols).
  int num_arena_buffers() const {
    return static_cast<int>(plan_.buffer_bytes.size());
  }
  int64_t static_arena_bytes() const {
    return num_symbols_ > 0 ? -1 : static_sizes_.arena_bytes;
  }
  // Device programs in reduce-overhead mode: what their CUDA graphs did, or
  // why they were refused (CudaGraphSet::Describe); else empty.
  std::string DescribeCudaGraphs() const;

  const Plan& plan() const { return plan_; }
  // Where the program's kernels read and write (a device backend's device).
  Device device() const {
    return transfer_ != nullptr ? transfer_->device() : Device::Cpu();
  }
  int num_symbols() const { return num_symbols_; }

 private:
  // A TensorRef evaluated for one call.
  struct ConcreteRef {
    int slot = -1;
    Shape sizes;
    Shape strides;
    int64_t offset = 0;
  };
  // The view `ref` names of its slot's tensor (the tensor itself when the
  // view is all of it).
  template <typename Slots>
  static Tensor ViewOf(const Slots& slots, const ConcreteRef& ref) {
    const Tensor& base = slots[ref.slot];
    if (ref.offset == 0 &&
        std::equal(ref.sizes.begin(), ref.sizes.end(), base.sizes().begin(),
                   base.sizes().end()) &&
        std::equal(ref.strides.begin(), ref.strides.end(),
                   base.strides().begin(), base.strides().end())) {
      return base;
    }
    return base.AsStrided(ref.sizes, ref.strides, ref.offset);
  }
  // The plan's sizes evaluated for one call's symbol values.
  struct CallSizes {
    std::vector<Shape> slots;
    std::vector<int64_t> buffer_bytes;
    std::vector<int64_t> outer_extent;  // per step: first outer loop's extent
    std::vector<int64_t> grain;  // per step: outer iterations per chunk; 0
                                 // runs the kernel on the calling thread
    std::vector<std::vector<ConcreteRef>> extern_args;  // per step
    std::vector<ConcreteRef> outputs;
    GraphMeta metas;  // dynamic programs: eager steps' metadata, else empty
    std::vector<int64_t> buffer_offset;  // per plan buffer, in the arena
    int64_t arena_bytes = 0;
  };
  // A dynamic program's evaluated sizes for one call, reused by later
  // calls (their vectors keep their capacity).
  struct Workspace {
    CallSizes sizes;
  };
  // Gives a call a workspace back at the end of its scope.
  class WorkspaceLease {
   public:
    WorkspaceLease(const CompiledProgram& program,
                   std::unique_ptr<Workspace> workspace)
        : program_(program), workspace_(std::move(workspace)) {}
    WorkspaceLease(const WorkspaceLease&) = delete;
    WorkspaceLease& operator=(const WorkspaceLease&) = delete;
    ~WorkspaceLease() { program_.ReleaseWorkspace(std::move(workspace_)); }
    Workspace* operator->() const { return workspace_.get(); }

   private:
    const CompiledProgram& program_;
    std::unique_ptr<Workspace> workspace_;
  };

  CompiledProgram(std::shared_ptr<const Graph> graph, GraphMeta metas,
                  Plan plan, std::shared_ptr<ThreadPool> pool, int num_symbols)
      : graph_(std::move(graph)),
        metas_(std::move(metas)),
        plan_(std::move(plan)),
        pool_(std::move(pool)),
        num_symbols_(num_symbols) {}

  // The plan's sizes for `symbols`, into `out` (reusing its vectors'
  // capacity: a dynamic hit at a size seen before allocates nothing here).
  void Evaluate(absl::Span<const int64_t> symbols, CallSizes& out) const;
  // A pooled workspace, or a new one when every pooled one is in use.
  std::unique_ptr<Workspace> AcquireWorkspace() const;
  void ReleaseWorkspace(std::unique_ptr<Workspace> workspace) const;
  // Device programs: `fault` (a check that failed on the device, in this
  // call or in an earlier one) as the check's error, naming its node.
  absl::Status DeviceFaultError(const DeviceFault& fault, bool this_call) const;
  // Fills direct_output_.
  void PlanDirectOutputs();
  // reduce-overhead mode (ctx.cuda_graphs set): the call as one replay of
  // the size key's CUDA graph (recorded on its second call; GEMM and conv
  // steps are cuBLASLt calls captured into it, their call-input and -output
  // operands read in place or staged through the key's pool), outputs into
  // `results`. False when the call must run plain launches instead: the
  // key's first call (warm-up), a refused entry or key, a call with stop
  // conditions (a graph cannot stop between kernels), or another call
  // replaying the entry at the same time.
  absl::StatusOr<bool> RunGraphed(const RunContext& ctx,
                                  absl::Span<const Tensor> inputs,
                                  absl::Span<const int64_t> symbols,
                                  const CallSizes& sizes,
                                  const std::shared_ptr<Allocator>& allocator,
                                  absl::Span<Tensor> results) const;

  std::shared_ptr<const Graph> graph_;
  GraphMeta metas_;
  Plan plan_;
  std::shared_ptr<ThreadPool> pool_;
  int num_symbols_ = 0;
  // The program's kernels (their code is freed with the module's last
  // owner), and per step the kernel's index in it, or -1.
  std::shared_ptr<const KernelModule> module_;
  std::vector<int> module_index_;
  // Per step: a host module's kernel, called directly; null for eager steps
  // and when the kernels are launched through module_.
  std::vector<HostKernelFn> kernels_;
  bool launch_through_module_ = false;
  // A device backend's transfers (null for host backends), and per slot the
  // device copy of each constant.
  const DeviceTransfer* transfer_ = nullptr;
  std::vector<Tensor> device_constants_;
  // Device programs: the CUDA graphs of reduce-overhead mode (declared after
  // module_: destroyed before the kernels they launch), and why the program
  // cannot be recorded at all (empty if it can).
  std::unique_ptr<CudaGraphSet> graphs_;
  std::string graph_refusal_;
  // Device programs with device-side checks: the fault words the calls
  // launch with (the module is shared with every program of the same
  // source; the words are not). Null for programs without checks.
  std::unique_ptr<DeviceFaultPool> faults_;
  std::vector<const KernelFn*> eager_;  // per step; null for kernels
  // Per step: the slot of each output of an eager node (-1: none).
  std::vector<std::vector<int>> extern_output_slots_;
  // Per slot: the output written straight into its destination when the
  // call gives one, or -1.
  std::vector<int> direct_output_;
  // Per output: why it is copied into its destination, or empty.
  std::vector<std::string> copy_reason_;
  CallSizes static_sizes_;  // a static program's sizes
  // Idle workspaces; as many exist as calls have run at once.
  // std::mutex, not absl::Mutex: Debian's Abseil is not built with TSan,
  // which then cannot see absl::Mutex's ordering (the TSan step reported the
  // pool's vector as raced).
  mutable std::mutex workspace_mu_;
  mutable std::vector<std::unique_ptr<Workspace>> workspaces_
      ABSL_GUARDED_BY(workspace_mu_);
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_COMPILED_PROGRAM_H_
