// The op support table (jit/lowering/op_support.h, what `guardjit ops`
// prints): every registered op once, sorted, with its schema, and what runs
// it: the reference kernel, a loop-IR lowering, or an extern step.

#include "jit/lowering/op_support.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/op_registry.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

const OpSupport* Find(const std::vector<OpSupport>& rows,
                      const std::string& target) {
  for (const OpSupport& row : rows) {
    if (row.target == target) return &row;
  }
  return nullptr;
}

TEST(OpSupportTest, EveryRegisteredOpOnceSorted) {
  const std::vector<OpSupport> rows = ListOpSupport();
  EXPECT_EQ(rows.size(), OpRegistry::Global().All().size());
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(),
                             [](const OpSupport& a, const OpSupport& b) {
                               return a.target < b.target;
                             }));
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end(),
                               [](const OpSupport& a, const OpSupport& b) {
                                 return a.target == b.target;
                               }),
            rows.end());
  for (const OpSupport& row : rows) {
    EXPECT_FALSE(row.schema.empty()) << row.target;
    // An extern step is an op the JIT hands to BLAS: never also lowered.
    if (row.extern_step) EXPECT_FALSE(row.jit_lowering) << row.target;
  }
}

TEST(OpSupportTest, SaysWhatRunsEachOp) {
  const std::vector<OpSupport> rows = ListOpSupport();
  const OpSupport* add = Find(rows, "aten.add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->reference_kernel);
  EXPECT_TRUE(add->jit_lowering);
  EXPECT_FALSE(add->extern_step);
  EXPECT_NE(add->schema.find("add.Tensor("), std::string::npos) << add->schema;
  const OpSupport* conv = Find(rows, "aten.convolution.default");
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->extern_step);
  EXPECT_TRUE(conv->reference_kernel);
  // The 2-D and 3-D pools share one lowering; adaptive 3-D pooling runs its
  // reference kernel.
  for (const char* target :
       {"aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
        "aten.max_pool3d_with_indices.default", "aten.avg_pool3d.default"}) {
    const OpSupport* pool = Find(rows, target);
    ASSERT_NE(pool, nullptr) << target;
    EXPECT_TRUE(pool->jit_lowering) << target;
    EXPECT_TRUE(pool->reference_kernel) << target;
  }
  const OpSupport* adaptive = Find(rows, "aten._adaptive_avg_pool3d.default");
  ASSERT_NE(adaptive, nullptr);
  EXPECT_FALSE(adaptive->jit_lowering);
  EXPECT_TRUE(adaptive->reference_kernel);
}

}  // namespace
}  // namespace guardjit
