#ifndef GUARDJIT_CORE_SYM_INT_H_
#define GUARDJIT_CORE_SYM_INT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/shape_env.h"
#include "core/sym_expr.h"

namespace guardjit {

// A size as shape propagation sees it (c10::SymInt): a concrete integer, or a
// symbolic expression with the value it had when the entry was specialized
// (its hint). Arithmetic stays symbolic. Comparisons answer for the hint and
// record a guard in the thread's current ShapeEnv unless its ranges prove the
// answer. Converting a symbolic SymInt to int64_t specializes it: the value
// is the hint and the guard `expr == hint` is recorded, so code that is not
// symbolic-aware stays correct, only less general.
class SymInt {
 public:
  SymInt() = default;
  SymInt(int64_t value) : hint_(value) {}  // NOLINT: implicit like int64_t
  SymInt(const SymExpr& expr, int64_t hint) : hint_(hint) {
    if (!expr.is_constant()) expr_ = expr;
  }

  bool is_symbolic() const { return expr_.has_value(); }
  int64_t hint() const { return hint_; }
  SymExpr expr() const { return expr_ ? *expr_ : SymExpr(hint_); }
  // The value, guarding it if symbolic.
  int64_t Specialize() const { return expr_ ? SpecializeSymbolic() : hint_; }
  operator int64_t() const { return Specialize(); }  // NOLINT: see above

  std::string ToString() const {
    return expr_ ? expr_->ToString() : std::to_string(hint_);
  }

 private:
  int64_t SpecializeSymbolic() const;

  int64_t hint_ = 0;
  std::optional<SymExpr> expr_;
};

namespace sym_internal {
template <typename T>
using EnableInt = std::enable_if_t<std::is_integral_v<T>, int>;
// Concrete operands take the inline path; symbolic ones build expressions
// and consult the ShapeEnv out of line.
SymInt SymbolicAdd(const SymInt& a, const SymInt& b);
SymInt SymbolicSub(const SymInt& a, const SymInt& b);
SymInt SymbolicMul(const SymInt& a, const SymInt& b);
bool SymbolicCompare(SymRel rel, const SymInt& a, const SymInt& b);
inline bool Concrete(const SymInt& a, const SymInt& b) {
  return !a.is_symbolic() && !b.is_symbolic();
}
inline SymInt Add(const SymInt& a, const SymInt& b) {
  return Concrete(a, b) ? SymInt(WrapAdd(a.hint(), b.hint()))
                        : SymbolicAdd(a, b);
}
inline SymInt Sub(const SymInt& a, const SymInt& b) {
  return Concrete(a, b) ? SymInt(WrapAdd(a.hint(), WrapMul(b.hint(), -1)))
                        : SymbolicSub(a, b);
}
inline SymInt Mul(const SymInt& a, const SymInt& b) {
  return Concrete(a, b) ? SymInt(WrapMul(a.hint(), b.hint()))
                        : SymbolicMul(a, b);
}
inline bool Compare(SymRel rel, const SymInt& a, const SymInt& b) {
  return Concrete(a, b) ? EvalRel(rel, a.hint(), b.hint())
                        : SymbolicCompare(rel, a, b);
}
}  // namespace sym_internal

// Arithmetic and comparisons for every mix of SymInt and built-in integers
// (templates, so `s == 1` is not ambiguous with the built-in operators).
#define GJ_SYMINT_BINARY(OP, RET, BODY)                              \
  inline RET operator OP(const SymInt& a, const SymInt& b) { BODY; } \
  template <typename T, sym_internal::EnableInt<T> = 0>              \
  RET operator OP(const SymInt& a, T bv) {                           \
    const SymInt b(static_cast<int64_t>(bv));                        \
    BODY;                                                            \
  }                                                                  \
  template <typename T, sym_internal::EnableInt<T> = 0>              \
  RET operator OP(T av, const SymInt& b) {                           \
    const SymInt a(static_cast<int64_t>(av));                        \
    BODY;                                                            \
  }
GJ_SYMINT_BINARY(+, SymInt, return sym_internal::Add(a, b))
GJ_SYMINT_BINARY(-, SymInt, return sym_internal::Sub(a, b))
GJ_SYMINT_BINARY(*, SymInt, return sym_internal::Mul(a, b))
GJ_SYMINT_BINARY(==, bool, return sym_internal::Compare(SymRel::kEq, a, b))
GJ_SYMINT_BINARY(!=, bool, return sym_internal::Compare(SymRel::kNe, a, b))
GJ_SYMINT_BINARY(<, bool, return sym_internal::Compare(SymRel::kLt, a, b))
GJ_SYMINT_BINARY(<=, bool, return sym_internal::Compare(SymRel::kLe, a, b))
GJ_SYMINT_BINARY(>, bool, return sym_internal::Compare(SymRel::kLt, b, a))
GJ_SYMINT_BINARY(>=, bool, return sym_internal::Compare(SymRel::kLe, b, a))
#undef GJ_SYMINT_BINARY

inline SymInt operator-(const SymInt& a) { return sym_internal::Sub(0, a); }
inline SymInt& operator+=(SymInt& a, const SymInt& b) { return a = a + b; }
inline SymInt& operator*=(SymInt& a, const SymInt& b) { return a = a * b; }

// Python's // and %, and max/min, kept symbolic.
SymInt SymFloorDiv(const SymInt& a, const SymInt& b);
SymInt SymMod(const SymInt& a, const SymInt& b);
SymInt SymMax(const SymInt& a, const SymInt& b);
SymInt SymMin(const SymInt& a, const SymInt& b);

using SymShape = absl::InlinedVector<SymInt, 6>;

SymShape ToSymShape(absl::Span<const int64_t> sizes);
// Hints, without guards (what an example input had).
absl::InlinedVector<int64_t, 6> HintShape(absl::Span<const SymInt> sizes);
// Values, specializing symbolic ones.
absl::InlinedVector<int64_t, 6> ConcreteShape(absl::Span<const SymInt> sizes);
bool IsSymbolic(absl::Span<const SymInt> sizes);
SymInt Product(absl::Span<const SymInt> sizes);
// "[s0, 3]".
std::string SymShapeToString(absl::Span<const SymInt> sizes);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SYM_INT_H_
