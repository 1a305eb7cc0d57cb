#ifndef GUARDJIT_RUNTIME_INDEX_EXPR_H_
#define GUARDJIT_RUNTIME_INDEX_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/sym_expr.h"
#include "core/tensor.h"

namespace guardjit {

// An immutable integer expression over loop variables, constants and kernel
// size parameters (symbolic sizes passed to a kernel as arguments, so one
// kernel serves every size a dynamic cache entry accepts). Building an
// expression simplifies it lightly (constant folding, x+0, x*1, x*0, x//1,
// x%1 and nested constant sums/products), so structurally equal expressions
// print and compare equal. Copying shares the tree.
class IndexExpr {
 public:
  enum class Kind {
    kConst,
    kVar,
    kSize,
    kAdd,
    kMul,
    kFloorDiv,
    kMod,
    kMax,
    kMin
  };

  IndexExpr() : IndexExpr(Const(0)) {}
  static IndexExpr Const(int64_t value);
  static IndexExpr Var(int id);   // loop variable i<id>
  static IndexExpr Size(int id);  // size parameter s<id>

  friend IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
  friend IndexExpr operator*(const IndexExpr& a, const IndexExpr& b);
  // Floor division and modulo (Python semantics; operands of kernels are
  // non-negative, where both agree with C).
  static IndexExpr FloorDiv(const IndexExpr& a, const IndexExpr& b);
  static IndexExpr Mod(const IndexExpr& a, const IndexExpr& b);
  static IndexExpr Max(const IndexExpr& a, const IndexExpr& b);
  static IndexExpr Min(const IndexExpr& a, const IndexExpr& b);

  // A size expression over symbols s0, s1, ... as one over the size
  // parameters of the same numbers.
  static IndexExpr FromSym(const SymExpr& e);

  Kind kind() const { return node_->kind; }
  bool is_const() const { return kind() == Kind::kConst; }
  bool is_const(int64_t v) const { return is_const() && value() == v; }
  int64_t value() const { return node_->value; }             // kConst
  int id() const { return static_cast<int>(node_->value); }  // kVar, kSize
  const IndexExpr& lhs() const { return *node_->lhs; }
  const IndexExpr& rhs() const { return *node_->rhs; }

  // The value with size parameter i = sizes[i]; no loop variables allowed
  // (they read as 0). Division by zero gives 0; sums and products wrap.
  int64_t Evaluate(absl::Span<const int64_t> sizes) const;
  // Evaluate, with `overflow` set when any step of it wraps past int64
  // (left as it was otherwise).
  int64_t EvaluateChecked(absl::Span<const int64_t> sizes,
                          bool& overflow) const;

  // "(i0*1024 + i1)", "s0", "(i0 // 3)", "max(s0, 2)".
  std::string ToString() const;

  friend bool operator==(const IndexExpr& a, const IndexExpr& b);
  friend bool operator!=(const IndexExpr& a, const IndexExpr& b) {
    return !(a == b);
  }

 private:
  struct Node {
    Kind kind;
    int64_t value = 0;
    std::unique_ptr<IndexExpr> lhs, rhs;
  };
  explicit IndexExpr(std::shared_ptr<const Node> node)
      : node_(std::move(node)) {}
  static IndexExpr Make(Kind kind, const IndexExpr& a, const IndexExpr& b);

  std::shared_ptr<const Node> node_;
};

std::vector<IndexExpr> ConstExprs(IntSpan values);

// Row-major contiguous strides of `sizes` (size-1 dims contribute nothing).
std::vector<IndexExpr> ContiguousStrideExprs(
    const std::vector<IndexExpr>& sizes);

// Channels-last strides of [N, C, spatial...] `sizes` (rank >= 3): C
// innermost, then the spatial dims, then N (contiguous strides below rank
// 3).
std::vector<IndexExpr> ChannelsLastStrideExprs(
    const std::vector<IndexExpr>& sizes);

// `e` with each loop variable in `vars` replaced by its expression (others
// kept), simplified as it is rebuilt.
IndexExpr SubstituteVars(const IndexExpr& e,
                         const absl::flat_hash_map<int, IndexExpr>& vars);

// `exprs` with size parameter i = sizes[i].
Shape EvaluateShape(const std::vector<IndexExpr>& exprs,
                    absl::Span<const int64_t> sizes);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_INDEX_EXPR_H_
