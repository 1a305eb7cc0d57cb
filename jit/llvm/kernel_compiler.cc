#include "jit/llvm/kernel_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/llvm/codegen_fingerprint.h"
#include "jit/llvm/libmvec.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/llvm/llvm_optimize.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

// The exported function of kernel i of an object: a kernel compiled alone
// (what the persistent cache stores) is "gj_kernel", one compiled in a group
// "gj_kernel", "gj_kernel_1", "gj_kernel_2", ...
std::string KernelSymbol(int i) {
  return i == 0 ? "gj_kernel" : absl::StrCat("gj_kernel_", i);
}
constexpr char kObjectKind[] = "llvm-object";

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool IsPackedProduct(const Kernel& kernel) {
  return kernel.packed_gemm.has_value();
}

// `kernels` compiled into one object file, one LLVM module: kernel i's
// function exported as KernelSymbol(i). A module of packed products only
// skips the IR passes (llvm_optimize.h's IrPasses::kNone).
absl::StatusOr<std::string> CompileGroupObject(
    const OrcJit& jit, absl::Span<const Kernel* const> kernels) {
  llvm::LLVMContext context;
  llvm::Module module("gj_kernel_module", context);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (LogEnabled(LogTopic::kCodegen)) {
      // Each kernel alone, as its own module under its one-kernel name,
      // before OptimizeModule stamps the host's CPU and features on it: the
      // same text on every machine and in any group (golden files compare
      // it).
      llvm::Module alone("gj_kernel_module", context);
      RETURN_IF_ERROR(EmitKernel(*kernels[i], KernelSymbol(0), &alone));
      std::string text;
      llvm::raw_string_ostream os(text);
      alone.print(os, nullptr);
      Log(LogTopic::kCodegen, absl::StrCat("LLVM IR before O3:\n", os.str()));
    }
    RETURN_IF_ERROR(
        EmitKernel(*kernels[i], KernelSymbol(static_cast<int>(i)), &module));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                   jit.CreateTargetMachine());
  const bool packed =
      std::all_of(kernels.begin(), kernels.end(),
                  [](const Kernel* k) { return IsPackedProduct(*k); });
  RETURN_IF_ERROR(OptimizeModule(module, *machine,
                                 packed ? IrPasses::kNone : IrPasses::kO3));
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> object,
                   jit.CompileToObject(module, *machine));
  return std::string(object->getBuffer());
}

// `object` linked into a JITDylib of its own and the addresses of its first
// `num_kernels` kernels (KernelSymbol(0), ...); the dylib is owned by the
// returned code from the start, so a failed link or lookup removes it again.
absl::StatusOr<
    std::pair<std::shared_ptr<const ModuleCode>, std::vector<CompiledKernelFn>>>
LoadObject(OrcJit& jit, std::atomic<int>* live_modules,
           std::unique_ptr<llvm::MemoryBuffer> object, int num_kernels) {
  ASSIGN_OR_RETURN(llvm::orc::JITDylib * dylib, jit.CreateDylib());
  auto code = std::make_shared<const ModuleCode>(&jit, dylib, live_modules);
  RETURN_IF_ERROR(jit.AddObject(dylib, std::move(object)));
  std::vector<CompiledKernelFn> fns;
  for (int i = 0; i < num_kernels; ++i) {
    ASSIGN_OR_RETURN(void* address, jit.Lookup(dylib, KernelSymbol(i)));
    fns.push_back(reinterpret_cast<CompiledKernelFn>(address));
  }
  return std::make_pair(std::move(code), std::move(fns));
}
}  // namespace

ModuleCode::~ModuleCode() {
  absl::Status removed = jit_->RemoveDylib(dylib_);
  if (!removed.ok()) Log(LogTopic::kWarnings, removed.ToString());
  live_->fetch_sub(1, std::memory_order_relaxed);
}

