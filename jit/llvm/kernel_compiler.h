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
#include "core/executable.h"
#include "jit/kernel_cache.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/llvm/orc_jit.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// The machine code of a kernel, or of a group of kernels compiled together
// (one object), in a JITDylib of its own. Removed from the JIT, its memory
// returned, when the last owner lets go: the programs that run its kernels
// and the kernel cache while it keeps one of them.
class ModuleCode {
 public:
  ModuleCode(OrcJit* jit, llvm::orc::JITDylib* dylib, std::atomic<int>* live)
      : jit_(jit), dylib_(dylib), live_(live) {
    live_->fetch_add(1, std::memory_order_relaxed);
  }
  ~ModuleCode();
  ModuleCode(const ModuleCode&) = delete;
  ModuleCode& operator=(const ModuleCode&) = delete;

 private:
  OrcJit* jit_;
  llvm::orc::JITDylib* dylib_;
  std::atomic<int>* live_;
};

// Compiles loop-IR kernels to host code through one OrcJit, with a
// KernelCache (jit/kernel_cache.h) keyed by ("llvm", target, printed loop
// IR): identical kernels, from one graph or many, compile once. The kernels
// one Compile misses compile in parallel on `pool` (the threads the compiled
// programs run on): with a persistent cache each its own LLVM module and
// object file (the unit the cache stores), without one in a group per
// thread, one module and object each (a module's fixed cost is most of a
// small kernel's). Thread-safe;
// Compiles run one at a time, so two threads compiling the same kernel
// compile it once and the second finds it cached. Under the ASSERT_COMPILE
// switch a compile fails (a load from the persistent cache is not a compile).
//
// Persistent cache: with a CompileCache (runtime/compile_cache/), a kernel
// missing from memory is looked up there before it compiles, under a key of
// its loop IR, the target (OrcJit::TargetFingerprint: triple, CPU, features,
// LLVM version) and the code generator's fingerprint (a hash of jit/llvm's
// sources and the library version); a kernel it compiles is stored there as
// its object file, with the compile's time and pid. A record that does not
// link is counted as an error and the kernel compiles.
//
// Memory: each kernel's code is a ModuleCode owned by the programs using it
// (Compile's `owners`) and by the cache. The cache keeps at most
// `max_cached_kernels` kernels, least recently used evicted first, so a
// long-running host that compiles many graphs and destroys their functions
// returns to a bounded footprint (a group's code stays while the cache
// keeps any of its kernels: at most a group per cached kernel). Objects using
// code must keep their owners (and this compiler) alive.
class KernelCompiler {
 public:
  static constexpr int kDefaultMaxCachedKernels = 1024;
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(
      int max_cached_kernels = kDefaultMaxCachedKernels,
      std::shared_ptr<CompileCache> persistent = nullptr,
      std::shared_ptr<ThreadPool> pool = nullptr);

  // The compiled function of each kernel, and in `owners` the code they live
  // in, which the caller keeps while it runs them. Without `owners` (tests,
  // one-off kernels) the code stays until this compiler is destroyed.
  // `labels` (one per kernel, or empty) name the kernels in the error of a
  // forbidden compile. `origin`, when given, gets where each distinct
  // kernel's code came from added to it.
  absl::StatusOr<std::vector<CompiledKernelFn>> Compile(
      const std::vector<const Kernel*>& kernels,
      std::vector<std::shared_ptr<const ModuleCode>>* owners = nullptr,
      absl::Span<const std::string> labels = {}, CodeOrigin* origin = nullptr);

  // Kernels compiled by LLVM, loaded from the persistent cache, and served
  // from memory so far (for tests and explain()).
  int compiled() const { return compiled_.load(); }
  int loaded() const { return loaded_.load(); }
  int cache_hits() const;
  KernelCacheStats cache_stats() const { return cache_.stats(); }
  // Kernels in the cache now, and kernels whose code is still loaded.
  int cached_kernels() const;
  int live_modules() const { return live_modules_.load(); }
  const std::string& target() const { return target_; }
  // The persistent cache, or null.
  CompileCache* persistent() const { return persistent_.get(); }

 private:
  struct Cached {
    CompiledKernelFn fn = nullptr;
    std::shared_ptr<const ModuleCode> code;
  };
  KernelCompiler(std::unique_ptr<OrcJit> jit, std::string target,
                 int max_cached_kernels,
                 std::shared_ptr<CompileCache> persistent,
                 std::shared_ptr<ThreadPool> pool);
  // The persistent-cache key of a kernel whose loop IR prints as `source`.
  std::string PersistentKey(const std::string& source) const;
  // `object` linked into a dylib of its own, and its kernel's function.
  absl::StatusOr<Cached> Load(std::unique_ptr<llvm::MemoryBuffer> object);
  // `kernel` compiled to an object file.
  absl::StatusOr<std::string> CompileObject(const Kernel& kernel);

  std::unique_ptr<OrcJit> jit_;
  const std::string target_;
  const std::string fingerprint_;  // OrcJit::TargetFingerprint + codegen's
  const std::shared_ptr<CompileCache> persistent_;
  const std::shared_ptr<ThreadPool> pool_;  // null: compile serially
  std::atomic<int> live_modules_{0};
  std::atomic<int> compiled_{0};
  std::atomic<int> loaded_{0};
  // Held through a whole Compile: one LLVM compile at a time.
  std::mutex compile_mu_;
  // Declared after jit_: destroyed first, while the JIT can still remove.
  KernelCache<Cached> cache_;
  std::vector<std::shared_ptr<const ModuleCode>> pinned_
      ABSL_GUARDED_BY(compile_mu_);
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_KERNEL_COMPILER_H_
