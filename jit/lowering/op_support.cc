#include "jit/lowering/op_support.h"

#include "absl/container/flat_hash_set.h"
#include "core/op_registry.h"
#include "jit/lowering/lowering_context.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

std::vector<OpSupport> ListOpSupport() {
  // The ops jit_compiler.cc hands to GemmStep and ConvStep, and the
  // attention step (jit/steps/attention_step.h: static float32 programs).
  static const absl::flat_hash_set<std::string> kExternSteps = {
      "aten.mm.default", "aten.addmm.default", "aten.bmm.default",
      "aten.convolution.default", "aten.scaled_dot_product_attention.default"};
  std::vector<OpSupport> rows;
  for (const OpDef* def : OpRegistry::Global().All()) {
    OpSupport row;
    row.target = def->target;
    row.schema = def->schema.ToString();
    row.reference_kernel =
        KernelRegistry::Global().Find(def->target) != nullptr;
    row.jit_lowering = FindLowering(def->target) != nullptr;
    row.extern_step = kExternSteps.contains(def->target);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace guardjit
