#ifndef GUARDJIT_JIT_LOWERING_LOOP_IR_H_
#define GUARDJIT_JIT_LOWERING_LOOP_IR_H_

// The backend-neutral loop IR: what a fused group computes, as loops over
// index expressions with scalar value expressions in their bodies. The LLVM
// CPU backend (llvm_codegen.h) and later the CUDA C generator consume it;
// nothing here knows vector widths, threads or LLVM types.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "runtime/index_expr.h"

namespace guardjit {

enum class UnaryOp {
  kNeg,
  kAbs,
  kExp,
  kLog,
  kLog1p,
  kSqrt,
  kRsqrt,
  kReciprocal,
  kTanh,
  kSigmoid,
  kRelu,
  kGeluErf,
  kGeluTanh,
  kSilu,
  kErf,
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSign,
  kLogicalNot,
  kBitwiseNot,
  kIsNan,
  kExpm1,
  kLog2,
  kLog10,
  kTrunc,
  kTan,
  kSinh,
  kCosh,
  kAsin,
  kAcos,
  kAtan,
  kAsinh,
  kAcosh,
  kAtanh,
  kIsInf,
};

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,      // floating only
  kPow,      // floating only
  kMaximum,  // NaN-propagating on floats
  kMinimum,
  kEq,  // comparisons give bool
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,  // bitwise on integers, logical on bool
  kOr,
  kXor,
  kFmod,   // floating only: C's fmod (the result takes the dividend's sign)
  kAtan2,  // floating only
};

// float16 and bfloat16 are storage dtypes in the loop IR: loaded, stored and
// cast, never computed in. Values of those dtypes compute in float32 (as
// PyTorch's opmath and Inductor do) and round when stored.
inline DType ComputeDType(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? DType::kFloat32 : d;
}

const char* UnaryOpName(UnaryOp op);
const char* BinaryOpName(BinaryOp op);

// An immutable scalar expression: the value of one element. Operands of a
// binary op share its dtype (lowering inserts the casts); comparisons give
// bool. Expressions form a DAG: a shared subexpression is one node, and
// printers and backends evaluate it once per use site's scope.
class ValueExpr {
 public:
  enum class Kind {
    kLoad,
    kConst,
    kLocal,
    kUnary,
    kBinary,
    kWhere,
    kCast,
    kIndex,
    kGather
  };

  ValueExpr() : ValueExpr(IntConst(DType::kInt64, 0)) {}

  // buffer[index] of the kernel's buffer parameter `buffer`.
  static ValueExpr Load(int buffer, DType dtype, IndexExpr index);
  // A constant: integers (and bool) exactly, floats as the double rounded to
  // `dtype`.
  static ValueExpr Const(DType dtype, double value);
  static ValueExpr IntConst(DType dtype, int64_t value);
  // The int64 value of `index` (a symbolic size: element counts of a
  // dynamic entry's means and variances).
  static ValueExpr Index(IndexExpr index);
  // buffer[base + index * stride] for an int64 value `index` that must lie
  // in [0, bound): an index outside fails the kernel's index check number
  // `check` (the kernel reports it; see Kernel::num_checks) and reads
  // nothing out of bounds (the value is then unspecified).
  static ValueExpr Gather(int buffer, DType dtype, IndexExpr base,
                          const ValueExpr& index, IndexExpr stride,
                          IndexExpr bound, int check);
  // The result of the kernel's reduction stage writing `local`.
  static ValueExpr Local(int local, DType dtype);
  static ValueExpr Unary(UnaryOp op, const ValueExpr& x);
  static ValueExpr Binary(BinaryOp op, const ValueExpr& a, const ValueExpr& b);
  static ValueExpr Where(const ValueExpr& cond, const ValueExpr& a,
                         const ValueExpr& b);
  // PyTorch's element conversion (runtime/convert.h): float to int truncates,
  // NaN and out-of-range give INT64_MIN truncated; nonzero (and NaN) is true.
  static ValueExpr Cast(const ValueExpr& x, DType dtype);

  Kind kind() const { return node_->kind; }
  DType dtype() const { return node_->dtype; }
  int buffer() const { return node_->id; }  // kLoad, kGather
  int local() const { return node_->id; }   // kLocal
  // kLoad, kIndex; kGather: the base.
  const IndexExpr& index() const { return node_->index; }
  const IndexExpr& stride() const { return node_->stride; }  // kGather
  const IndexExpr& bound() const { return node_->bound; }    // kGather
  int check() const { return node_->op; }                    // kGather
  bool is_int_const() const { return node_->is_int; }
  double float_value() const { return node_->fvalue; }
  int64_t int_value() const { return node_->ivalue; }
  UnaryOp unary_op() const { return static_cast<UnaryOp>(node_->op); }
  BinaryOp binary_op() const { return static_cast<BinaryOp>(node_->op); }
  int num_operands() const { return static_cast<int>(node_->operands.size()); }
  const ValueExpr& operand(int i) const { return node_->operands[i]; }

