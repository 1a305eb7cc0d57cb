#ifndef GUARDJIT_RUNTIME_KERNELS_REGISTER_KERNELS_H_
#define GUARDJIT_RUNTIME_KERNELS_REGISTER_KERNELS_H_

// One registration function per op family, mirroring core/ops/.

#include "absl/status/status.h"

namespace guardjit {

class KernelRegistry;

absl::Status RegisterUnaryKernels(KernelRegistry& registry);
absl::Status RegisterBinaryKernels(KernelRegistry& registry);
absl::Status RegisterReductionKernels(KernelRegistry& registry);
absl::Status RegisterNormalizationKernels(KernelRegistry& registry);
absl::Status RegisterLinalgKernels(KernelRegistry& registry);
absl::Status RegisterViewKernels(KernelRegistry& registry);
absl::Status RegisterShapeKernels(KernelRegistry& registry);
absl::Status RegisterIndexingKernels(KernelRegistry& registry);
absl::Status RegisterCreationKernels(KernelRegistry& registry);
absl::Status RegisterSymKernels(KernelRegistry& registry);
absl::Status RegisterActivationKernels(KernelRegistry& registry);
absl::Status RegisterPoolingKernels(KernelRegistry& registry);
absl::Status RegisterAssertKernels(KernelRegistry& registry);
absl::Status RegisterDataDependentKernels(KernelRegistry& registry);
absl::Status RegisterPaddingKernels(KernelRegistry& registry);
absl::Status RegisterResampleKernels(KernelRegistry& registry);
absl::Status RegisterScatterKernels(KernelRegistry& registry);
absl::Status RegisterSortKernels(KernelRegistry& registry);
absl::Status RegisterAttentionKernels(KernelRegistry& registry);

absl::Status RegisterAllKernels(KernelRegistry& registry);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_REGISTER_KERNELS_H_
