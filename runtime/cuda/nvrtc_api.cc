#include "runtime/cuda/nvrtc_api.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/dynamic_library.h"

namespace guardjit {

namespace {

std::atomic<const NvrtcApi*> g_error_strings{nullptr};

absl::StatusOr<const NvrtcApi*> Load() {
  const absl::string_view sonames[] = {"libnvrtc.so.13", "libnvrtc.so"};
  absl::StatusOr<DynamicLibrary> library = DynamicLibrary::Open(
      CudaToolkitLibraryCandidates(sonames), "NVRTC (libnvrtc)");
  if (!library.ok()) return library.status();
  auto* api = new NvrtcApi;  // process-lifetime, like the library
  api->library_path = library->path();
#define GJ_NVRTC_RESOLVE(name, signature)                           \
  {                                                                 \
    absl::StatusOr<void*> address = library->RequiredSymbol(#name); \
    if (!address.ok()) return address.status();                     \
    api->name = reinterpret_cast<decltype(api->name)>(*address);    \
  }
  GJ_NVRTC_FUNCTIONS(GJ_NVRTC_RESOLVE)
#undef GJ_NVRTC_RESOLVE
  g_error_strings.store(api, std::memory_order_release);
  RETURN_IF_NVRTC_ERROR(api->nvrtcVersion(&api->major, &api->minor));
  int count = 0;
  RETURN_IF_NVRTC_ERROR(api->nvrtcGetNumSupportedArchs(&count));
  api->supported_archs.resize(count);
  RETURN_IF_NVRTC_ERROR(
      api->nvrtcGetSupportedArchs(api->supported_archs.data()));
  std::sort(api->supported_archs.begin(), api->supported_archs.end());
  if (api->supported_archs.empty()) {
    return absl::UnavailableError(
        absl::StrCat(api->library_path, " supports no GPU architecture"));
  }
  return api;
}

absl::StatusCode CodeFor(nvrtcResult result) {
  switch (result) {
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_INVALID_INPUT:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::StatusOr<const NvrtcApi*> NvrtcApi::Get() {
  static const auto* const kApi = new absl::StatusOr<const NvrtcApi*>(Load());
  return *kApi;
}

absl::Status NvrtcStatus(nvrtcResult result, absl::string_view what) {
  if (result == NVRTC_SUCCESS) return absl::OkStatus();
  const NvrtcApi* api = g_error_strings.load(std::memory_order_acquire);
  const char* name =
      api != nullptr ? api->nvrtcGetErrorString(result) : nullptr;
  return absl::Status(CodeFor(result),
                      name != nullptr ? absl::StrCat(what, ": ", name)
                                      : absl::StrCat(what, ": nvrtcResult ",
                                                     static_cast<int>(result)));
}

}  // namespace guardjit
