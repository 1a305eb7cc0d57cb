#include "jit/llvm/kernel_compiler.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/llvm/llvm_optimize.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {

ModuleCode::~ModuleCode() {
  absl::Status removed = jit_->Remove(tracker_);
  if (!removed.ok()) Log(LogTopic::kWarnings, removed.ToString());
  live_->fetch_sub(1, std::memory_order_relaxed);
}

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(
    int max_cached_kernels) {
  if (max_cached_kernels < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_cached_kernels is ", max_cached_kernels,
                     "; expected 0 (no cache) or more"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<OrcJit> jit, OrcJit::Create());
  std::string target = jit->TargetDescription();
  return std::unique_ptr<KernelCompiler>(new KernelCompiler(
      std::move(jit), std::move(target), max_cached_kernels));
}

absl::StatusOr<std::vector<CompiledKernelFn>> KernelCompiler::Compile(
    const std::vector<const Kernel*>& kernels,
    std::vector<std::shared_ptr<const ModuleCode>>* owners,
    absl::Span<const std::string> labels) {
  std::lock_guard<std::mutex> lock(compile_mu_);
  auto own = [&](const std::shared_ptr<const ModuleCode>& code) {
    std::vector<std::shared_ptr<const ModuleCode>>& list =
        owners != nullptr ? *owners : pinned_;
    if (std::find(list.begin(), list.end(), code) == list.end()) {
      list.push_back(code);
    }
  };
  std::vector<CompiledKernelFn> result(kernels.size(), nullptr);
  std::vector<KernelCacheKey> keys;
  for (const Kernel* k : kernels) {
    keys.push_back(KernelCacheKey::Make("llvm", target_, "", k->ToString()));
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(
      absl::StrCat("gj_module_", next_module_), *context);
  // (index in `kernels`, symbol) of each kernel compiled now.
  std::vector<std::pair<size_t, std::string>> fresh;
  absl::flat_hash_map<KernelCacheKey, std::string> symbol_of_key;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (std::optional<Cached> hit = cache_.Lookup(keys[i])) {
      result[i] = hit->fn;
      own(hit->code);
      continue;
    }
    // A kernel repeated in this batch compiles once.
    auto [sym, inserted] = symbol_of_key.try_emplace(
        keys[i], absl::StrCat("gj_kernel_", next_module_, "_", fresh.size()));
    if (inserted) {
      RETURN_IF_ERROR(CheckKernelCompileAllowed(
          keys[i], i < labels.size() ? labels[i] : absl::StrCat("kernel ", i)));
      RETURN_IF_ERROR(EmitKernel(*kernels[i], sym->second, module.get()));
    } else {
      cache_.CountHit();
    }
    fresh.push_back({i, sym->second});
  }
  if (fresh.empty()) return result;
  ++next_module_;
  if (LogEnabled(LogTopic::kCodegen)) {
    // Before OptimizeModule stamps the host's CPU and features on it: the
    // same text on every machine (golden files compare it).
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
    Log(LogTopic::kCodegen, absl::StrCat("LLVM IR before O3:\n", os.str()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine,
                   jit_->CreateTargetMachine());
  RETURN_IF_ERROR(OptimizeModule(*module, *machine));
  ASSIGN_OR_RETURN(llvm::orc::ResourceTrackerSP tracker,
                   jit_->AddModule(llvm::orc::ThreadSafeModule(
                       std::move(module), std::move(context))));
  auto code = std::make_shared<const ModuleCode>(jit_.get(), std::move(tracker),
                                                 &live_modules_);
  own(code);
  for (const auto& [i, symbol] : fresh) {
    ASSIGN_OR_RETURN(void* address, jit_->Lookup(symbol));
    result[i] = reinterpret_cast<CompiledKernelFn>(address);
  }
  // Inserted once every lookup succeeded (a kernel repeated in the batch
  // once). Evicted modules still in use stay loaded through their owners.
  for (const auto& [i, symbol] : fresh) {
    cache_.Insert(keys[i], Cached{result[i], code});
  }
  return result;
}

int KernelCompiler::compiled() const {
  return static_cast<int>(cache_.stats().compiles);
}

int KernelCompiler::cached_kernels() const {
  return static_cast<int>(cache_.stats().entries);
}

int KernelCompiler::cache_hits() const {
  return static_cast<int>(cache_.stats().hits);
}

}  // namespace guardjit
