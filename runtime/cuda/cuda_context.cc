#include "runtime/cuda/cuda_context.h"

#include <utility>

namespace guardjit {

absl::StatusOr<CudaContextScope> CudaContextScope::Enter(
    const CudaDriver& driver, CUcontext context) {
  CUcontext current = nullptr;
  RETURN_IF_CUDA_ERROR(driver.cuCtxGetCurrent(&current));
  if (current == context) return CudaContextScope(nullptr);
  RETURN_IF_CUDA_ERROR(driver.cuCtxPushCurrent(context));
  return CudaContextScope(&driver);
}

CudaContextScope::~CudaContextScope() {
  if (driver_ == nullptr) return;
  CUcontext popped = nullptr;
  // A destructor cannot report; a failed pop leaves the context current on
  // this thread, which the next scope's cuCtxGetCurrent sees.
  (void)driver_->cuCtxPopCurrent(&popped);
}

absl::StatusOr<CudaPrimaryContext> CudaPrimaryContext::Retain(int ordinal) {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (!driver.ok()) return driver.status();
  CUdevice device = 0;
  RETURN_IF_CUDA_ERROR((*driver)->cuDeviceGet(&device, ordinal));
  CUcontext context = nullptr;
  RETURN_IF_CUDA_ERROR((*driver)->cuDevicePrimaryCtxRetain(&context, device));
  return CudaPrimaryContext(*driver, device, ordinal, context);
}

void CudaPrimaryContext::Release() {
  if (context_ == nullptr) return;
  (void)driver_->cuDevicePrimaryCtxRelease(device_);
  context_ = nullptr;
}

absl::StatusOr<CudaContextScope> CudaPrimaryContext::MakeCurrent() const {
  return CudaContextScope::Enter(*driver_, context_);
}

CudaContextScope::CudaContextScope(CudaContextScope&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)) {}

CudaPrimaryContext::CudaPrimaryContext(CudaPrimaryContext&& other) noexcept
    : driver_(other.driver_),
      device_(other.device_),
      ordinal_(other.ordinal_),
      context_(std::exchange(other.context_, nullptr)) {}

CudaPrimaryContext& CudaPrimaryContext::operator=(
    CudaPrimaryContext&& other) noexcept {
  if (this != &other) {
    Release();
    driver_ = other.driver_;
    device_ = other.device_;
    ordinal_ = other.ordinal_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

CudaPrimaryContext::~CudaPrimaryContext() { Release(); }

}  // namespace guardjit
