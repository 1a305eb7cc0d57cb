#ifndef GUARDJIT_JIT_LLVM_LLVM_MATH_H_
#define GUARDJIT_JIT_LLVM_LLVM_MATH_H_

// Math the CPU codegen expands inline as LLVM IR rather than calling libm, so
// the loop vectorizer keeps the loops around it vectorized: float32 exp and
// tanh, and the float16/bfloat16 <-> float32 conversions. Each works on scalars
// and on vectors of the scalar type alike.

#include "core/dtype.h"
#include "llvm/IR/IRBuilder.h"

namespace guardjit {

// e^x for float32 x: within 2 ulp of glibc's expf over the whole float range
// (denormal results, overflow to inf, underflow to 0, NaN kept), tested by
// LlvmCodegenTest.Float32ExpIsWithinTwoUlpOfLibm.
llvm::Value* EmitExpF32(llvm::IRBuilderBase& b, llvm::Value* x);

// tanh(x) for float32 x: within 3 ulp of glibc's tanhf (and 1 ulp below
// |x| = 0.625), inf -> +-1, NaN kept, -0 kept; tested by
// LlvmCodegenTest.Float32TanhIsWithinThreeUlpOfLibm. A GELU (tanh form) spends
// most of its time in libmvec's tanh call otherwise.
llvm::Value* EmitTanhF32(llvm::IRBuilderBase& b, llvm::Value* x);

// A float16 (fpext) or bfloat16 (integer shift) value as float32.
llvm::Value* EmitReducedToFloat(llvm::IRBuilderBase& b, llvm::Value* x,
                                DType from);

// A float32 value rounded to float16 (fptrunc) or bfloat16 (round to nearest
// even with integer operations, NaN kept quiet), as core/half.h rounds.
llvm::Value* EmitFloatToReduced(llvm::IRBuilderBase& b, llvm::Value* x,
                                DType to);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_MATH_H_
