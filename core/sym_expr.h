#ifndef GUARDJIT_CORE_SYM_EXPR_H_
#define GUARDJIT_CORE_SYM_EXPR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace guardjit {

// int64 arithmetic that wraps on overflow instead of being undefined.
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

// A symbolic integer expression over size symbols s0, s1, ..., kept in a
// canonical form: an integer polynomial whose "atoms" are symbols and the
// non-polynomial terms FloorDiv, Mod, Max and Min. Equal expressions have
// equal canonical forms as far as that algebra goes (s0*2 + s0 == 3*s0,
// FloorDiv(6*s0, 3) == 2*s0), which is what shape propagation needs to prove
// most size equalities without guards. Immutable; copies share the
// representation. Arithmetic wraps on int64 overflow (no UB); callers bound
// sizes first.
class SymExpr {
 public:
  SymExpr() : SymExpr(int64_t{0}) {}
  SymExpr(int64_t constant);  // NOLINT: implicit, like an integer literal
  static SymExpr Symbol(int id);
  // Python semantics: floor division and a modulus with the divisor's sign.
  static SymExpr FloorDiv(const SymExpr& a, const SymExpr& b);
  static SymExpr Mod(const SymExpr& a, const SymExpr& b);
  static SymExpr Max(const SymExpr& a, const SymExpr& b);
  static SymExpr Min(const SymExpr& a, const SymExpr& b);

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a);

  bool is_constant() const;
  // The value when is_constant().
  int64_t constant() const;
  // The symbol id when the expression is exactly one symbol.
  std::optional<int> as_symbol() const;
  // Every symbol the expression mentions, ascending, without repeats.
  std::vector<int> Symbols() const;
  bool Mentions(int symbol) const;
  // c of the term c*symbol (0 if there is none).
  int64_t LinearCoefficient(int symbol) const;

  // Value with symbol i = values[i]. Division by zero yields 0 (callers
  // guard divisors); values must cover every symbol.
  int64_t Evaluate(absl::Span<const int64_t> values) const;
  // Interval [lo, hi] containing every value of the expression when symbol
  // i ranges over range(i); INT64_MIN / INT64_MAX stand for unbounded.
  std::pair<int64_t, int64_t> Bounds(
      const std::function<std::pair<int64_t, int64_t>(int)>& range) const;
  // (m, q) with *this == m * q, m the largest monomial (product of atoms)
  // dividing every term; m is 1 when there is none.
  std::pair<SymExpr, SymExpr> FactorCommonMonomial() const;
  // The expression with every symbol replaced by f(id).
  SymExpr Substitute(const std::function<SymExpr(int)>& f) const;

  // The canonical form, for translating an expression into another IR (the
  // JIT's index expressions): the sum of coefficient * product of factors,
  // a factor repeated for each power.
  struct Factor;
  struct Monomial;
  std::vector<Monomial> Terms() const;

  // sympy-like text: "2*s0 + s1 - 1", "FloorDiv(s0, 2)", "Max(s0, s1)".
  // `name` spells symbol ids (default "s<id>").
  std::string ToString(
      const std::function<std::string(int)>& name = nullptr) const;

  friend bool operator==(const SymExpr& a, const SymExpr& b);
  friend bool operator!=(const SymExpr& a, const SymExpr& b) {
    return !(a == b);
  }
  // Total order on canonical forms (for sorting and map keys).
  friend bool operator<(const SymExpr& a, const SymExpr& b);

  struct Atom;
  struct Term;
  struct Rep;
  enum class AtomKind { kSymbol, kFloorDiv, kMod, kMax, kMin };

 private:
  static SymExpr MakeAtom(AtomKind kind, const SymExpr& a, const SymExpr& b);
  explicit SymExpr(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}
  static SymExpr FromTerms(std::vector<Term> terms);
  static SymExpr FromAtom(std::shared_ptr<const Atom> atom);

  std::shared_ptr<const Rep> rep_;
};

// An atom of SymExpr::Terms(): a symbol, or kind(a, b).
struct SymExpr::Factor {
  AtomKind kind = AtomKind::kSymbol;
  int symbol = -1;  // kSymbol
  SymExpr a, b;     // the others
};

struct SymExpr::Monomial {
  int64_t coefficient = 0;
  std::vector<Factor> factors;  // empty: the constant term
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SYM_EXPR_H_
