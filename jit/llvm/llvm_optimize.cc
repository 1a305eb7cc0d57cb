#include "jit/llvm/llvm_optimize.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/llvm/libmvec.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

absl::Status Verify(const llvm::Module& module) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(module, &os)) {
    return absl::InternalError(
        absl::StrCat("optimized IR invalid: ", os.str()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine,
                            IrPasses ir_passes) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple().str());
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", machine.getTargetCPU());
    f.addFnAttr("target-features", machine.getTargetFeatureString());
  }
  if (ir_passes == IrPasses::kNone) return Verify(module);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  options.LoopInterleaving = true;
  llvm::PassBuilder builder(&machine, options);
  // Registered before the defaults, so the vectorizer sees libmvec.
  llvm::TargetLibraryInfoImpl library(machine.getTargetTriple());
  AddLibmvecFunctions(machine, library);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
  return Verify(module);
}

}  // namespace guardjit
