#include "runtime/cuda/cublaslt_api.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/dynamic_library.h"

namespace guardjit {

namespace {

std::atomic<const CublasLtApi*> g_status_names{nullptr};

absl::StatusOr<const CublasLtApi*> Load() {
  const absl::string_view sonames[] = {"libcublasLt.so.13", "libcublasLt.so"};
  absl::StatusOr<DynamicLibrary> library = DynamicLibrary::Open(
      CudaToolkitLibraryCandidates(sonames), "cuBLASLt (libcublasLt)");
  if (!library.ok()) return library.status();
  auto* api = new CublasLtApi;  // process-lifetime, like the library
  api->library_path = library->path();
#define GJ_CUBLASLT_RESOLVE(name, signature)                        \
  {                                                                 \
    absl::StatusOr<void*> address = library->RequiredSymbol(#name); \
    if (!address.ok()) return address.status();                     \
    api->name = reinterpret_cast<decltype(api->name)>(*address);    \
  }
  GJ_CUBLASLT_FUNCTIONS(GJ_CUBLASLT_RESOLVE)
#undef GJ_CUBLASLT_RESOLVE
  g_status_names.store(api, std::memory_order_release);
  api->version = api->cublasLtGetVersion();
  return api;
}

absl::StatusCode CodeFor(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::StatusCode::kResourceExhausted;
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::StatusCode::kInvalidArgument;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return absl::StatusCode::kUnimplemented;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

static std::atomic<const CublasLtApi*> g_installed{nullptr};

absl::StatusOr<const CublasLtApi*> CublasLtApi::Get() {
  if (const CublasLtApi* installed =
          g_installed.load(std::memory_order_acquire)) {
    return installed;
  }
  static const auto* const kApi =
      new absl::StatusOr<const CublasLtApi*>(Load());
  return *kApi;
}

void CublasLtApi::InstallForTesting(const CublasLtApi* api) {
  if (api != nullptr) g_status_names.store(api, std::memory_order_release);
  g_installed.store(api, std::memory_order_release);
}

absl::Status CublasLtStatus(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const CublasLtApi* api = g_status_names.load(std::memory_order_acquire);
  const char* name =
      api != nullptr ? api->cublasLtGetStatusName(status) : nullptr;
  const char* text =
      api != nullptr ? api->cublasLtGetStatusString(status) : nullptr;
  std::string message =
      name != nullptr
          ? absl::StrCat(what, ": ", name)
          : absl::StrCat(what, ": cublasStatus_t ", static_cast<int>(status));
  if (text != nullptr) absl::StrAppend(&message, " (", text, ")");
  return absl::Status(CodeFor(status), message);
}

}  // namespace guardjit
