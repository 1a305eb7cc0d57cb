#include "core/sym_expr.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace guardjit {

using AtomKind = SymExpr::AtomKind;

struct SymExpr::Atom {
  AtomKind kind;
  int symbol = -1;  // kSymbol
  SymExpr a, b;     // the others
  std::string key;  // canonical spelling, orders atoms
};

struct SymExpr::Term {
  int64_t coef = 0;
  std::vector<std::shared_ptr<const Atom>> factors;  // sorted by key
  std::string key;                                   // "" for the constant
};

struct SymExpr::Rep {
  std::vector<Term> terms;  // sorted by key, no zero coefficients
  std::string key;
};

namespace {

using AtomPtr = std::shared_ptr<const SymExpr::Atom>;

int64_t PyFloorDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t PyMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::string MonomialKey(const std::vector<AtomPtr>& factors) {
  std::string key;
  for (const AtomPtr& f : factors) {
    if (!key.empty()) key += '*';
    key += f->key;
  }
  return key;
}

}  // namespace

SymExpr::SymExpr(int64_t constant) {
  auto rep = std::make_shared<Rep>();
  if (constant != 0) rep->terms.push_back(Term{constant, {}, ""});
  rep->key = absl::StrCat(constant);
  rep_ = std::move(rep);
}

SymExpr SymExpr::FromTerms(std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return a.key < b.key; });
  auto rep = std::make_shared<Rep>();
  for (Term& t : terms) {
    if (!rep->terms.empty() && rep->terms.back().key == t.key) {
      rep->terms.back().coef = WrapAdd(rep->terms.back().coef, t.coef);
    } else {
      rep->terms.push_back(std::move(t));
    }
  }
  rep->terms.erase(std::remove_if(rep->terms.begin(), rep->terms.end(),
                                  [](const Term& t) { return t.coef == 0; }),
                   rep->terms.end());
  if (rep->terms.empty()) return SymExpr(int64_t{0});
  if (rep->terms.size() == 1 && rep->terms[0].factors.empty()) {
    return SymExpr(rep->terms[0].coef);
  }
  for (const Term& t : rep->terms) {
    absl::StrAppend(&rep->key, "+", t.coef, "*", t.key);
  }
  return SymExpr(std::shared_ptr<const Rep>(std::move(rep)));
}

SymExpr SymExpr::FromAtom(std::shared_ptr<const Atom> atom) {
  Term t;
  t.coef = 1;
  t.key = atom->key;
  t.factors.push_back(std::move(atom));
  std::vector<Term> terms;
  terms.push_back(std::move(t));
  return FromTerms(std::move(terms));
}

SymExpr SymExpr::MakeAtom(AtomKind kind, const SymExpr& a, const SymExpr& b) {
  static constexpr const char* kTags[] = {"a", "bD", "bM", "bX", "bN"};
  auto atom = std::make_shared<Atom>();
  atom->kind = kind;
  atom->a = a;
  atom->b = b;
  atom->key = absl::StrCat(kTags[static_cast<int>(kind)], "(", a.rep_->key, ",",
                           b.rep_->key, ")");
  return FromAtom(std::move(atom));
}

SymExpr SymExpr::Symbol(int id) {
  auto atom = std::make_shared<Atom>();
  atom->kind = AtomKind::kSymbol;
  atom->symbol = id;
  atom->key = absl::StrFormat("a%08d", id);
  return FromAtom(std::move(atom));
}

