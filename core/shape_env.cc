#include "core/shape_env.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

thread_local ShapeEnv* current_env = nullptr;

SymRel Negate(SymRel rel, SymExpr& lhs, SymExpr& rhs) {
  switch (rel) {
    case SymRel::kEq:
      return SymRel::kNe;
    case SymRel::kNe:
      return SymRel::kEq;
    case SymRel::kLt:  // !(a < b) == (b <= a)
      std::swap(lhs, rhs);
      return SymRel::kLe;
    case SymRel::kLe:  // !(a <= b) == (b < a)
      std::swap(lhs, rhs);
      return SymRel::kLt;
  }
  return rel;
}

}  // namespace

const char* SymRelName(SymRel rel) {
  switch (rel) {
    case SymRel::kEq:
      return "==";
    case SymRel::kNe:
      return "!=";
    case SymRel::kLt:
      return "<";
    case SymRel::kLe:
      return "<=";
  }
  return "?";
}

ShapeEnv::Scope::Scope(ShapeEnv* env) : previous_(current_env) {
  current_env = env;
}
ShapeEnv::Scope::~Scope() { current_env = previous_; }
ShapeEnv* ShapeEnv::Current() { return current_env; }

int ShapeEnv::NewSymbol(int64_t hint, std::string source, int input, int dim,
                        int64_t min, int64_t max) {
  SymbolInfo info;
  info.input = input;
  info.dim = dim;
  info.source = std::move(source);
  info.hint = hint;
  info.min = min;
  info.max = max;
  symbols_.push_back(std::move(info));
  hints_.push_back(hint);
  ranges_.push_back({min, max});
  return static_cast<int>(symbols_.size()) - 1;
}

SymExpr ShapeEnv::Simplify(const SymExpr& e) const {
  if (replacements_.empty() || e.is_constant()) return e;
  return e.Substitute([&](int s) {
    auto it = replacements_.find(s);
    return it == replacements_.end() ? SymExpr::Symbol(s) : it->second;
  });
}

int64_t ShapeEnv::Hint(const SymExpr& e) const { return e.Evaluate(hints_); }

std::optional<bool> ShapeEnv::StaticallyKnown(SymRel rel, const SymExpr& lhs,
                                              const SymExpr& rhs) const {
  const SymExpr diff = Simplify(lhs - rhs);
  auto range = [&](int s) { return ranges_[s]; };
  auto [lo, hi] = diff.Bounds(range);
  if (lo < 0 && hi > 0) {
    // diff = m * q with a positive monomial m has q's sign:
    // s0*s1 - s0 = s0 * (s1 - 1).
    const auto [m, q] = diff.FactorCommonMonomial();
    if (m.Bounds(range).first >= 1) std::tie(lo, hi) = q.Bounds(range);
  }
  switch (rel) {
    case SymRel::kEq:
    case SymRel::kNe: {
      std::optional<bool> eq;
      if (lo == 0 && hi == 0) eq = true;
      if (lo > 0 || hi < 0) eq = false;
      if (!eq) return std::nullopt;
      return rel == SymRel::kEq ? *eq : !*eq;
    }
    case SymRel::kLt:
      if (hi < 0) return true;
      if (lo >= 0) return false;
      return std::nullopt;
    case SymRel::kLe:
      if (hi <= 0) return true;
      if (lo > 0) return false;
      return std::nullopt;
  }
  return std::nullopt;
}

bool ShapeEnv::Guard(SymRel rel, const SymExpr& lhs, const SymExpr& rhs) {
  if (auto known = StaticallyKnown(rel, lhs, rhs)) return *known;
  SymExpr a = Simplify(lhs), b = Simplify(rhs);
  const bool result = EvalRel(rel, Hint(a), Hint(b));
  if (!result) rel = Negate(rel, a, b);
  AddGuard(rel, a, b);
  return result;
}

void ShapeEnv::GuardNoWrap(const SymExpr& e) {
  const SymExpr s = Simplify(e);
  if (!s.is_constant()) AddGuard(SymRel::kLe, SymExpr(0), s);
}

int64_t ShapeEnv::Specialize(const SymExpr& e) {
  const SymExpr s = Simplify(e);
  const int64_t value = Hint(s);
  if (!s.is_constant()) AddGuard(SymRel::kEq, s, SymExpr(value));
  return value;
}

bool ShapeEnv::IsPinned(int s) const {
  auto it = replacements_.find(s);
  return it != replacements_.end() && it->second.is_constant();
}