KernelCompiler::KernelCompiler(std::unique_ptr<OrcJit> jit, std::string target,
                               int max_cached_kernels,
                               std::shared_ptr<CompileCache> persistent,
                               std::shared_ptr<ThreadPool> pool)
    : jit_(std::move(jit)),
      target_(std::move(target)),
      fingerprint_(absl::StrCat(jit_->TargetFingerprint(),
                                " guardjit=", GJ_LIBRARY_VERSION,
                                " codegen=", GJ_CODEGEN_FINGERPRINT)),
      persistent_(std::move(persistent)),
      pool_(std::move(pool)),
      cache_(max_cached_kernels) {}

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(
    int max_cached_kernels, std::shared_ptr<CompileCache> persistent,
    std::shared_ptr<ThreadPool> pool) {
  if (max_cached_kernels < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_cached_kernels is ", max_cached_kernels,
                     "; expected 0 (no cache) or more"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<OrcJit> jit, OrcJit::Create());
  // Objects from the cache may call libmvec, which a compile loads.
  if (persistent != nullptr) (void)LoadLibmvec();
  std::string target = jit->TargetDescription();
  return std::unique_ptr<KernelCompiler>(
      new KernelCompiler(std::move(jit), std::move(target), max_cached_kernels,
                         std::move(persistent), std::move(pool)));
}

std::string KernelCompiler::PersistentKey(const std::string& source) const {
  return absl::StrCat("guardjit llvm kernel\n", fingerprint_, "\n", source);
}

absl::StatusOr<KernelCompiler::Cached> KernelCompiler::Load(
    std::unique_ptr<llvm::MemoryBuffer> object) {
  ASSIGN_OR_RETURN(auto loaded,
                   LoadObject(*jit_, &live_modules_, std::move(object), 1));
  return Cached{loaded.second[0], std::move(loaded.first)};
}

absl::StatusOr<std::string> KernelCompiler::CompileObject(
    const Kernel& kernel) {
  const Kernel* one = &kernel;
  return CompileGroupObject(*jit_, {&one, 1});
}