namespace {

// q with a == q * b exactly as polynomials, when b is one term whose
// coefficient and factors divide every term of a.
std::optional<std::vector<SymExpr::Term>> ExactQuotient(
    const std::vector<SymExpr::Term>& a, const std::vector<SymExpr::Term>& b) {
  if (b.size() != 1 || b[0].coef == 0) return std::nullopt;
  const SymExpr::Term& d = b[0];
  std::vector<SymExpr::Term> out;
  for (const SymExpr::Term& t : a) {
    if (t.coef % d.coef != 0) return std::nullopt;
    std::vector<AtomPtr> rest = t.factors;
    for (const AtomPtr& f : d.factors) {
      auto it = std::find_if(rest.begin(), rest.end(), [&](const AtomPtr& r) {
        return r->key == f->key;
      });
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    SymExpr::Term q;
    q.coef = t.coef / d.coef;
    q.key = MonomialKey(rest);
    q.factors = std::move(rest);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace

SymExpr SymExpr::FloorDiv(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(PyFloorDiv(a.constant(), b.constant()));
  }
  if (b.is_constant() && b.constant() == 1) return a;
  if (!b.is_constant() || b.constant() != 0) {
    if (auto q = ExactQuotient(a.rep_->terms, b.rep_->terms)) {
      return FromTerms(*std::move(q));
    }
  }
  return MakeAtom(AtomKind::kFloorDiv, a, b);
}

SymExpr SymExpr::Mod(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(PyMod(a.constant(), b.constant()));
  }
  if (b.is_constant() && (b.constant() == 1 || b.constant() == -1)) {
    return SymExpr(int64_t{0});
  }
  if (!b.is_constant() || b.constant() != 0) {
    if (ExactQuotient(a.rep_->terms, b.rep_->terms)) return SymExpr(int64_t{0});
  }
  SymExpr rest = a;
  if (b.is_constant() && b.constant() > 0) {
    // (c*k*X + r) mod c == r mod c for integer X.
    std::vector<Term> kept;
    for (const Term& t : a.rep_->terms) {
      if (t.coef % b.constant() != 0) kept.push_back(t);
    }
    rest = FromTerms(std::move(kept));
    if (rest.is_constant())
      return SymExpr(PyMod(rest.constant(), b.constant()));
  }
  return MakeAtom(AtomKind::kMod, rest, b);
}

SymExpr SymExpr::Max(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(std::max(a.constant(), b.constant()));
  }
  if (a == b) return a;
  // Commutative: operands in canonical order.
  return a < b ? MakeAtom(AtomKind::kMax, a, b)
               : MakeAtom(AtomKind::kMax, b, a);
}

SymExpr SymExpr::Min(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(std::min(a.constant(), b.constant()));
  }
  if (a == b) return a;
  // Commutative: operands in canonical order.
  return a < b ? MakeAtom(AtomKind::kMin, a, b)
               : MakeAtom(AtomKind::kMin, b, a);
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(WrapAdd(a.constant(), b.constant()));
  }
  std::vector<SymExpr::Term> terms = a.rep_->terms;
  terms.insert(terms.end(), b.rep_->terms.begin(), b.rep_->terms.end());
  return SymExpr::FromTerms(std::move(terms));
}

SymExpr operator-(const SymExpr& a) {
  std::vector<SymExpr::Term> terms = a.rep_->terms;
  for (SymExpr::Term& t : terms) t.coef = WrapMul(t.coef, -1);
  return SymExpr::FromTerms(std::move(terms));
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) { return a + (-b); }

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr(WrapMul(a.constant(), b.constant()));
  }
  std::vector<SymExpr::Term> terms;
  for (const SymExpr::Term& x : a.rep_->terms) {
    for (const SymExpr::Term& y : b.rep_->terms) {
      SymExpr::Term t;
      t.coef = WrapMul(x.coef, y.coef);
      t.factors = x.factors;
      t.factors.insert(t.factors.end(), y.factors.begin(), y.factors.end());
      std::sort(
          t.factors.begin(), t.factors.end(),
          [](const AtomPtr& p, const AtomPtr& q) { return p->key < q->key; });
      t.key = MonomialKey(t.factors);
      terms.push_back(std::move(t));
    }
  }
  return SymExpr::FromTerms(std::move(terms));
}

bool SymExpr::is_constant() const {
  return rep_->terms.empty() ||
         (rep_->terms.size() == 1 && rep_->terms[0].factors.empty());
}

int64_t SymExpr::constant() const {
  return rep_->terms.empty() ? 0 : rep_->terms[0].coef;
}

std::optional<int> SymExpr::as_symbol() const {
  if (rep_->terms.size() == 1 && rep_->terms[0].coef == 1 &&
      rep_->terms[0].factors.size() == 1 &&
      rep_->terms[0].factors[0]->kind == AtomKind::kSymbol) {
    return rep_->terms[0].factors[0]->symbol;
  }
  return std::nullopt;
}

namespace {

void CollectSymbols(const SymExpr::Rep& rep, std::vector<int>& out);

void CollectAtom(const SymExpr::Atom& atom, std::vector<int>& out) {
  if (atom.kind == AtomKind::kSymbol) {
    out.push_back(atom.symbol);
    return;
  }
  for (int s : atom.a.Symbols()) out.push_back(s);
  for (int s : atom.b.Symbols()) out.push_back(s);
}

void CollectSymbols(const SymExpr::Rep& rep, std::vector<int>& out) {
  for (const SymExpr::Term& t : rep.terms) {
    for (const AtomPtr& f : t.factors) CollectAtom(*f, out);
  }
}

}  // namespace

