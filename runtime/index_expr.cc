#include "runtime/index_expr.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

// Python's floor division and modulo for b != 0.
int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

}  // namespace

IndexExpr IndexExpr::Const(int64_t value) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kConst;
  node->value = value;
  return IndexExpr(std::move(node));
}

IndexExpr IndexExpr::Var(int id) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kVar;
  node->value = id;
  return IndexExpr(std::move(node));
}

IndexExpr IndexExpr::Size(int id) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kSize;
  node->value = id;
  return IndexExpr(std::move(node));
}

IndexExpr IndexExpr::Make(Kind kind, const IndexExpr& a, const IndexExpr& b) {
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->lhs = std::make_unique<IndexExpr>(a);
  node->rhs = std::make_unique<IndexExpr>(b);
  return IndexExpr(std::move(node));
}

IndexExpr operator+(const IndexExpr& a, const IndexExpr& b) {
  using Kind = IndexExpr::Kind;
  if (a.is_const() && b.is_const())
    return IndexExpr::Const(WrapAdd(a.value(), b.value()));
  if (a.is_const(0)) return b;
  if (b.is_const(0)) return a;
  // Keep constants rightmost and folded: (x + c1) + c2 -> x + (c1 + c2).
  if (a.is_const()) return b + a;
  if (b.is_const() && a.kind() == Kind::kAdd && a.rhs().is_const()) {
    return a.lhs() + IndexExpr::Const(WrapAdd(a.rhs().value(), b.value()));
  }
  // (x + c) + y -> (x + y) + c, so constant offsets bubble to the top.
  if (a.kind() == Kind::kAdd && a.rhs().is_const()) {
    return (a.lhs() + b) + a.rhs();
  }
  return IndexExpr::Make(Kind::kAdd, a, b);
}

IndexExpr operator*(const IndexExpr& a, const IndexExpr& b) {
  using Kind = IndexExpr::Kind;
  if (a.is_const() && b.is_const())
    return IndexExpr::Const(WrapMul(a.value(), b.value()));
  if (a.is_const()) return b * a;
  if (b.is_const(0)) return IndexExpr::Const(0);
  if (b.is_const(1)) return a;
  if (b.is_const() && a.kind() == Kind::kMul && a.rhs().is_const()) {
    return a.lhs() * IndexExpr::Const(WrapMul(a.rhs().value(), b.value()));
  }
  return IndexExpr::Make(Kind::kMul, a, b);
}

IndexExpr IndexExpr::FloorDiv(const IndexExpr& a, const IndexExpr& b) {
  if (a.is_const() && b.is_const() && b.value() != 0) {
    return Const(FloorDivInt(a.value(), b.value()));
  }
  if (b.is_const(1)) return a;
  if (a.is_const(0)) return a;
  return Make(Kind::kFloorDiv, a, b);
}

IndexExpr IndexExpr::Mod(const IndexExpr& a, const IndexExpr& b) {
  if (a.is_const() && b.is_const() && b.value() != 0) {
    return Const(ModInt(a.value(), b.value()));
  }
  if (b.is_const(1) || a.is_const(0)) return Const(0);
  return Make(Kind::kMod, a, b);
}

IndexExpr IndexExpr::Max(const IndexExpr& a, const IndexExpr& b) {
  if (a.is_const() && b.is_const())
    return Const(std::max(a.value(), b.value()));
  if (a == b) return a;
  return Make(Kind::kMax, a, b);
}

IndexExpr IndexExpr::Min(const IndexExpr& a, const IndexExpr& b) {
  if (a.is_const() && b.is_const())
    return Const(std::min(a.value(), b.value()));
  if (a == b) return a;
  return Make(Kind::kMin, a, b);
}

