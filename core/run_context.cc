#include "core/run_context.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

absl::Status CheckDestination(const RunContext& ctx, size_t output, DType dtype,
                              IntSpan sizes) {
  const Tensor* dest = ctx.destination(output);
  if (dest == nullptr) return absl::OkStatus();
  if (dest->dtype() == dtype &&
      std::equal(sizes.begin(), sizes.end(), dest->sizes().begin(),
                 dest->sizes().end())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "output ", output, ": expected ", DTypeName(dtype), "[",
      absl::StrJoin(sizes, ", "), "], got ", DTypeName(dest->dtype()), "[",
      absl::StrJoin(dest->sizes(), ", "), "]"));
}

}  // namespace guardjit