std::vector<int> SymExpr::Symbols() const {
  std::vector<int> out;
  CollectSymbols(*rep_, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool SymExpr::Mentions(int symbol) const {
  const std::vector<int> s = Symbols();
  return std::binary_search(s.begin(), s.end(), symbol);
}

int64_t SymExpr::LinearCoefficient(int symbol) const {
  for (const Term& t : rep_->terms) {
    if (t.factors.size() == 1 && t.factors[0]->kind == AtomKind::kSymbol &&
        t.factors[0]->symbol == symbol) {
      return t.coef;
    }
  }
  return 0;
}

int64_t SymExpr::Evaluate(absl::Span<const int64_t> values) const {
  int64_t sum = 0;
  for (const Term& t : rep_->terms) {
    int64_t p = t.coef;
    for (const AtomPtr& f : t.factors) {
      int64_t v = 0;
      switch (f->kind) {
        case AtomKind::kSymbol:
          v = values[f->symbol];
          break;
        case AtomKind::kFloorDiv:
          v = PyFloorDiv(f->a.Evaluate(values), f->b.Evaluate(values));
          break;
        case AtomKind::kMod:
          v = PyMod(f->a.Evaluate(values), f->b.Evaluate(values));
          break;
        case AtomKind::kMax:
          v = std::max(f->a.Evaluate(values), f->b.Evaluate(values));
          break;
        case AtomKind::kMin:
          v = std::min(f->a.Evaluate(values), f->b.Evaluate(values));
          break;
      }
      p = WrapMul(p, v);
    }
    sum = WrapAdd(sum, p);
  }
  return sum;
}

namespace {

using Interval = std::pair<int64_t, int64_t>;
constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
const Interval kUnbounded{kNegInf, kPosInf};

// Endpoints beyond +-2^62 are treated as infinite: a lower bound rounds
// down to 2^62 (still a bound), an upper bound becomes +inf (and mirrored),
// so products of two endpoints stay far inside __int128.
constexpr __int128 kBig = static_cast<__int128>(1) << 62;

__int128 Wide(int64_t v) {
  if (v <= -kBig) return -kBig;
  if (v >= kBig) return kBig;
  return v;
}

int64_t Lower(__int128 v) {
  if (v <= -kBig) return kNegInf;
  if (v >= kBig) return static_cast<int64_t>(kBig);
  return static_cast<int64_t>(v);
}

int64_t Upper(__int128 v) {
  if (v >= kBig) return kPosInf;
  if (v <= -kBig) return static_cast<int64_t>(-kBig);
  return static_cast<int64_t>(v);
}

Interval MulInterval(Interval a, Interval b) {
  const __int128 p[4] = {
      Wide(a.first) * Wide(b.first), Wide(a.first) * Wide(b.second),
      Wide(a.second) * Wide(b.first), Wide(a.second) * Wide(b.second)};
  return {Lower(*std::min_element(p, p + 4)),
          Upper(*std::max_element(p, p + 4))};
}

Interval AddInterval(Interval a, Interval b) {
  const bool lo_inf = a.first == kNegInf || b.first == kNegInf;
  const bool hi_inf = a.second == kPosInf || b.second == kPosInf;
  return {lo_inf ? kNegInf : Lower(Wide(a.first) + Wide(b.first)),
          hi_inf ? kPosInf : Upper(Wide(a.second) + Wide(b.second))};
}

}  // namespace

std::pair<int64_t, int64_t> SymExpr::Bounds(
    const std::function<std::pair<int64_t, int64_t>(int)>& range) const {
  Interval sum{0, 0};
  for (const Term& t : rep_->terms) {
    Interval p{t.coef, t.coef};
    for (const AtomPtr& f : t.factors) {
      Interval v = kUnbounded;
      switch (f->kind) {
        case AtomKind::kSymbol:
          v = range(f->symbol);
          break;
        case AtomKind::kFloorDiv:
          if (f->b.is_constant() && f->b.constant() > 0) {
            const Interval a = f->a.Bounds(range);
            const int64_t c = f->b.constant();
            v = {a.first == kNegInf ? kNegInf : PyFloorDiv(a.first, c),
                 a.second == kPosInf ? kPosInf : PyFloorDiv(a.second, c)};
          }
          break;
        case AtomKind::kMod:
          if (f->b.is_constant() && f->b.constant() > 0) {
            v = {0, f->b.constant() - 1};
          }
          break;
        case AtomKind::kMax: {
          const Interval a = f->a.Bounds(range), b = f->b.Bounds(range);
          v = {std::max(a.first, b.first), std::max(a.second, b.second)};
          break;
        }
        case AtomKind::kMin: {
          const Interval a = f->a.Bounds(range), b = f->b.Bounds(range);
          v = {std::min(a.first, b.first), std::min(a.second, b.second)};
          break;
        }
      }
      p = MulInterval(p, v);
    }
    sum = AddInterval(sum, p);
  }
  return sum;
}

std::pair<SymExpr, SymExpr> SymExpr::FactorCommonMonomial() const {
  if (rep_->terms.empty()) return {SymExpr(int64_t{1}), *this};
  std::vector<AtomPtr> common = rep_->terms[0].factors;
  for (size_t i = 1; i < rep_->terms.size() && !common.empty(); ++i) {
    std::vector<AtomPtr> rest = rep_->terms[i].factors;
    std::vector<AtomPtr> kept;
    for (const AtomPtr& c : common) {
      auto it = std::find_if(rest.begin(), rest.end(), [&](const AtomPtr& r) {
        return r->key == c->key;
      });
      if (it != rest.end()) {
        kept.push_back(c);
        rest.erase(it);
      }
    }
    common = std::move(kept);
  }
  if (common.empty()) return {SymExpr(int64_t{1}), *this};
  Term m;
  m.coef = 1;
  m.key = MonomialKey(common);
  m.factors = std::move(common);
  std::vector<Term> divisor = {m};
  return {FromTerms(divisor), FromTerms(*ExactQuotient(rep_->terms, divisor))};
}

SymExpr SymExpr::Substitute(const std::function<SymExpr(int)>& f) const {
  SymExpr sum(int64_t{0});
  for (const Term& t : rep_->terms) {
    SymExpr p(t.coef);
    for (const AtomPtr& a : t.factors) {
      switch (a->kind) {
        case AtomKind::kSymbol:
          p = p * f(a->symbol);
          break;
        case AtomKind::kFloorDiv:
          p = p * FloorDiv(a->a.Substitute(f), a->b.Substitute(f));
          break;
        case AtomKind::kMod:
          p = p * Mod(a->a.Substitute(f), a->b.Substitute(f));
          break;
        case AtomKind::kMax:
          p = p * Max(a->a.Substitute(f), a->b.Substitute(f));
          break;
        case AtomKind::kMin:
          p = p * Min(a->a.Substitute(f), a->b.Substitute(f));
          break;
      }
    }
    sum = sum + p;
  }
  return sum;
}

std::vector<SymExpr::Monomial> SymExpr::Terms() const {
  std::vector<Monomial> out;
  for (const Term& t : rep_->terms) {
    Monomial m;
    m.coefficient = t.coef;
    for (const AtomPtr& a : t.factors) {
      m.factors.push_back(Factor{a->kind, a->symbol, a->a, a->b});
    }
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

bool IsAtomic(const SymExpr& e) {
  return e.is_constant() ? e.constant() >= 0 : e.as_symbol().has_value();
}

std::string Paren(const SymExpr& e,
                  const std::function<std::string(int)>& name) {
  std::string s = e.ToString(name);
  return IsAtomic(e) ? s : absl::StrCat("(", s, ")");
}

std::string AtomString(const SymExpr::Atom& a,
                       const std::function<std::string(int)>& name) {
  switch (a.kind) {
    case AtomKind::kSymbol:
      return name ? name(a.symbol) : absl::StrCat("s", a.symbol);
    case AtomKind::kFloorDiv:
      return absl::StrCat("(", Paren(a.a, name), "//", Paren(a.b, name), ")");
    case AtomKind::kMod:
      return absl::StrCat("(", Paren(a.a, name), " % ", Paren(a.b, name), ")");
    case AtomKind::kMax:
      return absl::StrCat("max(", a.a.ToString(name), ", ", a.b.ToString(name),
                          ")");
    case AtomKind::kMin:
      return absl::StrCat("min(", a.a.ToString(name), ", ", a.b.ToString(name),
                          ")");
  }
  return "?";
}

}  // namespace

std::string SymExpr::ToString(
    const std::function<std::string(int)>& name) const {
  if (is_constant()) return absl::StrCat(constant());
  std::string out;
  int64_t constant_term = 0;
  for (const Term& t : rep_->terms) {
    if (t.factors.empty()) {
      constant_term = t.coef;
      continue;
    }
    std::string mono;
    for (const AtomPtr& f : t.factors) {
      if (!mono.empty()) mono += '*';
      mono += AtomString(*f, name);
    }
    const int64_t mag = t.coef < 0 ? -t.coef : t.coef;
    const std::string body = mag == 1 ? mono : absl::StrCat(mag, "*", mono);
    if (out.empty()) {
      out = t.coef < 0 ? absl::StrCat("-", body) : body;
    } else {
      absl::StrAppend(&out, t.coef < 0 ? " - " : " + ", body);
    }
  }
  if (constant_term > 0) absl::StrAppend(&out, " + ", constant_term);
  if (constant_term < 0) absl::StrAppend(&out, " - ", -constant_term);
  return out;
}

bool operator==(const SymExpr& a, const SymExpr& b) {
  return a.rep_ == b.rep_ || a.rep_->key == b.rep_->key;
}

bool operator<(const SymExpr& a, const SymExpr& b) {
  return a.rep_->key < b.rep_->key;
}

}  // namespace guardjit
