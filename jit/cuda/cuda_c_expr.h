#ifndef GUARDJIT_JIT_CUDA_CUDA_C_EXPR_H_
#define GUARDJIT_JIT_CUDA_CUDA_C_EXPR_H_

// The CUDA C generator's expression layer: C types of the loop IR's dtypes,
// literals, index expressions and the scalar operations, as C text. Values
// compute as PyTorch's kernels do (runtime/convert.h, the CPU codegen):
// float16/bfloat16 values are floats holding a value of the dtype, signed
// integer arithmetic wraps, float-to-integer conversion goes through double.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit::cuda_c {

bool IsReducedFloat(DType d);
// The C type a value of dtype `d` computes in.
absl::StatusOr<std::string> ComputeType(DType d);
// The C type of a buffer element of dtype `d` (bool is a byte).
absl::StatusOr<std::string> StorageType(DType d);
// The unsigned type int32/int64 arithmetic wraps through; null for others
// (narrower types cannot overflow once promoted to int).
const char* WrapType(DType d);
// `v` rounded to `d` (float32, float16, bfloat16 or float64) as a literal;
// inf and NaN as bit casts.
std::string FloatLiteral(double v, DType d);
std::string IntLiteral(int64_t v);
// `e` as a `long long` expression over i<var> and s<size>; with `narrow`,
// as an `int` expression over i<var> and s<size>i (the caller declares
// `const int s<size>i` and the loop variables as int, and has proved the
// values fit: cuda_index_range.h).
std::string Index(const IndexExpr& e, bool narrow = false);
// The product of `loops`' extents.
IndexExpr Extent(const std::vector<LoopRange>& loops);

// The operations on values `x`, `a`, `b` (C expressions of their compute
// types) of dtype `d`; comparisons give bool.
absl::StatusOr<std::string> Cast(const std::string& x, DType from, DType to);
absl::StatusOr<std::string> Unary(UnaryOp op, DType d, const std::string& x);
absl::StatusOr<std::string> Binary(BinaryOp op, DType d, const std::string& a,
                                   const std::string& b);

}  // namespace guardjit::cuda_c

#endif  // GUARDJIT_JIT_CUDA_CUDA_C_EXPR_H_
