#include "core/ops/control_flow.h"

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/status_macros.h"
#include "core/value_inputs.h"

namespace guardjit {

absl::Status RegisterControlFlowOps(OpRegistry& registry) {
  // The rule needs the branches, which a node's arguments only name: graph
  // shape inference (core/shape_inference.cc) handles cond itself.
  RETURN_IF_ERROR(registry.RegisterWithTarget(
      kValueSpecializedTarget,
      "value_specialized(Tensor[] operands) -> Tensor[]",
      [](const MetaArgs&) -> absl::StatusOr<std::vector<TensorMeta>> {
        return absl::FailedPreconditionError(
            "the graph runs only specialized to the values of its "
            "value-specialized inputs, which rebuild it: call it through a "
            "function");
      }));
  return registry.RegisterWithTarget(
      kCondTarget,
      "cond(Any pred, Graph true_fn, Graph false_fn, Tensor[] operands) -> "
      "Tensor[]",
      [](const MetaArgs&) -> absl::StatusOr<std::vector<TensorMeta>> {
        return absl::InternalError(
            "cond is inferred by graph shape inference, not by a node rule");
      });
}

}  // namespace guardjit
