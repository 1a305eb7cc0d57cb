#ifndef GUARDJIT_CORE_OPS_SYM_OPS_H_
#define GUARDJIT_CORE_OPS_SYM_OPS_H_

// Integer arithmetic and comparisons on sizes, as torch.fx graphs spell them
// (`operator.mul`, `operator.gt`, ...), read by both their shape rules
// (core/ops/sym.cc, over SymInt) and their kernels (runtime/kernels/sym.cc,
// over int64_t), so both compute the same thing.

#include <cstdint>

#include "core/sym_int.h"

namespace guardjit {

enum class SymOp {
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kMod,
  kGt,
  kGe,
  kLt,
  kLe,
  kEq,
  kNe,
};

struct SymOpDef {
  SymOp op;
  const char* target;  // the node's target
  const char* schema;
  bool compare;  // returns a bool
};

inline constexpr SymOpDef kSymOps[] = {
    {SymOp::kAdd, "operator.add", "add(Any a, Any b) -> SymInt", false},
    {SymOp::kSub, "operator.sub", "sub(Any a, Any b) -> SymInt", false},
    {SymOp::kMul, "operator.mul", "mul(Any a, Any b) -> SymInt", false},
    {SymOp::kFloorDiv, "operator.floordiv", "floordiv(Any a, Any b) -> SymInt",
     false},
    {SymOp::kMod, "operator.mod", "mod(Any a, Any b) -> SymInt", false},
    {SymOp::kGt, "operator.gt", "gt(Any a, Any b) -> SymBool", true},
    {SymOp::kGe, "operator.ge", "ge(Any a, Any b) -> SymBool", true},
    {SymOp::kLt, "operator.lt", "lt(Any a, Any b) -> SymBool", true},
    {SymOp::kLe, "operator.le", "le(Any a, Any b) -> SymBool", true},
    {SymOp::kEq, "operator.eq", "eq(Any a, Any b) -> SymBool", true},
    {SymOp::kNe, "operator.ne", "ne(Any a, Any b) -> SymBool", true},
};

inline int64_t FloorDivOf(int64_t a, int64_t b) {
  return SymFloorDiv(a, b).hint();
}
inline SymInt FloorDivOf(const SymInt& a, const SymInt& b) {
  return SymFloorDiv(a, b);
}
inline int64_t ModOf(int64_t a, int64_t b) { return SymMod(a, b).hint(); }
inline SymInt ModOf(const SymInt& a, const SymInt& b) { return SymMod(a, b); }

// `a op b`; comparisons give 0 or 1 (over SymInt they record guards).
template <typename I>
I ApplySymOp(SymOp op, const I& a, const I& b) {
  switch (op) {
    case SymOp::kAdd:
      return a + b;
    case SymOp::kSub:
      return a - b;
    case SymOp::kMul:
      return a * b;
    case SymOp::kFloorDiv:
      return FloorDivOf(a, b);
    case SymOp::kMod:
      return ModOf(a, b);
    case SymOp::kGt:
      return I(a > b ? 1 : 0);
    case SymOp::kGe:
      return I(a >= b ? 1 : 0);
    case SymOp::kLt:
      return I(a < b ? 1 : 0);
    case SymOp::kLe:
      return I(a <= b ? 1 : 0);
    case SymOp::kEq:
      return I(a == b ? 1 : 0);
    case SymOp::kNe:
      return I(a != b ? 1 : 0);
  }
  return I(0);
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_SYM_OPS_H_
