#ifndef GUARDJIT_BINDINGS_TRITON_CUDA_DEVICE_H_
#define GUARDJIT_BINDINGS_TRITON_CUDA_DEVICE_H_

// What a KIND_GPU instance does with CUDA around guardjit's calls: its own
// stream in the device's primary context (the context guardjit runs CUDA
// calls in), device buffers that requests' inputs are gathered into, and
// the copies between Triton's buffers (CPU, pinned or GPU memory) and the
// device. libcuda is loaded with dlopen, as guardjit loads it, so the
// backend loads on machines without a GPU and a KIND_GPU instance there
// fails to load naming why. Not thread-safe: one instance's thread uses it.

#include <cstdint>
#include <memory>
#include <vector>

#include "bindings/triton/triton_api.h"

namespace guardjit_triton {

struct CudaDriverApi;

class CudaDevice {
 public:
  // Opens CUDA ordinal `device_id`. UNSUPPORTED naming the cause where
  // libcuda does not load or initialize, INVALID_ARG for an ordinal the
  // driver does not have.
  static TRITONSERVER_Error* Open(int32_t device_id,
                                  std::unique_ptr<CudaDevice>* out);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  int32_t id() const { return id_; }
  // The instance's CUstream, for gj_call_options.stream.
  void* stream() const { return stream_; }

  // Device buffer number `slot`, at least `bytes` long (grown as needed; its
  // contents are not kept when it grows). Stable between calls that need no
  // more, so reduce-overhead replays see the same addresses.
  TRITONSERVER_Error* Buffer(size_t slot, uint64_t bytes, void** out);
  // Enqueues a copy of `bytes` from `src` (in `src_memory`) to device memory.
  TRITONSERVER_Error* CopyIn(void* dst, const void* src, uint64_t bytes,
                             TRITONSERVER_MemoryType src_memory);
  // Enqueues a copy of `bytes` from device memory to `dst` (in `dst_memory`).
  TRITONSERVER_Error* CopyOut(void* dst, TRITONSERVER_MemoryType dst_memory,
                              const void* src, uint64_t bytes);
  // Waits for everything enqueued on the stream.
  TRITONSERVER_Error* Synchronize();

 private:
  CudaDevice(const CudaDriverApi* api, int32_t id) : api_(api), id_(id) {}
  TRITONSERVER_Error* Check(int result, const char* what) const;

  const CudaDriverApi* api_;
  int32_t id_;
  int device_ = 0;           // CUdevice
  void* context_ = nullptr;  // CUcontext: the primary context, retained
  void* stream_ = nullptr;   // CUstream
  struct Allocation {
    uint64_t address = 0;  // CUdeviceptr
    uint64_t bytes = 0;
  };
  std::vector<Allocation> buffers_;
};

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_CUDA_DEVICE_H_
