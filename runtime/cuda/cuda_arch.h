#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_ARCH_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_ARCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

// An NVIDIA GPU architecture (compute capability), as a device reports it and
// NVRTC targets it: sm_90 is major 9, minor 0. Plain data, no CUDA headers:
// the CLI and the compile cache use it on machines without a GPU.
struct CudaArch {
  int major = 0;
  int minor = 0;
  // 'a' for the arch-specific feature set (sm_90a: wgmma, setmaxnreg), 'f'
  // for the family-portable one (sm_100f); '\0' for the portable baseline.
  char variant = '\0';

  // 90 for sm_90, as nvrtcGetSupportedArchs lists archs.
  int number() const { return major * 10 + minor; }
  // "sm_90", "sm_90a".
  std::string ToString() const;

  friend bool operator==(const CudaArch& a, const CudaArch& b) {
    return a.major == b.major && a.minor == b.minor && a.variant == b.variant;
  }
  friend bool operator!=(const CudaArch& a, const CudaArch& b) {
    return !(a == b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const CudaArch& arch) {
    return H::combine(std::move(h), arch.major, arch.minor, arch.variant);
  }
};

// Reads a CUDA target as the CLI takes it: "cuda:sm_90", "sm_90", "cuda:90",
// "90", with an optional 'a' or 'f' variant ("cuda:sm_90a"). The number is
// major * 10 + minor (sm_120 is 12.0). Anything else is INVALID_ARGUMENT
// quoting the text and the accepted forms.
absl::StatusOr<CudaArch> ParseCudaTarget(absl::string_view target);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_ARCH_H_