IndexExpr IndexExpr::FromSym(const SymExpr& e) {
  IndexExpr sum = Const(0);
  for (const SymExpr::Monomial& term : e.Terms()) {
    IndexExpr product = Const(1);
    for (const SymExpr::Factor& f : term.factors) {
      IndexExpr factor;
      switch (f.kind) {
        case SymExpr::AtomKind::kSymbol:
          factor = Size(f.symbol);
          break;
        case SymExpr::AtomKind::kFloorDiv:
          factor = FloorDiv(FromSym(f.a), FromSym(f.b));
          break;
        case SymExpr::AtomKind::kMod:
          factor = Mod(FromSym(f.a), FromSym(f.b));
          break;
        case SymExpr::AtomKind::kMax:
          factor = Max(FromSym(f.a), FromSym(f.b));
          break;
        case SymExpr::AtomKind::kMin:
          factor = Min(FromSym(f.a), FromSym(f.b));
          break;
      }
      product = product * factor;
    }
    sum = sum + product * Const(term.coefficient);
  }
  return sum;
}

int64_t IndexExpr::Evaluate(absl::Span<const int64_t> sizes) const {
  switch (kind()) {
    case Kind::kConst:
      return value();
    case Kind::kVar:
      return 0;
    case Kind::kSize:
      return sizes[id()];
    case Kind::kAdd:
      return WrapAdd(lhs().Evaluate(sizes), rhs().Evaluate(sizes));
    case Kind::kMul:
      return WrapMul(lhs().Evaluate(sizes), rhs().Evaluate(sizes));
    case Kind::kFloorDiv:
    case Kind::kMod: {
      const int64_t b = rhs().Evaluate(sizes);
      if (b == 0) return 0;
      const int64_t a = lhs().Evaluate(sizes);
      return kind() == Kind::kFloorDiv ? FloorDivInt(a, b) : ModInt(a, b);
    }
    case Kind::kMax:
      return std::max(lhs().Evaluate(sizes), rhs().Evaluate(sizes));
    case Kind::kMin:
      return std::min(lhs().Evaluate(sizes), rhs().Evaluate(sizes));
  }
  return 0;
}

int64_t IndexExpr::EvaluateChecked(absl::Span<const int64_t> sizes,
                                   bool& overflow) const {
  int64_t r = 0;
  switch (kind()) {
    case Kind::kConst:
    case Kind::kVar:
    case Kind::kSize:
      return Evaluate(sizes);
    case Kind::kAdd:
      overflow |=
          __builtin_add_overflow(lhs().EvaluateChecked(sizes, overflow),
                                 rhs().EvaluateChecked(sizes, overflow), &r);
      return r;
    case Kind::kMul:
      overflow |=
          __builtin_mul_overflow(lhs().EvaluateChecked(sizes, overflow),
                                 rhs().EvaluateChecked(sizes, overflow), &r);
      return r;
    case Kind::kFloorDiv:
    case Kind::kMod: {
      const int64_t b = rhs().EvaluateChecked(sizes, overflow);
      const int64_t a = lhs().EvaluateChecked(sizes, overflow);
      if (b == 0) return 0;
      if (b == -1 && a == std::numeric_limits<int64_t>::min()) {
        overflow = true;
        return 0;
      }
      return kind() == Kind::kFloorDiv ? FloorDivInt(a, b) : ModInt(a, b);
    }
    case Kind::kMax:
      return std::max(lhs().EvaluateChecked(sizes, overflow),
                      rhs().EvaluateChecked(sizes, overflow));
    case Kind::kMin:
      return std::min(lhs().EvaluateChecked(sizes, overflow),
                      rhs().EvaluateChecked(sizes, overflow));
  }
  return 0;
}

