#include "core/sym_int.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

int64_t SymInt::SpecializeSymbolic() const {
  if (ShapeEnv* env = ShapeEnv::Current()) return env->Specialize(*expr_);
  return hint_;
}

namespace sym_internal {

SymInt SymbolicAdd(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr() + b.expr(), WrapAdd(a.hint(), b.hint()));
}
SymInt SymbolicSub(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr() - b.expr(), WrapAdd(a.hint(), WrapMul(b.hint(), -1)));
}
SymInt SymbolicMul(const SymInt& a, const SymInt& b) {
  return SymInt(a.expr() * b.expr(), WrapMul(a.hint(), b.hint()));
}

bool SymbolicCompare(SymRel rel, const SymInt& a, const SymInt& b) {
  if (ShapeEnv* env = ShapeEnv::Current()) {
    return env->Guard(rel, a.expr(), b.expr());
  }
  return EvalRel(rel, a.hint(), b.hint());
}

}  // namespace sym_internal

SymInt SymFloorDiv(const SymInt& a, const SymInt& b) {
  const SymExpr q = SymExpr::FloorDiv(SymExpr(a.hint()), SymExpr(b.hint()));
  const int64_t hint = q.constant();
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(hint);
  return SymInt(SymExpr::FloorDiv(a.expr(), b.expr()), hint);
}

SymInt SymMod(const SymInt& a, const SymInt& b) {
  const int64_t hint =
      SymExpr::Mod(SymExpr(a.hint()), SymExpr(b.hint())).constant();
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(hint);
  return SymInt(SymExpr::Mod(a.expr(), b.expr()), hint);
}

SymInt SymMax(const SymInt& a, const SymInt& b) {
  const int64_t hint = std::max(a.hint(), b.hint());
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(hint);
  return SymInt(SymExpr::Max(a.expr(), b.expr()), hint);
}

SymInt SymMin(const SymInt& a, const SymInt& b) {
  const int64_t hint = std::min(a.hint(), b.hint());
  if (!a.is_symbolic() && !b.is_symbolic()) return SymInt(hint);
  return SymInt(SymExpr::Min(a.expr(), b.expr()), hint);
}

SymShape ToSymShape(absl::Span<const int64_t> sizes) {
  return SymShape(sizes.begin(), sizes.end());
}

absl::InlinedVector<int64_t, 6> HintShape(absl::Span<const SymInt> sizes) {
  absl::InlinedVector<int64_t, 6> out;
  for (const SymInt& s : sizes) out.push_back(s.hint());
  return out;
}

absl::InlinedVector<int64_t, 6> ConcreteShape(absl::Span<const SymInt> sizes) {
  absl::InlinedVector<int64_t, 6> out;
  for (const SymInt& s : sizes) out.push_back(s.Specialize());
  return out;
}

bool IsSymbolic(absl::Span<const SymInt> sizes) {
  for (const SymInt& s : sizes) {
    if (s.is_symbolic()) return true;
  }
  return false;
}

SymInt Product(absl::Span<const SymInt> sizes) {
  SymInt p = 1;
  for (const SymInt& s : sizes) p = p * s;
  return p;
}

std::string SymShapeToString(absl::Span<const SymInt> sizes) {
  std::vector<std::string> parts;
  for (const SymInt& s : sizes) parts.push_back(s.ToString());
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

}  // namespace guardjit
