#ifndef GUARDJIT_JIT_LLVM_LLVM_CODEGEN_H_
#define GUARDJIT_JIT_LLVM_LLVM_CODEGEN_H_

// The CPU backend of the loop IR: LLVM IR through IRBuilder (optimized by
// llvm_optimize.h at O3 for the host CPU, so the loop vectorizer sees every
// kernel).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "jit/lowering/loop_ir.h"
#include "llvm/IR/Module.h"

namespace guardjit {

// What a compiled kernel is: `buffers` holds one pointer per kernel buffer
// parameter, `sizes` one value per size parameter; the kernel runs its first
// outer loop over [begin, end) (its whole body once when it has no outer
// loops and begin < end), so callers can split that loop across threads.
// It returns the mask of its index checks that failed over that range (bit
// min(check, 63); 0 when every gathered index was in range or the kernel has
// no checks).
using CompiledKernelFn = int64_t (*)(void* const* buffers, const int64_t* sizes,
                                     int64_t begin, int64_t end);

// Adds `kernel` to `module` as an external function `name` of the
// CompiledKernelFn signature. Math (jit/llvm/llvm_element_ops.h): LLVM
// intrinsics where they exist (sqrt, fabs, floor, log, sin, cos, pow,
// maximum/minimum); float32 exp (also inside sigmoid, silu, softmax) is
// expanded inline, vectorizable, within 2 ulp of glibc's expf
// (jit/llvm/llvm_math.h); tanh, erf and log1p call libm, resolved from the
// process by the JIT.
absl::Status EmitKernel(const Kernel& kernel, const std::string& name,
                        llvm::Module* module);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_CODEGEN_H_
