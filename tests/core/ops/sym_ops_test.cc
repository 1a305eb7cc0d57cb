#include "core/ops/sym_ops.h"

#include <cstdint>
#include <string>

#include "core/sym_int.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(SymOpsTableTest, TargetsMatchTheirSchemas) {
  for (const SymOpDef& def : kSymOps) {
    const std::string target = def.target;
    const std::string schema = def.schema;
    SCOPED_TRACE(target);
    ASSERT_EQ(target.rfind("operator.", 0), 0u);
    const std::string name = target.substr(9);
    EXPECT_EQ(schema.rfind(name + "(Any a, Any b) -> ", 0), 0u);
    // Comparisons, and only they, return SymBool.
    EXPECT_EQ(def.compare, schema.find("-> SymBool") != std::string::npos);
  }
}

TEST(ApplySymOpTest, ArithmeticOnIntegers) {
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kAdd, 7, -2), 5);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kSub, 7, -2), 9);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kMul, 7, -2), -14);
}

TEST(ApplySymOpTest, DivisionAndModuloFloorAsPythonDoes) {
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kFloorDiv, 7, 2), 3);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kFloorDiv, -7, 2), -4);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kFloorDiv, 7, -2), -4);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kMod, -7, 2), 1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kMod, 7, -2), -1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kMod, 6, 3), 0);
}

TEST(ApplySymOpTest, ComparisonsGiveZeroOrOne) {
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kGt, 3, 2), 1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kGt, 2, 2), 0);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kGe, 2, 2), 1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kLt, 2, 3), 1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kLe, 3, 2), 0);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kEq, 4, 4), 1);
  EXPECT_EQ(ApplySymOp<int64_t>(SymOp::kNe, 4, 4), 0);
}

TEST(ApplySymOpTest, SymIntAgreesWithInt64OnConstants) {
  for (const SymOpDef& def : kSymOps) {
    for (int64_t a : {-7, 0, 5}) {
      for (int64_t b : {-3, 2}) {
        const SymInt s = ApplySymOp<SymInt>(def.op, SymInt(a), SymInt(b));
        ASSERT_FALSE(s.is_symbolic()) << def.target;
        EXPECT_EQ(s.hint(), ApplySymOp<int64_t>(def.op, a, b))
            << def.target << " " << a << " " << b;
      }
    }
  }
}

}  // namespace
}  // namespace guardjit