std::string IndexExpr::ToString() const {
  switch (kind()) {
    case Kind::kConst:
      return absl::StrCat(value());
    case Kind::kVar:
      return absl::StrCat("i", id());
    case Kind::kSize:
      return absl::StrCat("s", id());
    case Kind::kAdd:
      return absl::StrCat("(", lhs().ToString(), " + ", rhs().ToString(), ")");
    case Kind::kMul:
      return absl::StrCat(lhs().ToString(), "*", rhs().ToString());
    case Kind::kFloorDiv:
      return absl::StrCat("(", lhs().ToString(), " // ", rhs().ToString(), ")");
    case Kind::kMod:
      return absl::StrCat("(", lhs().ToString(), " % ", rhs().ToString(), ")");
    case Kind::kMax:
      return absl::StrCat("max(", lhs().ToString(), ", ", rhs().ToString(),
                          ")");
    case Kind::kMin:
      return absl::StrCat("min(", lhs().ToString(), ", ", rhs().ToString(),
                          ")");
  }
  return "?";
}

bool operator==(const IndexExpr& a, const IndexExpr& b) {
  if (a.node_ == b.node_) return true;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case IndexExpr::Kind::kConst:
    case IndexExpr::Kind::kVar:
    case IndexExpr::Kind::kSize:
      return a.node_->value == b.node_->value;
    default:
      return a.lhs() == b.lhs() && a.rhs() == b.rhs();
  }
}

std::vector<IndexExpr> ConstExprs(IntSpan values) {
  std::vector<IndexExpr> out;
  for (int64_t v : values) out.push_back(IndexExpr::Const(v));
  return out;
}

std::vector<IndexExpr> ContiguousStrideExprs(
    const std::vector<IndexExpr>& sizes) {
  std::vector<IndexExpr> strides(sizes.size());
  IndexExpr stride = IndexExpr::Const(1);
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    // As ContiguousStrides: constant sizes 0 and 1 leave the stride as it
    // is (a symbol that is 1 multiplies by 1; one that is 0 leaves nothing
    // to address).
    if (!sizes[d].is_const() || sizes[d].value() > 1) {
      stride = stride * sizes[d];
    }
  }
  return strides;
}

std::vector<IndexExpr> ChannelsLastStrideExprs(
    const std::vector<IndexExpr>& sizes) {
  std::vector<IndexExpr> strides(sizes.size(), IndexExpr::Const(1));
  if (sizes.size() < 3) return ContiguousStrideExprs(sizes);
  // Channels innermost, then the spatial dims last to first, then N.
  IndexExpr stride = IndexExpr::Const(1);
  const auto step = [&](size_t d) {
    strides[d] = stride;
    if (!sizes[d].is_const() || sizes[d].value() > 1) {
      stride = stride * sizes[d];
    }
  };
  step(1);
  for (size_t d = sizes.size() - 1; d >= 2; --d) step(d);
  step(0);
  return strides;
}

Shape EvaluateShape(const std::vector<IndexExpr>& exprs,
                    absl::Span<const int64_t> sizes) {
  Shape out;
  for (const IndexExpr& e : exprs) out.push_back(e.Evaluate(sizes));
  return out;
}

IndexExpr SubstituteVars(const IndexExpr& e,
                         const absl::flat_hash_map<int, IndexExpr>& vars) {
  using Kind = IndexExpr::Kind;
  const auto sub = [&](const IndexExpr& x) { return SubstituteVars(x, vars); };
  switch (e.kind()) {
    case Kind::kConst:
    case Kind::kSize:
      return e;
    case Kind::kVar: {
      auto it = vars.find(e.id());
      return it == vars.end() ? e : it->second;
    }
    case Kind::kAdd:
      return sub(e.lhs()) + sub(e.rhs());
    case Kind::kMul:
      return sub(e.lhs()) * sub(e.rhs());
    case Kind::kFloorDiv:
      return IndexExpr::FloorDiv(sub(e.lhs()), sub(e.rhs()));
    case Kind::kMod:
      return IndexExpr::Mod(sub(e.lhs()), sub(e.rhs()));
    case Kind::kMax:
      return IndexExpr::Max(sub(e.lhs()), sub(e.rhs()));
    case Kind::kMin:
      return IndexExpr::Min(sub(e.lhs()), sub(e.rhs()));
  }
  return e;
}

}  // namespace guardjit