std::pair<int64_t, int64_t> ShapeEnv::ImpliedRange(int s) const {
  return Simplify(SymExpr::Symbol(s)).Bounds([&](int t) { return ranges_[t]; });
}

void ShapeEnv::RefineRange(SymRel rel, const SymExpr& lhs, const SymExpr& rhs) {
  if (rel != SymRel::kLe && rel != SymRel::kLt) return;
  // rel is diff <= 0 or diff < 0, i.e. c*s + k <= 0 with k integral.
  const SymExpr diff = lhs - rhs;
  const std::vector<int> symbols = diff.Symbols();
  if (symbols.size() != 1) return;
  const int s = symbols[0];
  const int64_t c = diff.LinearCoefficient(s);
  if (c == 0) return;
  const SymExpr rest = diff - SymExpr(c) * SymExpr::Symbol(s);
  if (!rest.is_constant()) return;  // s*s, s//2, ...
  const int64_t k = rest.constant() + (rel == SymRel::kLt ? 1 : 0);
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  auto& [lo, hi] = ranges_[s];
  if (c > 0) {
    hi = std::min(hi, floor_div(-k, c));  // s <= floor(-k / c)
  } else {
    lo = std::max(lo, -floor_div(-k, -c));  // s >= ceil(k / -c)
  }
  if (lo == hi && !replacements_.contains(s)) {
    AddGuard(SymRel::kEq, SymExpr::Symbol(s), SymExpr(lo));
  }
}

void ShapeEnv::AddGuard(SymRel rel, const SymExpr& lhs, const SymExpr& rhs) {
  for (const ShapeGuard& g : guards_) {
    if (g.rel == rel && g.lhs == lhs && g.rhs == rhs) return;
  }
  guards_.push_back({rel, lhs, rhs});
  RefineRange(rel, lhs, rhs);
  if (rel != SymRel::kEq) return;
  // A symbol equal to an expression without it is replaced from now on; the
  // later symbol gives way to the earlier one (s1 -> s0), as torch does.
  const SymExpr diff = lhs - rhs;
  for (int s : diff.Symbols()) {
    if (replacements_.contains(s)) continue;
    // diff == c*s + rest with rest free of s and divisible by c.
    const int64_t c = diff.LinearCoefficient(s);
    if (c == 0) continue;
    const SymExpr rest = diff - SymExpr(c) * SymExpr::Symbol(s);
    if (rest.Mentions(s)) continue;
    const SymExpr value = -SymExpr::FloorDiv(rest, c);
    if (value * c != -rest) continue;
    // The highest symbol gives way (s1 -> s0).
    const std::vector<int> others = value.Symbols();
    if (!others.empty() && others.back() > s) continue;
    replacements_[s] = value;
    for (auto& [sym, expr] : replacements_) {
      if (sym != s) expr = Simplify(expr);
    }
    return;
  }
}

std::vector<ShapeGuard> ShapeEnv::AllGuards() const {
  std::vector<ShapeGuard> out;
  for (size_t s = 0; s < symbols_.size(); ++s) {
    const SymbolInfo& info = symbols_[s];
    const SymExpr sym = Simplify(SymExpr::Symbol(static_cast<int>(s)));
    // A replaced symbol is checked through what replaced it.
    if (!sym.as_symbol() || *sym.as_symbol() != static_cast<int>(s)) continue;
    out.push_back({SymRel::kLe, SymExpr(info.min), sym});
    if (info.max != kSymMax)
      out.push_back({SymRel::kLe, sym, SymExpr(info.max)});
  }
  for (const ShapeGuard& g : guards_) {
    ShapeGuard s{g.rel, Simplify(g.lhs), Simplify(g.rhs)};
    // A guard the replacements made trivial is kept in its original form:
    // it is what binds the replaced symbol (s1 == s0).
    if ((s.lhs - s.rhs).is_constant()) s = g;
    bool duplicate = false;
    for (const ShapeGuard& o : out) {
      duplicate |= o.rel == s.rel && o.lhs == s.lhs && o.rhs == s.rhs;
    }
    if (!duplicate) out.push_back(s);
  }
  return out;
}

std::string ShapeEnv::ToString(const SymExpr& e) const {
  return e.ToString([&](int s) { return symbols_[s].source; });
}

std::string ShapeEnv::ToString(const ShapeGuard& g) const {
  return absl::StrCat(ToString(g.lhs), " ", SymRelName(g.rel), " ",
                      ToString(g.rhs));
}

}  // namespace guardjit
