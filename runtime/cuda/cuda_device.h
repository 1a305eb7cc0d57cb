#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_DEVICE_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_DEVICE_H_

// A CUDA device as guardjit's code generator and launcher see it. Properties
// are read once per device per process (each cuDeviceGetAttribute is a driver
// call; launch configuration needs them on every compile). The device's
// primary context is retained on first use and kept for the process's life,
// as the CUDA runtime does: releasing it while modules or allocations of
// guardjit live in it would destroy them under a cached entry.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cuda/cuda_arch.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_driver.h"

namespace guardjit {

struct CudaDeviceProperties {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  CudaArch arch;     // compute capability
  int multiprocessor_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int max_registers_per_block = 0;
  int warp_size = 0;
  // Static + dynamic shared memory a block gets by default (48 KiB), and the
  // most it can opt into with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
  int max_shared_memory_per_block = 0;
  int max_shared_memory_per_block_optin = 0;
  int max_shared_memory_per_multiprocessor = 0;
  int max_grid_dim_x = 0;
  int max_grid_dim_y = 0;
  int max_grid_dim_z = 0;
  int l2_cache_bytes = 0;
  size_t total_memory_bytes = 0;
};

class CudaDevice {
 public:
  // Devices the driver sees; UNAVAILABLE where the driver is not usable.
  static absl::StatusOr<int> Count();

  // The process-wide device `ordinal` (0-based, as DLDevice.device_id and
  // cuDeviceGet number them), its properties read on the first call.
  // INVALID_ARGUMENT for an ordinal out of range. Thread-safe.
  static absl::StatusOr<const CudaDevice*> Get(int ordinal);

  int ordinal() const { return ordinal_; }
  CUdevice handle() const { return device_; }
  const CudaDeviceProperties& properties() const { return properties_; }
  const CudaDriver& driver() const { return *driver_; }

  // The device's primary context, retained on the first call (which creates
  // it if no one has: ~hundreds of MB of device memory and tens of ms) and
  // held for the process's life. Thread-safe.
  absl::StatusOr<CUcontext> PrimaryContext() const;

  // Makes the primary context current on this thread for the scope.
  absl::StatusOr<CudaContextScope> MakeCurrent() const;

 private:
  CudaDevice(const CudaDriver* driver, int ordinal, CUdevice device,
             CudaDeviceProperties properties)
      : driver_(driver),
        ordinal_(ordinal),
        device_(device),
        properties_(std::move(properties)) {}
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Create(
      const CudaDriver* driver, int ordinal);

  const CudaDriver* driver_;
  int ordinal_;
  CUdevice device_;
  CudaDeviceProperties properties_;
  mutable std::mutex context_mu_;
  // Set once under context_mu_; `primary_` is read without it.
  mutable std::unique_ptr<CudaPrimaryContext> context_;
  mutable std::atomic<CUcontext> primary_{nullptr};
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_DEVICE_H_
