#include "jit/index_expr.h"

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
    return IndexExpr::Const(a.value() + b.value());
  if (a.is_const(0)) return b;
  if (b.is_const(0)) return a;
  // Keep constants rightmost and folded: (x + c1) + c2 -> x + (c1 + c2).
  if (a.is_const()) return b + a;
  if (b.is_const() && a.kind() == Kind::kAdd && a.rhs().is_const()) {
    return a.lhs() + IndexExpr::Const(a.rhs().value() + b.value());
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
    return IndexExpr::Const(a.value() * b.value());
  if (a.is_const()) return b * a;
  if (b.is_const(0)) return IndexExpr::Const(0);
  if (b.is_const(1)) return a;
  if (b.is_const() && a.kind() == Kind::kMul && a.rhs().is_const()) {
    return a.lhs() * IndexExpr::Const(a.rhs().value() * b.value());
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

}  // namespace guardjit
