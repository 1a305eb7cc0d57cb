#include "jit/kernel_cache.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {
namespace {

constexpr char kCacheMissPayload[] = "guardjit/kernel-cache-miss";

std::atomic<int>& ForbiddingScopes() {
  static std::atomic<int> scopes{0};
  return scopes;
}

bool ForbiddenByEnvironment() {
  static const bool kForbidden = [] {
    const char* v = std::getenv("GJ_ASSERT_NO_COMPILE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return kForbidden;
}

}  // namespace

KernelCacheKey KernelCacheKey::Make(std::string backend, std::string target,
                                    std::string options, std::string source) {
  KernelCacheKey key;
  key.source_hash = absl::HashOf(source);
  key.backend = std::move(backend);
  key.target = std::move(target);
  key.options = std::move(options);
  key.source = std::move(source);
  return key;
}

std::string KernelCacheKey::Where() const {
  return target.empty() ? backend : absl::StrCat(backend, ":", target);
}

bool KernelCompilesForbidden() {
  return ForbiddingScopes().load(std::memory_order_acquire) > 0 ||
         ForbiddenByEnvironment();
}

ScopedForbidKernelCompiles::ScopedForbidKernelCompiles() {
  ForbiddingScopes().fetch_add(1, std::memory_order_acq_rel);
}

ScopedForbidKernelCompiles::~ScopedForbidKernelCompiles() {
  ForbiddingScopes().fetch_sub(1, std::memory_order_acq_rel);
}

absl::Status CheckKernelCompileAllowed(const KernelCacheKey& key,
                                       absl::string_view kernel) {
  if (!KernelCompilesForbidden()) return absl::OkStatus();
  absl::Status error = absl::FailedPreconditionError(absl::StrCat(
      "kernel cache miss for '", kernel, "' on ", key.Where(),
      key.options.empty() ? "" : absl::StrCat(" (", key.options, ")"),
      " with GJ_ASSERT_NO_COMPILE set (compiles are forbidden: ",
      ForbiddingScopes().load() > 0 ? "a ScopedForbidKernelCompiles is live"
                                    : "GJ_ASSERT_NO_COMPILE=1",
      ")"));
  // Cord's string_view constructor: its templated std::string one mangles
  // differently under clang-19 than in Debian's GCC-built Abseil, which
  // broke the fuzz build's link.
  const std::string where = key.Where();
  error.SetPayload(kCacheMissPayload, absl::Cord(absl::string_view(where)));
  return error;
}

bool IsKernelCacheMissError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         status.GetPayload(kCacheMissPayload).has_value();
}

std::string ModuleLabel(absl::Span<const std::string> labels, size_t count) {
  if (labels.empty()) return absl::StrCat(count, " kernels");
  return absl::StrJoin(labels, "; ");
}

}  // namespace guardjit
