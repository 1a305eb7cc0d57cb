#include "runtime/cuda/cuda_device.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace guardjit {

namespace {

// Ordinals past this are refused; no machine has that many devices.
constexpr int kMaxDevices = 64;

}  // namespace

absl::StatusOr<int> CudaDevice::Count() {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  int count = 0;
  RETURN_IF_CUDA_ERROR(driver->cuDeviceGetCount(&count));
  return count;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(
    const CudaDriver* driver, int ordinal) {
  CUdevice device = 0;
  RETURN_IF_CUDA_ERROR(driver->cuDeviceGet(&device, ordinal));
  CudaDeviceProperties p;
  char name[256] = {};
  RETURN_IF_CUDA_ERROR(
      driver->cuDeviceGetName(name, static_cast<int>(sizeof(name)), device));
  p.name = name;
  const std::pair<CUdevice_attribute, int*> attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &p.arch.major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &p.arch.minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p.multiprocessor_count},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &p.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
       &p.max_threads_per_multiprocessor},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &p.max_registers_per_block},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &p.warp_size},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
       &p.max_shared_memory_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &p.max_shared_memory_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
       &p.max_shared_memory_per_multiprocessor},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &p.max_grid_dim_x},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &p.max_grid_dim_y},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &p.max_grid_dim_z},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &p.l2_cache_bytes},
  };
  for (const auto& [attribute, value] : attributes) {
    const CUresult result =
        driver->cuDeviceGetAttribute(value, attribute, device);
    if (result != CUDA_SUCCESS) {
      return CudaStatus(result, absl::StrCat("cuDeviceGetAttribute(",
                                             static_cast<int>(attribute),
                                             ") of device ", ordinal));
    }
  }
  RETURN_IF_CUDA_ERROR(driver->cuDeviceTotalMem(&p.total_memory_bytes, device));
  return std::unique_ptr<CudaDevice>(
      new CudaDevice(driver, ordinal, device, std::move(p)));
}

absl::StatusOr<const CudaDevice*> CudaDevice::Get(int ordinal) {
  // Devices live for the process (never destroyed: a late caller, or a
  // static destructor unloading kernels, must still find them).
  static std::array<std::atomic<const CudaDevice*>, kMaxDevices> devices{};
  static std::mutex* const create_mu = new std::mutex;
  if (ordinal >= 0 && ordinal < kMaxDevices) {
    if (const CudaDevice* device =
            devices[ordinal].load(std::memory_order_acquire)) {
      return device;
    }
  }
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  ASSIGN_OR_RETURN(const int count, Count());
  if (ordinal < 0 || ordinal >= count || ordinal >= kMaxDevices) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA device ", ordinal, " does not exist: the driver ",
                     "sees ", count, count == 1 ? " device" : " devices"));
  }
  std::lock_guard<std::mutex> lock(*create_mu);
  if (const CudaDevice* device =
          devices[ordinal].load(std::memory_order_acquire)) {
    return device;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, Create(driver, ordinal));
  const CudaDevice* created = device.release();
  devices[ordinal].store(created, std::memory_order_release);
  return created;
}

absl::StatusOr<CUcontext> CudaDevice::PrimaryContext() const {
  if (CUcontext context = primary_.load(std::memory_order_acquire)) {
    return context;
  }
  std::lock_guard<std::mutex> lock(context_mu_);
  if (context_ == nullptr) {
    ASSIGN_OR_RETURN(CudaPrimaryContext context,
                     CudaPrimaryContext::Retain(ordinal_));
    context_ = std::make_unique<CudaPrimaryContext>(std::move(context));
    primary_.store(context_->get(), std::memory_order_release);
  }
  return context_->get();
}

absl::StatusOr<CudaContextScope> CudaDevice::MakeCurrent() const {
  ASSIGN_OR_RETURN(CUcontext context, PrimaryContext());
  return CudaContextScope::Enter(*driver_, context);
}

}  // namespace guardjit
