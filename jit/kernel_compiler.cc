#include "jit/kernel_compiler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/llvm_codegen.h"
#include "jit/llvm_optimize.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create() {
  ASSIGN_OR_RETURN(std::unique_ptr<OrcJit> jit, OrcJit::Create());
  std::string target = jit->TargetDescription();
  return std::unique_ptr<KernelCompiler>(
      new KernelCompiler(std::move(jit), std::move(target)));
}

absl::StatusOr<std::vector<CompiledKernelFn>> KernelCompiler::Compile(
    const std::vector<const Kernel*>& kernels) {
  absl::MutexLock lock(&mu_);
  std::vector<CompiledKernelFn> result(kernels.size(), nullptr);
  std::vector<std::string> keys;
  for (const Kernel* k : kernels)
    keys.push_back(absl::StrCat(target_, "\n", k->ToString()));
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(
      absl::StrCat("gj_module_", next_module_), *context);
  // (index in `kernels`, symbol) of each kernel compiled now.
  std::vector<std::pair<size_t, std::string>> fresh;
  absl::flat_hash_map<std::string, std::string> symbol_of_key;
  for (size_t i = 0; i < kernels.size(); ++i) {
    auto it = cache_.find(keys[i]);
    if (it != cache_.end()) {
      result[i] = it->second;
      ++hits_;
      continue;
    }
    auto [sym, inserted] = symbol_of_key.try_emplace(
        keys[i], absl::StrCat("gj_kernel_", next_module_, "_", fresh.size()));
    if (inserted) {
      RETURN_IF_ERROR(EmitKernel(*kernels[i], sym->second, module.get()));
    } else {
      ++hits_;
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
  RETURN_IF_ERROR(jit_->AddModule(
      llvm::orc::ThreadSafeModule(std::move(module), std::move(context))));
  for (const auto& [i, symbol] : fresh) {
    ASSIGN_OR_RETURN(void* address, jit_->Lookup(symbol));
    result[i] = reinterpret_cast<CompiledKernelFn>(address);
    if (cache_.try_emplace(keys[i], result[i]).second) ++compiled_;
  }
  return result;
}

int KernelCompiler::compiled() const {
  absl::MutexLock lock(&mu_);
  return compiled_;
}

int KernelCompiler::cache_hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

}  // namespace guardjit
