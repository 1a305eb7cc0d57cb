#ifndef GUARDJIT_JIT_JIT_COMPILER_H_
#define GUARDJIT_JIT_JIT_COMPILER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compiler.h"
#include "core/shape_inference.h"
#include "jit/kernel_backend.h"
#include "jit/llvm/kernel_compiler.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/schedule/fusion.h"
#include "runtime/program/live_programs.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// The CPU JIT backend: lowers a specialized graph to loop IR, fuses it,
// compiles the kernels with LLVM and returns an executable that runs them,
// with ops the JIT cannot compile (indexing, float16 ...) run by their eager
// kernels in between. Matrix products and convolutions (float32, float64)
// are extern steps with their pointwise consumers fused as epilogues
// (gemm_epilogue.h, conv_epilogue.h): BLAS, or oneDNN for float32
// convolutions and for float32 products of few rows on constant weights
// (onednn_conv.h, onednn_gemm.h); in a dynamic entry their symbolic
// extents are bound per call. Nodes computing sizes (sym_size, integer
// arithmetic) are lowered from their values' expressions over the entry's
// symbols. Should the JIT itself fail on a graph, Compile logs a warning and
// returns the eager plan. Thread-safe.
//
// Layout: a compile plans for the strides of the call that made the entry
// (Specialization::example_strides; contiguous without them) and bakes them
// into the kernels, once, at compile time. A later call the entry's guards
// accept but laid out otherwise runs on the graph's reference kernels (an
// eager plan made on the first such call and kept; nothing compiles inside
// a call), with a warning and a count in Describe ("N calls in a layout it
// was not planned for ran on the reference kernels"); on a backend without
// host code (CUDA) such a call is FAILED_PRECONDITION naming the input.
// Static entries guard strides, so in practice an entry sees one layout.
class JitCompiler : public Compiler {
 public:
  struct Options {
    // Threads that compiled programs run on (their kernels' outer loops,
    // GEMM panels, conv images), counting the calling thread; 0 shares the
    // process's ThreadPool::Global() (GJ_NUM_THREADS, else one per core).
    int num_threads = 0;
    // Compiled kernels the cache keeps once no program uses them (LRU
    // beyond); code in use is kept by its programs whatever the cap.
    int max_cached_kernels = KernelCompiler::kDefaultMaxCachedKernels;
    // Tests: a graph the JIT fails on is an error instead of quietly running
    // the eager plan, so a conformance check cannot pass on eager results.
    // (Graphs the JIT does not take by design, control flow and computed
    // sizes, still get the eager plan.)
    bool fail_instead_of_eager = false;
    // Where fused kernels run: null for the built-in host backend
    // (LlvmKernelBackend over this compiler's KernelCompiler); else this
    // backend compiles and launches them (the CUDA C generator on the SIMT
    // emulator: jit/simt/simt_backend.h, or on a device:
    // jit/cuda/cuda_backend.h). On the SIMT emulator matrix products and
    // convolutions stay eager steps (their fused epilogues are CPU code); on
    // a device, matrix products run on cuBLASLt where it loads and
    // convolutions as an im2col kernel plus cuBLASLt, both with the CPU
    // plan's epilogue as a kernel (jit/cuda/device_gemm_step.h,
    // device_conv_step.h).
    std::shared_ptr<KernelBackend> kernel_backend;
    // The persistent compile cache the host backend's kernels are looked up
    // in and stored to (runtime/compile_cache/compile_cache.h); null: none.
    std::shared_ptr<CompileCache> compile_cache;
  };
  static absl::StatusOr<std::unique_ptr<JitCompiler>> Create(
      const Options& options);
  static absl::StatusOr<std::unique_ptr<JitCompiler>> Create() {
    return Create(Options());
  }

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override;
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override;
  std::string name() const override {
    return backend_->host_code() ? "jit" : "jit:" + backend_->name();
  }

  // Why Compile gives `graph` the eager plan by design (a cond), or nullopt
  // when it compiles it.
  static std::optional<std::string> EagerOnlyReason(const Graph& graph);

  // The graph Compile plans for `graph` on `spec`: on a host backend, inference
  // batch norms folded into the convolutions before them
  // (jit/fold_batch_norm.h) and attention chains of static entries fused
  // into one scaled_dot_product_attention (jit/attention_fusion.h); else
  // `graph` itself.
  struct RewrittenGraph {
    std::shared_ptr<const Graph> graph;
    // The specialization with its per-node metadata remapped, when folding
    // changed the nodes of a dynamic entry's graph.
    std::optional<Specialization> spec;
    // `graph`'s metadata, when the rewrite computed it.
    std::optional<GraphMeta> metas;

    const Specialization& SpecOr(const Specialization& original) const {
      return spec.has_value() ? *spec : original;
    }
  };
  absl::StatusOr<RewrittenGraph> RewriteForHost(
      std::shared_ptr<const Graph> graph, const Specialization& spec) const;

  // The fusion plan for `graph` on `spec` with contiguous inputs, for tests
  // and GJ_LOGS=codegen (of `graph` as given: RewriteForHost first for the
  // graph Compile plans).
  absl::StatusOr<Plan> PlanFor(const Graph& graph, const Specialization& spec);

  // The host backend's compiler (its kernel cache's counters), whichever
  // backend runs the kernels.
  KernelCompiler& kernels() { return *kernels_; }
  // The backend every program of this compiler gets its kernels from.
  KernelBackend& kernel_backend() { return *backend_; }
  // The pool this compiler's programs run on.
  ThreadPool& thread_pool() { return *pool_; }
  // The programs of this compiler's entries alive now (what they hold:
  // gj_memory_stats).
  const LivePrograms& live_programs() const { return *live_; }

 private:
  JitCompiler(std::shared_ptr<KernelCompiler> kernels,
              std::shared_ptr<ThreadPool> pool, bool strict,
              std::shared_ptr<KernelBackend> backend)
      : kernels_(std::move(kernels)),
        pool_(std::move(pool)),
        strict_(strict),
        backend_(backend != nullptr
                     ? std::move(backend)
                     : std::make_shared<LlvmKernelBackend>(kernels_)) {}
  std::shared_ptr<KernelCompiler> kernels_;
  std::shared_ptr<ThreadPool> pool_;
  const bool strict_;
  // Never null: Options::kernel_backend, else an LlvmKernelBackend.
  const std::shared_ptr<KernelBackend> backend_;
  const std::shared_ptr<LivePrograms> live_ = LivePrograms::Create();
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_JIT_COMPILER_H_
