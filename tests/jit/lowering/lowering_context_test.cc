// The lowering table (FindLowering, jit/lowering/lowering_context.h): every
// registered op either lowers to the loop IR or is one of the ops the JIT
// deliberately runs another way; a new op must be put in one of the two.

#include "jit/lowering/lowering_context.h"

#include <set>
#include <string>

#include "core/op_registry.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(LoweringContextTest, EveryOpLowersOrIsAKnownExternal) {
  // Extern steps (OpenBLAS GEMM, im2col + GEMM) with fused epilogues; the
  // integer ops on symbolic sizes (operator.*, sym_size, sym_numel: host
  // values, not tensors) and cond, whose graphs run the eager plan; ops that
  // run their reference kernels as eager steps for now (pooling windows,
  // batch norm over batch statistics, the metadata check). Ops with a
  // data-dependent output size are graph breaks: only the eager interpreter
  // runs them, never a compiled segment.
  const std::set<std::string> external = {
      "aten.mm.default",
      "aten.bmm.default",
      "aten.addmm.default",
      "aten.convolution.default",
      // One attention step in static float32 host programs, else its
      // reference kernel (jit/steps/attention_step.h).
      "aten.scaled_dot_product_attention.default",
      "aten.sym_size.int",
      "aten.sym_numel.default",
      "higher_order.cond",
      // Rebuilt per entry (core/value_inputs.h): never compiled itself.
      "higher_order.value_specialized",
      "aten._adaptive_avg_pool2d.default",
      "aten._native_batch_norm_legit.no_stats",
      "aten._assert_tensor_metadata.default",
      "aten._assert_scalar.default",
      // Eager steps of compiled programs (issue #16, part B).
      "aten.index_put.default",
      "aten.scatter.src",
      "aten.scatter.value",
      "aten.scatter_add.default",
      "aten.scatter_reduce.two",
      "aten.cumsum.default",
      "aten.sort.default",
      "aten.topk.default",
      "aten._adaptive_avg_pool3d.default",
  };
  std::set<std::string> missing;
  int lowered = 0;
  for (const OpDef* def : OpRegistry::Global().All()) {
    if (def->data_dependent_output) {
      EXPECT_EQ(FindLowering(def->target), nullptr)
          << def->target << " has a data-dependent output size: never lowered";
      continue;
    }
    if (FindLowering(def->target) != nullptr) {
      ++lowered;
    } else if (!external.contains(def->target) &&
               def->target.rfind("operator.", 0) != 0) {
      missing.insert(def->target);
    }
  }
  for (const std::string& target : missing) {
    ADD_FAILURE() << target << " has no JIT lowering";
  }
  EXPECT_GT(lowered, 100);
  for (const char* target :
       {"aten.max.dim", "aten.min.dim", "aten.var.dim", "aten.index.Tensor",
        "aten.native_group_norm.default"}) {
    EXPECT_NE(FindLowering(target), nullptr) << target << " is lowered";
  }
}

}  // namespace
}  // namespace guardjit
