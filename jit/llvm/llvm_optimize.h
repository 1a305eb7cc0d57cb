#ifndef GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_
#define GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_

// The optimization pipeline of emitted kernels (llvm_codegen.h).

#include "absl/status/status.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace guardjit {

// Runs the new pass manager's O3 pipeline (loop and SLP vectorizers on) for
// `machine`'s CPU and features, after stamping them on every function.
absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_
