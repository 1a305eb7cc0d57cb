#include "runtime/kernels/register_kernels.h"

#include "core/status_macros.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

absl::Status RegisterAllKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(RegisterUnaryKernels(registry));
  RETURN_IF_ERROR(RegisterBinaryKernels(registry));
  RETURN_IF_ERROR(RegisterReductionKernels(registry));
  RETURN_IF_ERROR(RegisterNormalizationKernels(registry));
  RETURN_IF_ERROR(RegisterLinalgKernels(registry));
  RETURN_IF_ERROR(RegisterViewKernels(registry));
  RETURN_IF_ERROR(RegisterShapeKernels(registry));
  RETURN_IF_ERROR(RegisterIndexingKernels(registry));
  RETURN_IF_ERROR(RegisterCreationKernels(registry));
  RETURN_IF_ERROR(RegisterSymKernels(registry));
  RETURN_IF_ERROR(RegisterActivationKernels(registry));
  RETURN_IF_ERROR(RegisterPoolingKernels(registry));
  RETURN_IF_ERROR(RegisterAssertKernels(registry));
  RETURN_IF_ERROR(RegisterDataDependentKernels(registry));
  RETURN_IF_ERROR(RegisterPaddingKernels(registry));
  RETURN_IF_ERROR(RegisterResampleKernels(registry));
  RETURN_IF_ERROR(RegisterScatterKernels(registry));
  RETURN_IF_ERROR(RegisterSortKernels(registry));
  RETURN_IF_ERROR(RegisterAttentionKernels(registry));
  return absl::OkStatus();
}

}  // namespace guardjit
