#ifndef GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_
#define GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_

// The optimization pipeline of emitted kernels (llvm_codegen.h).

#include "absl/status/status.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace guardjit {

// How much of the pipeline a module gets.
enum class IrPasses {
  // The new pass manager's O3 pipeline, loop and SLP vectorizers on: loop
  // IR (llvm_codegen.h) needs it to become vector code.
  kO3,
  // None: IR emitted as the vector code it is to be (packed products,
  // packed_gemm_codegen.h), which O3 made no faster while taking half its
  // compile time (opt-19 -O3 on one GPT-2 product: 26 ms of 44; the k loop
  // llc-19 made of either was the same 2 loads, 13 broadcasts and 26 FMAs).
  kNone,
};

// Stamps `machine`'s CPU and features on every function, runs `passes` and
// verifies the result.
absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine,
                            IrPasses passes = IrPasses::kO3);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_OPTIMIZE_H_
