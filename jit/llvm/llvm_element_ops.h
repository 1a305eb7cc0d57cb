#ifndef GUARDJIT_JIT_LLVM_LLVM_ELEMENT_OPS_H_
#define GUARDJIT_JIT_LLVM_LLVM_ELEMENT_OPS_H_

// The arithmetic of one element in the CPU codegen (llvm_codegen.h): the LLVM
// types of dtypes, casts, and the loop IR's unary and binary ops as LLVM
// instructions, intrinsics or libm calls. Nothing here knows a kernel's loops
// or buffers; each function works on scalars and on vectors alike, emitting
// at `b`'s insert point.

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "jit/lowering/loop_ir.h"
#include "llvm/IR/IRBuilder.h"

namespace guardjit {

// uint8 and bool: compared, extended and converted as unsigned.
inline bool IsUnsignedInt(DType d) {
  return d == DType::kUInt8 || d == DType::kBool;
}

// The type a value of `d` is computed in (bool as i1); null for a dtype the
// CPU codegen does not handle.
llvm::Type* LlvmType(llvm::IRBuilderBase& b, DType d);

// The type a value of `d` is stored as in a buffer: bool as a byte.
llvm::Type* LlvmMemType(llvm::IRBuilderBase& b, DType d);

// `x` of `from` converted to `to` as the eager conversions do
// (runtime/convert.h), float16 and bfloat16 through float32.
llvm::Value* EmitCast(llvm::IRBuilderBase& b, llvm::Value* x, DType from,
                      DType to);

// `op` on `x` of `d`. Math: LLVM intrinsics where they exist (sqrt, fabs,
// floor, log, sin, cos, ...); float32 exp (also inside sigmoid, silu) is
// expanded inline (jit/llvm/llvm_math.h); tanh, erf, log1p and the other
// transcendental functions call libm, declared without side effects so the
// loop vectorizer may use their libmvec variants (jit/llvm/libmvec.h). INTERNAL
// for an op the dtype does not support.
absl::StatusOr<llvm::Value*> EmitUnary(llvm::IRBuilderBase& b, UnaryOp op,
                                       DType d, llvm::Value* x);

// `op` on `a` and `c`, both of `d`. INTERNAL for an op the dtype does not
// support (integer division, bitwise ops of floats, ...).
absl::StatusOr<llvm::Value*> EmitBinary(llvm::IRBuilderBase& b, BinaryOp op,
                                        DType d, llvm::Value* a,
                                        llvm::Value* c);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_ELEMENT_OPS_H_
