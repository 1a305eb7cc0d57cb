#include "runtime/cuda/cuda_driver.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cuda/dynamic_library.h"

namespace guardjit {

namespace {

// Set once the error-name functions are resolved (before cuInit, whose
// failure needs them), so CudaStatus can name errors from then on.
std::atomic<const CudaDriver*> g_error_names{nullptr};

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:  // an ordinal past the device count
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::StatusOr<const CudaDriver*> Load() {
  const std::vector<std::string> candidates = {"libcuda.so.1", "libcuda.so"};
  absl::StatusOr<DynamicLibrary> library =
      DynamicLibrary::Open(candidates, "the CUDA driver (libcuda)");
  if (!library.ok()) return library.status();
  // Leaked on purpose: the table lives as long as the process, like the
  // library it points into, and is never torn down under a late caller.
  auto* driver = new CudaDriver;
  driver->library_path = library->path();
#define GJ_CUDA_DRIVER_RESOLVE(name, symbol, signature)                \
  {                                                                    \
    absl::StatusOr<void*> address = library->RequiredSymbol(#symbol);  \
    if (!address.ok()) return address.status();                        \
    driver->name = reinterpret_cast<decltype(driver->name)>(*address); \
  }
  GJ_CUDA_DRIVER_FUNCTIONS(GJ_CUDA_DRIVER_RESOLVE)
#undef GJ_CUDA_DRIVER_RESOLVE
  g_error_names.store(driver, std::memory_order_release);
  const CUresult init = driver->cuInit(0);
  if (init != CUDA_SUCCESS) {
    const absl::Status status = CudaStatus(init, "cuInit(0)");
    return absl::UnavailableError(
        absl::StrCat("the CUDA driver (", driver->library_path,
                     ") did not initialize: ", status.message()));
  }
  RETURN_IF_CUDA_ERROR(driver->cuDriverGetVersion(&driver->driver_version));
  return driver;
}

}  // namespace

static std::atomic<const CudaDriver*> g_installed{nullptr};

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  if (const CudaDriver* installed =
          g_installed.load(std::memory_order_acquire)) {
    return installed;
  }
  static const auto* const kDriver =
      new absl::StatusOr<const CudaDriver*>(Load());
  return *kDriver;
}

void CudaDriver::InstallForTesting(const CudaDriver* driver) {
  if (driver != nullptr) g_error_names.store(driver, std::memory_order_release);
  g_installed.store(driver, std::memory_order_release);
}

absl::Status CudaStatus(CUresult result, absl::string_view what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* text = nullptr;
  if (const CudaDriver* driver =
          g_error_names.load(std::memory_order_acquire)) {
    if (driver->cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (driver->cuGetErrorString(result, &text) != CUDA_SUCCESS) {
      text = nullptr;
    }
  }
  std::string message =
      name != nullptr
          ? absl::StrCat(what, ": ", name)
          : absl::StrCat(what, ": CUresult ", static_cast<int>(result));
  if (text != nullptr) absl::StrAppend(&message, " (", text, ")");
  return absl::Status(CodeFor(result), message);
}

}  // namespace guardjit
