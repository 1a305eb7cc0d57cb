#include "jit/llvm/kernel_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

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

// Every kernel is the one function of its module, under this name.
constexpr char kKernelSymbol[] = "gj_kernel";
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
  ASSIGN_OR_RETURN(llvm::orc::JITDylib * dylib, jit_->CreateDylib());
  // Owned from here: a failed link or lookup removes the dylib again.
  auto code =
      std::make_shared<const ModuleCode>(jit_.get(), dylib, &live_modules_);
  RETURN_IF_ERROR(jit_->AddObject(dylib, std::move(object)));
  ASSIGN_OR_RETURN(void* address, jit_->Lookup(dylib, kKernelSymbol));
  return Cached{reinterpret_cast<CompiledKernelFn>(address), std::move(code)};
}

absl::StatusOr<std::string> KernelCompiler::CompileObject(
    const Kernel& kernel) {
  llvm::LLVMContext context;
  llvm::Module module("gj_kernel_module", context);
  RETURN_IF_ERROR(EmitKernel(kernel, kKernelSymbol, &module));
  if (LogEnabled(LogTopic::kCodegen)) {
    // Before OptimizeModule stamps the host's CPU and features on it: the
    // same text on every machine (golden files compare it).
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
    Log(LogTopic::kCodegen, absl::StrCat("LLVM IR before O3:\n", os.str()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                   jit_->CreateTargetMachine());
  RETURN_IF_ERROR(OptimizeModule(module, *machine));
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> object,
                   jit_->CompileToObject(module, *machine));
  return std::string(object->getBuffer());
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