absl::StatusOr<std::vector<CompiledKernelFn>> KernelCompiler::Compile(
    const std::vector<const Kernel*>& kernels,
    std::vector<std::shared_ptr<const ModuleCode>>* owners,
    absl::Span<const std::string> labels, CodeOrigin* origin) {
  std::lock_guard<std::mutex> lock(compile_mu_);
  CodeOrigin tally;
  std::vector<CompiledKernelFn> result(kernels.size(), nullptr);
  // Each distinct kernel of the batch: found in memory or the persistent
  // cache, or compiled below.
  struct Distinct {
    KernelCacheKey key;
    size_t first = 0;  // its first index in `kernels`
    std::optional<Cached> code;
    std::string persistent_key;
    std::string lock_token;              // the fleet's compile lock, while held
    absl::StatusOr<std::string> object;  // compiled now
    double compile_ms = 0;
  };
  std::vector<Distinct> distinct;
  std::vector<size_t> distinct_of(kernels.size());
  absl::flat_hash_map<KernelCacheKey, size_t> index_of;
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelCacheKey key =
        KernelCacheKey::Make("llvm", target_, "", kernels[i]->ToString());
    auto [it, inserted] = index_of.try_emplace(key, distinct.size());
    distinct_of[i] = it->second;
    if (!inserted) {
      cache_.CountHit();  // a kernel repeated in the batch
      continue;
    }
    Distinct d{.key = std::move(key), .first = i, .object = std::string()};
    d.code = cache_.Lookup(d.key);
    if (d.code.has_value()) ++tally.reused;
    distinct.push_back(std::move(d));
  }
  // Not in memory: the persistent cache, then a compile; in a fleet
  // (a remote tier), by the replica that takes the kernel's compile lock,
  // the others waiting for its record.
  auto load_hit = [&](Distinct& d, const CompileCache::Hit& hit) {
    absl::StatusOr<Cached> loaded = Load(llvm::MemoryBuffer::getMemBufferCopy(
        hit.record.payload, "gj_cached_kernel"));
    if (!loaded.ok()) {
      persistent_->CountError(
          absl::Status(loaded.status().code(),
                       absl::StrCat("a cached kernel did not link (",
                                    loaded.status().message(), ")")));
      return false;
    }
    d.code = *std::move(loaded);
    loaded_.fetch_add(1, std::memory_order_relaxed);
    ++tally.loaded;
    tally.loaded_remote += hit.tier != CacheTier::kDisk;
    tally.original_compile_ms += hit.record.info.compile_ms;
    if (tally.original_pid == 0) tally.original_pid = hit.record.info.pid;
    cache_.Insert(d.key, *d.code);
    return true;
  };
  std::vector<Distinct*> to_compile;  // here, holding their locks if any
  std::vector<Distinct*> waiting;     // another replica holds their locks
  // Whatever happens, the locks this Compile took are released.
  auto release_locks = absl::MakeCleanup([&] {
    if (persistent_ == nullptr) return;
    for (Distinct* d : to_compile) {
      persistent_->ReleaseCompile(d->persistent_key, d->lock_token);
    }
  });
  for (Distinct& d : distinct) {
    if (d.code.has_value()) continue;
    if (persistent_ != nullptr) {
      d.persistent_key = PersistentKey(d.key.source);
      if (std::optional<CompileCache::Hit> hit =
              persistent_->Lookup(d.persistent_key);
          hit.has_value() && load_hit(d, *hit)) {
        continue;
      }
      if (!persistent_->ClaimCompile(d.persistent_key, &d.lock_token)) {
        waiting.push_back(&d);
        continue;
      }
      if (!d.lock_token.empty()) {
        if (std::optional<CompileCache::Hit> hit =
                persistent_->StoredBeforeClaim(d.persistent_key);
            hit.has_value() && load_hit(d, *hit)) {
          persistent_->ReleaseCompile(d.persistent_key, d.lock_token);
          d.lock_token.clear();
          continue;
        }
      }
    }
    to_compile.push_back(&d);
    RETURN_IF_ERROR(CheckKernelCompileAllowed(
        d.key, d.first < labels.size() ? labels[d.first]
                                       : absl::StrCat("kernel ", d.first)));
  }
  // Without a persistent cache (whose unit is one kernel's object) the
  // kernels compile in groups, one LLVM module per thread: a kernel's own
  // module cost about as much to optimize and generate code for as its
  // loops, small or not (mobilenet_v2's 18 kernels: 271 ms in opt-19 -O3 and
  // llc-19 -O3 passes as 18 modules, 160 ms as one), so fewer modules, one per
  // thread that compiles them, spend less. A group is one object in one dylib,
  // loaded until its last kernel's last owner lets go.
  if (persistent_ == nullptr && to_compile.size() > 1) {
    const size_t num_groups = std::min<size_t>(
        pool_ != nullptr ? std::max(pool_->num_threads(), 1) : 1,
        to_compile.size());
    // The longest loop IR first, each onto the lightest group so far (the
    // printed IR's length standing for its compile time). Packed products
    // go in groups of their own, which skip the IR passes.
    std::vector<Distinct*> order = to_compile;
    std::stable_sort(order.begin(), order.end(),
                     [](const Distinct* a, const Distinct* b) {
                       return a->key.source.size() > b->key.source.size();
                     });
    std::vector<std::vector<Distinct*>> groups;
    for (const bool packed : {false, true}) {
      std::vector<std::vector<Distinct*>> kind(num_groups);
      std::vector<size_t> weight(num_groups, 0);
      for (Distinct* d : order) {
        if (IsPackedProduct(*kernels[d->first]) != packed) continue;
        const size_t g = static_cast<size_t>(
            std::min_element(weight.begin(), weight.end()) - weight.begin());
        kind[g].push_back(d);
        weight[g] += d->key.source.size();
      }
      for (std::vector<Distinct*>& group : kind) {
        if (!group.empty()) groups.push_back(std::move(group));
      }
    }
    std::vector<absl::StatusOr<std::string>> objects(groups.size());
    auto compile_groups = [&](int64_t begin, int64_t end) {
      for (int64_t g = begin; g < end; ++g) {
        std::vector<const Kernel*> members;
        for (const Distinct* d : groups[g])
          members.push_back(kernels[d->first]);
        objects[g] = CompileGroupObject(*jit_, members);
      }
    };
    if (pool_ != nullptr && groups.size() > 1) {
      pool_->ParallelFor(static_cast<int64_t>(groups.size()), 1,
                         compile_groups);
    } else {
      compile_groups(0, static_cast<int64_t>(groups.size()));
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!objects[g].ok()) return objects[g].status();
      ASSIGN_OR_RETURN(auto loaded,
                       LoadObject(*jit_, &live_modules_,
                                  llvm::MemoryBuffer::getMemBufferCopy(
                                      *objects[g], "gj_compiled_kernels"),
                                  static_cast<int>(groups[g].size())));
      for (size_t i = 0; i < groups[g].size(); ++i) {
        Distinct& d = *groups[g][i];
        d.code = Cached{loaded.second[i], loaded.first};
        compiled_.fetch_add(1, std::memory_order_relaxed);
        ++tally.compiled;
        cache_.Insert(d.key, *d.code);
      }
    }
    to_compile.clear();
  }
  // Compiled in parallel (each its own LLVM context and target machine),
  // loaded and stored in order.
  auto compile = [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      Distinct& d = *to_compile[j];
      const auto start = std::chrono::steady_clock::now();
      d.object = CompileObject(*kernels[d.first]);
      d.compile_ms = MillisSince(start);
    }
  };
  if (pool_ != nullptr && to_compile.size() > 1) {
    pool_->ParallelFor(static_cast<int64_t>(to_compile.size()), 1, compile);
  } else {
    compile(0, static_cast<int64_t>(to_compile.size()));
  }
  auto finish = [&](Distinct& d) -> absl::Status {
    if (!d.object.ok()) return d.object.status();
    if (persistent_ != nullptr) {
      CacheRecord record;
      record.key = d.persistent_key;
      record.info = {.kind = kObjectKind,
                     .pid = static_cast<int64_t>(::getpid()),
                     .compile_ms = d.compile_ms,
                     .created_ms = UnixMillis(),
                     .producer = absl::StrCat("guardjit ", GJ_LIBRARY_VERSION)};
      record.payload = *d.object;
      persistent_->Store(record);
    }
    ASSIGN_OR_RETURN(Cached compiled, Load(llvm::MemoryBuffer::getMemBufferCopy(
                                          *d.object, "gj_compiled_kernel")));
    d.code = std::move(compiled);
    compiled_.fetch_add(1, std::memory_order_relaxed);
    ++tally.compiled;
    // Evicted code still in use stays loaded through its owners.
    cache_.Insert(d.key, *d.code);
    return absl::OkStatus();
  };
  for (Distinct* d : to_compile) RETURN_IF_ERROR(finish(*d));
  std::move(release_locks).Invoke();
  to_compile.clear();
  // What other replicas were compiling: their records, or past the wait
  // bound (a replica that died, a slow one) compiled here.
  for (Distinct* d : waiting) {
    if (std::optional<CompileCache::Hit> hit =
            persistent_->WaitFor(d->persistent_key);
        hit.has_value() && load_hit(*d, *hit)) {
      continue;
    }
    RETURN_IF_ERROR(CheckKernelCompileAllowed(
        d->key, d->first < labels.size() ? labels[d->first]
                                         : absl::StrCat("kernel ", d->first)));
    const auto start = std::chrono::steady_clock::now();
    d->object = CompileObject(*kernels[d->first]);
    d->compile_ms = MillisSince(start);
    RETURN_IF_ERROR(finish(*d));
  }
  std::vector<std::shared_ptr<const ModuleCode>>& list =
      owners != nullptr ? *owners : pinned_;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Cached& code = *distinct[distinct_of[i]].code;
    result[i] = code.fn;
    if (std::find(list.begin(), list.end(), code.code) == list.end()) {
      list.push_back(code.code);
    }
  }
  if (origin != nullptr) origin->Add(tally);
  return result;
}

int KernelCompiler::cached_kernels() const {
  return static_cast<int>(cache_.stats().entries);
}

int KernelCompiler::cache_hits() const {
  return static_cast<int>(cache_.stats().hits);
}

}  // namespace guardjit
