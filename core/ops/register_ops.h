#ifndef GUARDJIT_CORE_OPS_REGISTER_OPS_H_
#define GUARDJIT_CORE_OPS_REGISTER_OPS_H_

// One registration function per op family; each lives in core/ops/<family>.cc
// beside the family's shape/dtype rules. The reference kernels are in
// runtime/kernels/<family>.cc, the tests in tests/runtime/kernels/.

#include "absl/status/status.h"

namespace guardjit {

class OpRegistry;

absl::Status RegisterUnaryOps(OpRegistry& registry);
absl::Status RegisterBinaryOps(OpRegistry& registry);
absl::Status RegisterReductionOps(OpRegistry& registry);
absl::Status RegisterNormalizationOps(OpRegistry& registry);
absl::Status RegisterLinalgOps(OpRegistry& registry);
absl::Status RegisterViewOps(OpRegistry& registry);
absl::Status RegisterShapeOps(OpRegistry& registry);
absl::Status RegisterIndexingOps(OpRegistry& registry);
absl::Status RegisterCreationOps(OpRegistry& registry);
absl::Status RegisterSymOps(OpRegistry& registry);
absl::Status RegisterControlFlowOps(OpRegistry& registry);
absl::Status RegisterActivationOps(OpRegistry& registry);
absl::Status RegisterPoolingOps(OpRegistry& registry);
absl::Status RegisterAssertOps(OpRegistry& registry);
absl::Status RegisterDataDependentOps(OpRegistry& registry);
absl::Status RegisterPaddingOps(OpRegistry& registry);
absl::Status RegisterResampleOps(OpRegistry& registry);
absl::Status RegisterScatterOps(OpRegistry& registry);
absl::Status RegisterSortOps(OpRegistry& registry);
absl::Status RegisterAttentionOps(OpRegistry& registry);

absl::Status RegisterAllOps(OpRegistry& registry);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OPS_REGISTER_OPS_H_
