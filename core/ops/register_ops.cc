#include "core/ops/register_ops.h"

#include "core/op_registry.h"
#include "core/status_macros.h"

namespace guardjit {

absl::Status RegisterAllOps(OpRegistry& registry) {
  RETURN_IF_ERROR(RegisterUnaryOps(registry));
  RETURN_IF_ERROR(RegisterBinaryOps(registry));
  RETURN_IF_ERROR(RegisterReductionOps(registry));
  RETURN_IF_ERROR(RegisterNormalizationOps(registry));
  RETURN_IF_ERROR(RegisterLinalgOps(registry));
  RETURN_IF_ERROR(RegisterViewOps(registry));
  RETURN_IF_ERROR(RegisterShapeOps(registry));
  RETURN_IF_ERROR(RegisterIndexingOps(registry));
  RETURN_IF_ERROR(RegisterCreationOps(registry));
  RETURN_IF_ERROR(RegisterSymOps(registry));
  RETURN_IF_ERROR(RegisterControlFlowOps(registry));
  RETURN_IF_ERROR(RegisterActivationOps(registry));
  RETURN_IF_ERROR(RegisterPoolingOps(registry));
  RETURN_IF_ERROR(RegisterAssertOps(registry));
  RETURN_IF_ERROR(RegisterDataDependentOps(registry));
  RETURN_IF_ERROR(RegisterPaddingOps(registry));
  RETURN_IF_ERROR(RegisterResampleOps(registry));
  RETURN_IF_ERROR(RegisterScatterOps(registry));
  RETURN_IF_ERROR(RegisterSortOps(registry));
  RETURN_IF_ERROR(RegisterAttentionOps(registry));
  return absl::OkStatus();
}

}  // namespace guardjit
