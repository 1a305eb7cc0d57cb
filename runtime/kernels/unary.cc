#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {

absl::Status RegisterUnaryKernels(KernelRegistry& registry) { return absl::OkStatus(); }

}  // namespace guardjit
