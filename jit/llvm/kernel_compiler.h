#ifndef GUARDJIT_JIT_LLVM_KERNEL_COMPILER_H_
#define GUARDJIT_JIT_LLVM_KERNEL_COMPILER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "jit/kernel_cache.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/llvm/orc_jit.h"
#include "jit/lowering/loop_ir.h"

namespace guardjit {

// The machine code of one compiled module (one or more kernels). Removed
// from the JIT, its memory returned, when the last owner lets go: the
// programs that run its kernels and the kernel cache while it keeps them.
class ModuleCode {
 public:
  ModuleCode(OrcJit* jit, llvm::orc::ResourceTrackerSP tracker,
             std::atomic<int>* live)
      : jit_(jit), tracker_(std::move(tracker)), live_(live) {
    live_->fetch_add(1, std::memory_order_relaxed);
  }
  ~ModuleCode();
  ModuleCode(const ModuleCode&) = delete;
  ModuleCode& operator=(const ModuleCode&) = delete;

 private:
  OrcJit* jit_;
  llvm::orc::ResourceTrackerSP tracker_;
  std::atomic<int>* live_;
};

// Compiles loop-IR kernels to host code through one OrcJit, with a
// KernelCache (jit/kernel_cache.h) keyed by ("llvm", target, printed loop
// IR): identical kernels, from one graph or many, compile once. Thread-safe;
// compiles run one at a time (the kernels a Compile misses go into one LLVM
// module), so two threads compiling the same kernel compile it once and the
// second finds it cached. Under the ASSERT_COMPILE switch a miss fails.
//
// Memory: each compiled module is a ModuleCode owned by the programs using
// its kernels (Compile's `owners`) and by the cache. The cache keeps at most
// `max_cached_kernels` kernels, least recently used evicted first, so a
// long-running host that compiles many graphs and destroys their functions
// returns to a bounded footprint. Objects using code must keep their owners
// (and this compiler) alive.
class KernelCompiler {
 public:
  static constexpr int kDefaultMaxCachedKernels = 1024;
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(
      int max_cached_kernels = kDefaultMaxCachedKernels);

  // The compiled function of each kernel (new ones share one LLVM module),
  // and in `owners` the modules they live in, which the caller keeps while
  // it runs them. Without `owners` (tests, one-off kernels) the code stays
  // until this compiler is destroyed. `labels` (one per kernel, or empty)
  // name the kernels in the error of a forbidden compile.
  absl::StatusOr<std::vector<CompiledKernelFn>> Compile(
      const std::vector<const Kernel*>& kernels,
      std::vector<std::shared_ptr<const ModuleCode>>* owners = nullptr,
      absl::Span<const std::string> labels = {});

  // Kernels compiled and cache hits so far (for tests and explain()).
  int compiled() const;
  int cache_hits() const;
  KernelCacheStats cache_stats() const { return cache_.stats(); }
  // Kernels in the cache now, and modules whose code is still loaded.
  int cached_kernels() const;
  int live_modules() const { return live_modules_.load(); }
  const std::string& target() const { return target_; }

 private:
  struct Cached {
    CompiledKernelFn fn = nullptr;
    std::shared_ptr<const ModuleCode> code;
  };
  KernelCompiler(std::unique_ptr<OrcJit> jit, std::string target,
                 int max_cached_kernels)
      : jit_(std::move(jit)),
        target_(std::move(target)),
        cache_(max_cached_kernels) {}

  std::unique_ptr<OrcJit> jit_;
  const std::string target_;
  std::atomic<int> live_modules_{0};
  // Held through a whole Compile: one LLVM compile at a time.
  std::mutex compile_mu_;
  // Declared after jit_: destroyed first, while the JIT can still remove.
  KernelCache<Cached> cache_;
  std::vector<std::shared_ptr<const ModuleCode>> pinned_
      ABSL_GUARDED_BY(compile_mu_);
  int next_module_ ABSL_GUARDED_BY(compile_mu_) = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_KERNEL_COMPILER_H_
