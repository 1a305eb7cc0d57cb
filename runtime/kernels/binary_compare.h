#ifndef GUARDJIT_RUNTIME_KERNELS_BINARY_COMPARE_H_
#define GUARDJIT_RUNTIME_KERNELS_BINARY_COMPARE_H_

#include "absl/status/status.h"

namespace guardjit {

class KernelRegistry;

// Comparisons, logical and bitwise ops, where and clamp: the part of the
// binary family that RegisterBinaryKernels delegates to binary_compare.cc.
absl::Status RegisterBinaryCompareKernels(KernelRegistry& registry);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_BINARY_COMPARE_H_
