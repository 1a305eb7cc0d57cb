#ifndef GUARDJIT_RUNTIME_KERNELS_CONVOLUTION_H_
#define GUARDJIT_RUNTIME_KERNELS_CONVOLUTION_H_

#include "absl/status/status.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

// aten.convolution.default (1 to 3 spatial dims, grouped, transposed); part
// of the linalg family, registered by RegisterLinalgKernels.
absl::Status RegisterConvolutionKernels(KernelRegistry& registry);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_CONVOLUTION_H_