  // Identity of the shared node, for memoizing per use site.
  const void* id() const { return node_.get(); }

  // `root` with every use of the node `target` replaced by `with`; sets
  // *found when there was one.
  static ValueExpr Replace(const ValueExpr& root, const ValueExpr& target,
                           const ValueExpr& with, bool* found);

 private:
  struct Node {
    Kind kind;
    DType dtype;
    int id = -1;
    int op = 0;
    IndexExpr index;
    IndexExpr stride, bound;  // kGather
    bool is_int = false;
    double fvalue = 0;
    int64_t ivalue = 0;
    std::vector<ValueExpr> operands;
  };
  explicit ValueExpr(std::shared_ptr<const Node> node)
      : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

struct LoopRange {
  int var;           // the loop variable i<var>, from 0 to extent
  IndexExpr extent;  // may use size parameters
};

// kArgMax/kArgMin: the local is the int64 row-major position, over the
// stage's loops, of the first maximum/minimum; a NaN beats every number.
enum class CombineOp { kSum, kProd, kMax, kMin, kArgMax, kArgMin };
const char* CombineOpName(CombineOp op);

// One step of a kernel's body at each point of its outer loops: a reduction
// over its own inner loops into a local scalar, or stores of a value at every
// point of its inner loops (no inner loops: one store per outer point).
struct Stage {
  enum class Kind { kReduce, kStore };
  Kind kind = Kind::kStore;
  std::vector<LoopRange> loops;
  ValueExpr value;  // reduced (kReduce) or stored (kStore)
  // kReduce: local = combine(value over loops), accumulated in
  // value.dtype() from the combine op's identity.
  int local = -1;
  CombineOp combine = CombineOp::kSum;
  // kStore: buffer[index] = value. kReduce with buffer >= 0 also stores each
  // value it reduces there, for a later stage to read back instead of
  // recomputing it (softmax's exp).
  int buffer = -1;
  IndexExpr index;
};

struct BufferParam {
  std::string name;  // "in0", "out1": for printing only
  DType dtype = DType::kFloat32;
  bool is_output = false;
};

// A float32 matrix product C = alpha * A @ B whose B was packed once into
// column panels (jit/steps/packed_gemm.h), as a kernel of its own: buffers
// a ([m, k], row stride lda, column stride a_col_stride elements), b (the
// packed panels: panel p holds columns [p * panel_width, (p + 1) *
// panel_width) of B, k rows of panel_width values, zeros past column n) and
// c (the contiguous [m, n] product, written whole); the outer loop runs over
// panels. The code computes tiles of tile_rows rows by a panel's columns in
// registers (a panel is panel_width / vector_width vectors of
// vector_width floats), over blocks of k_block rows of the panel; every size
// is static.
struct PackedGemm {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, a_col_stride = 1;
  double alpha = 1;
  int vector_width = 8;
  int panel_width = 16;  // a multiple of vector_width
  int tile_rows = 4;
  int64_t k_block = 0;  // 1..k
  // Runs on the library's register tiles compiled ahead of time
  // (jit/steps/packed_gemm_kernels.h) rather than on code generated for
  // this product: decided once, when the product is planned.
  bool ahead_of_time = false;
  int64_t panels() const { return (n + panel_width - 1) / panel_width; }
  std::string ToString() const;
};

// One fused group: outer loops (a backend may split or parallelize the first
// one), then the stages in order at every outer point. Buffers are distinct
// memory (outputs never alias inputs) addressed in elements.
struct Kernel {
  std::vector<BufferParam> buffers;
  int num_size_params = 0;
  std::vector<LoopRange> outer;
  std::vector<Stage> stages;
  int num_locals = 0;
  // Index checks of its gathers, numbered from 0: a run of the kernel
  // reports the set of checks that failed (bit min(check, 63) of a mask), so
  // its caller can name the node whose index was out of range. Outputs are
  // unspecified after a failed check.
  int num_checks = 0;
  // Set: the kernel is this packed product (its buffers a, b, c and one
  // outer loop over panels; no stages).
  std::optional<PackedGemm> packed_gemm;

  // The printed IR, which is also the kernel cache's key.
  std::string ToString() const;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LOWERING_LOOP_IR_H_
