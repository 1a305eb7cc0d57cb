#ifndef GUARDJIT_CORE_SHAPE_ENV_H_
#define GUARDJIT_CORE_SHAPE_ENV_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/sym_expr.h"

namespace guardjit {

// Relations of shape guards: lhs REL rhs (> and >= are written swapped).
enum class SymRel { kEq, kNe, kLt, kLe };

struct ShapeGuard {
  SymRel rel;
  SymExpr lhs, rhs;
};

constexpr int64_t kSymMax = std::numeric_limits<int64_t>::max();

// A size symbol: where a call supplies its value and what values it may take.
struct SymbolInfo {
  int input = -1;  // read from inputs[input].sizes[dim] on each call
  int dim = -1;
  std::string source;     // "x.size()[0]"
  int64_t hint = 0;       // the value seen when the entry was specialized
  int64_t min = 2;        // 0/1 specialization: symbols are >= 2 unless the
  int64_t max = kSymMax;  // user gave a range (mark_dynamic)
};

// The symbolic-shape state of one specialization (torch's ShapeEnv): symbols
// with their hints and ranges, and the guards that shape propagation and
// branch folding recorded. A decision about sizes (a == b, a < b, ...) that
// the ranges and the algebra cannot prove becomes a guard, evaluated on the
// hints; `a == b` between a symbol and another expression also becomes a
// replacement so later expressions simplify (s1 -> s0). Not thread-safe: one
// specialization runs on one thread (see Scope).
class ShapeEnv {
 public:
  int NewSymbol(int64_t hint, std::string source, int input, int dim,
                int64_t min = 2, int64_t max = kSymMax);
  const std::vector<SymbolInfo>& symbols() const { return symbols_; }
  int num_symbols() const { return static_cast<int>(symbols_.size()); }

  // `e` with replacements applied.
  SymExpr Simplify(const SymExpr& e) const;
  // Value of `e` at the hints.
  int64_t Hint(const SymExpr& e) const;
  // The relation's truth when the ranges prove it for every allowed value.
  std::optional<bool> StaticallyKnown(SymRel rel, const SymExpr& lhs,
                                      const SymExpr& rhs) const;
  // The relation at the hints; records a guard (the relation or its
  // negation) unless StaticallyKnown decides it.
  bool Guard(SymRel rel, const SymExpr& lhs, const SymExpr& rhs);
  // Value of `e` at the hints, guarding `e == value` (specialization).
  int64_t Specialize(const SymExpr& e);
  // Guards `0 <= e` for a size an op computes from sizes (a running sum of
  // non-negative terms, each step guarded so), whatever StaticallyKnown would
  // say: a hit evaluates `e` in wrapping int64 arithmetic, where a sum past
  // 2^63 turns negative, so such a call fails the guard and misses into a
  // new trace, whose shape rule reports the overflow naming the node.
  // Nothing for a constant.
  void GuardNoWrap(const SymExpr& e);
  // Whether the guards pinned symbol `s` to a single value (it is replaced
  // by a constant).
  bool IsPinned(int s) const;

  // The values symbol `s` can take in a call that passes AllGuards(): its
  // declared range narrowed by the guards on it, or for a replaced symbol
  // the range of what replaced it (kSymMax: unbounded above).
  std::pair<int64_t, int64_t> ImpliedRange(int s) const;

  const std::vector<ShapeGuard>& guards() const { return guards_; }
  // Range guards of every symbol ("2 <= s0", "s0 <= 64"), then the recorded
  // guards, all simplified; what a cache entry checks.
  std::vector<ShapeGuard> AllGuards() const;

  // With sources: "2 <= x.size()[0]", "x.size()[0] == y.size()[1]".
  std::string ToString(const SymExpr& e) const;
  std::string ToString(const ShapeGuard& g) const;

  // Makes `env` the thread's current ShapeEnv (what SymInt comparisons
  // consult) for the scope's lifetime.
  class Scope {
   public:
    explicit Scope(ShapeEnv* env);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ShapeEnv* previous_;
  };
  static ShapeEnv* Current();

 private:
  void AddGuard(SymRel rel, const SymExpr& lhs, const SymExpr& rhs);
  // Narrows a symbol's range by a guard on it alone (`s0 <= 2` with s0 in
  // [2, inf) leaves [2, 2]); a range of one value replaces the symbol by it,
  // as torch does, so the entry specializes that size.
  void RefineRange(SymRel rel, const SymExpr& lhs, const SymExpr& rhs);

  std::vector<SymbolInfo> symbols_;
  std::vector<int64_t> hints_;
  // What the guards so far imply about each symbol (reasoning only: the
  // declared ranges in symbols_ are what AllGuards checks).
  std::vector<std::pair<int64_t, int64_t>> ranges_;
  std::vector<ShapeGuard> guards_;
  absl::flat_hash_map<int, SymExpr> replacements_;
};

// "==", "!=", "<", "<=".
const char* SymRelName(SymRel rel);
// Evaluates the relation on concrete values.
inline bool EvalRel(SymRel rel, int64_t lhs, int64_t rhs) {
  switch (rel) {
    case SymRel::kEq:
      return lhs == rhs;
    case SymRel::kNe:
      return lhs != rhs;
    case SymRel::kLt:
      return lhs < rhs;
    case SymRel::kLe:
      return lhs <= rhs;
  }
  return false;
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SHAPE_ENV_H_
