#include "runtime/cuda/cuda_arch.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace guardjit {

std::string CudaArch::ToString() const {
  std::string text = absl::StrCat("sm_", number());
  if (variant != '\0') text += variant;
  return text;
}

absl::StatusOr<CudaArch> ParseCudaTarget(absl::string_view target) {
  absl::string_view rest = target;
  absl::ConsumePrefix(&rest, "cuda:");
  absl::ConsumePrefix(&rest, "sm_");
  CudaArch arch;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    arch.variant = rest.back();
    rest.remove_suffix(1);
  }
  int number = 0;
  // Two or three digits: sm_75 .. sm_121 (leading zeros and signs refused).
  const bool digits_only =
      !rest.empty() && rest.size() <= 3 && absl::ascii_isdigit(rest[0]) &&
      rest[0] != '0' &&
      rest.find_first_not_of("0123456789") == absl::string_view::npos;
  if (!digits_only || !absl::SimpleAtoi(rest, &number) || number < 10) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid CUDA target '", target,
        "': expected cuda:sm_XY, sm_XY, cuda:XY or XY (compute capability "
        "X.Y, e.g. cuda:sm_90), optionally with an 'a' or 'f' suffix"));
  }
  arch.major = number / 10;
  arch.minor = number % 10;
  return arch;
}

}  // namespace guardjit
