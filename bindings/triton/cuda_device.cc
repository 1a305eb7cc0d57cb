#include "bindings/triton/cuda_device.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "bindings/triton/errors.h"

namespace guardjit_triton {

// The driver entry points the backend calls, by their versioned symbols
// (the ABI names cuda.h maps its macros to).
struct CudaDriverApi {
  using Ptr = unsigned long long;  // CUdeviceptr
  int (*cuInit)(unsigned);
  int (*cuGetErrorName)(int, const char**);
  int (*cuDeviceGetCount)(int*);
  int (*cuDeviceGet)(int*, int);
  int (*cuDevicePrimaryCtxRetain)(void**, int);
  int (*cuDevicePrimaryCtxRelease)(int);
  int (*cuCtxPushCurrent)(void*);
  int (*cuCtxPopCurrent)(void**);
  int (*cuStreamCreate)(void**, unsigned);
  int (*cuStreamDestroy)(void*);
  int (*cuStreamSynchronize)(void*);
  int (*cuMemAlloc)(Ptr*, size_t);
  int (*cuMemFree)(Ptr);
  int (*cuMemcpyHtoDAsync)(Ptr, const void*, size_t, void*);
  int (*cuMemcpyDtoHAsync)(void*, Ptr, size_t, void*);
  int (*cuMemcpyAsync)(Ptr, Ptr, size_t, void*);  // unified addressing
  std::string load_error;  // why the table is unusable; empty when it is
};

namespace {

constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING

CudaDriverApi* LoadDriver() {
  auto* api = new CudaDriverApi{};
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    api->load_error = std::string(
                          "the CUDA driver (libcuda.so.1) does not "
                          "load: ") +
                      (why != nullptr ? why : "unknown dlopen error");
    return api;
  }
  bool missing = false;
  auto resolve = [&](auto*& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(library, symbol));
    if (fn == nullptr && !missing) {
      missing = true;
      api->load_error =
          std::string("the CUDA driver has no ") + symbol + " (too old?)";
    }
  };
  resolve(api->cuInit, "cuInit");
  resolve(api->cuGetErrorName, "cuGetErrorName");
  resolve(api->cuDeviceGetCount, "cuDeviceGetCount");
  resolve(api->cuDeviceGet, "cuDeviceGet");
  resolve(api->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(api->cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  resolve(api->cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  resolve(api->cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  resolve(api->cuStreamCreate, "cuStreamCreate");
  resolve(api->cuStreamDestroy, "cuStreamDestroy_v2");
  resolve(api->cuStreamSynchronize, "cuStreamSynchronize");
  resolve(api->cuMemAlloc, "cuMemAlloc_v2");
  resolve(api->cuMemFree, "cuMemFree_v2");
  resolve(api->cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  resolve(api->cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  resolve(api->cuMemcpyAsync, "cuMemcpyAsync");
  if (missing) return api;
  const int init = api->cuInit(0);
  if (init != 0) {
    const char* name = nullptr;
    if (api->cuGetErrorName(init, &name) != 0) name = nullptr;
    api->load_error = "cuInit(0) failed: " +
                      (name != nullptr ? std::string(name)
                                       : "CUresult " + std::to_string(init));
  }
  return api;
}

// The process's driver table, loaded once; leaked like the library.
const CudaDriverApi* Driver() {
  static const CudaDriverApi* const kApi = LoadDriver();
  return kApi;
}

// The device's primary context current on this thread for a scope.
class ScopedContext {
 public:
  ScopedContext(const CudaDriverApi* api, void* context) : api_(api) {
    ok_ = api_->cuCtxPushCurrent(context) == 0;
  }
  ~ScopedContext() {
    void* popped = nullptr;
    if (ok_) api_->cuCtxPopCurrent(&popped);
  }
  bool ok() const { return ok_; }

 private:
  const CudaDriverApi* api_;
  bool ok_;
};

}  // namespace

TRITONSERVER_Error* CudaDevice::Check(int result, const char* what) const {
  if (result == 0) return nullptr;
  const char* name = nullptr;
  if (api_->cuGetErrorName(result, &name) != 0) name = nullptr;
  return Error(TRITONSERVER_ERROR_INTERNAL,
               std::string(what) + " on CUDA device " + std::to_string(id_) +
                   ": " +
                   (name != nullptr ? std::string(name)
                                    : "CUresult " + std::to_string(result)));
}

TRITONSERVER_Error* CudaDevice::Open(int32_t device_id,
                                     std::unique_ptr<CudaDevice>* out) {
  const CudaDriverApi* api = Driver();
  if (!api->load_error.empty()) {
    return Error(TRITONSERVER_ERROR_UNSUPPORTED, api->load_error);
  }
  int count = 0;
  if (api->cuDeviceGetCount(&count) != 0) count = 0;
  if (device_id < 0 || device_id >= count) {
    return Error(TRITONSERVER_ERROR_INVALID_ARG,
                 "CUDA device " + std::to_string(device_id) +
                     " does not exist: the driver has " +
                     std::to_string(count));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(api, device_id));
  GJ_TRITON_RETURN_IF_ERROR(device->Check(
      api->cuDeviceGet(&device->device_, device_id), "cuDeviceGet"));
  GJ_TRITON_RETURN_IF_ERROR(device->Check(
      api->cuDevicePrimaryCtxRetain(&device->context_, device->device_),
      "cuDevicePrimaryCtxRetain"));
  ScopedContext scope(api, device->context_);
  if (!scope.ok()) {
    return Error(
        TRITONSERVER_ERROR_INTERNAL,
        "cuCtxPushCurrent failed on CUDA device " + std::to_string(device_id));
  }
  GJ_TRITON_RETURN_IF_ERROR(
      device->Check(api->cuStreamCreate(&device->stream_, kStreamNonBlocking),
                    "cuStreamCreate"));
  *out = std::move(device);
  return nullptr;
}

CudaDevice::~CudaDevice() {
  if (context_ == nullptr) return;
  {
    ScopedContext scope(api_, context_);
    if (scope.ok()) {
      if (stream_ != nullptr) {
        api_->cuStreamSynchronize(stream_);
        api_->cuStreamDestroy(stream_);
      }
      for (const Allocation& a : buffers_) {
        if (a.address != 0) api_->cuMemFree(a.address);
      }
    }
  }
  api_->cuDevicePrimaryCtxRelease(device_);
}

TRITONSERVER_Error* CudaDevice::Buffer(size_t slot, uint64_t bytes,
                                       void** out) {
  if (buffers_.size() <= slot) buffers_.resize(slot + 1);
  Allocation& a = buffers_[slot];
  if (a.bytes < bytes || a.address == 0) {
    ScopedContext scope(api_, context_);
    // The old buffer may still be read by work on the stream.
    GJ_TRITON_RETURN_IF_ERROR(
        Check(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize"));
    if (a.address != 0) api_->cuMemFree(a.address);
    a = Allocation{};
    const uint64_t size = std::max<uint64_t>(bytes, 256);
    CudaDriverApi::Ptr address = 0;
    GJ_TRITON_RETURN_IF_ERROR(
        Check(api_->cuMemAlloc(&address, size),
              ("cuMemAlloc(" + std::to_string(size) + " bytes)").c_str()));
    a = Allocation{address, size};
  }
  *out = reinterpret_cast<void*>(static_cast<uintptr_t>(a.address));
  return nullptr;
}

TRITONSERVER_Error* CudaDevice::CopyIn(void* dst, const void* src,
                                       uint64_t bytes,
                                       TRITONSERVER_MemoryType src_memory) {
  if (bytes == 0) return nullptr;
  ScopedContext scope(api_, context_);
  const auto d =
      static_cast<CudaDriverApi::Ptr>(reinterpret_cast<uintptr_t>(dst));
  if (src_memory == TRITONSERVER_MEMORY_GPU) {
    // The request's GPU may be another one: cuMemcpyAsync reads the
    // devices from the pointers (unified addressing).
    return Check(api_->cuMemcpyAsync(d,
                                     static_cast<CudaDriverApi::Ptr>(
                                         reinterpret_cast<uintptr_t>(src)),
                                     bytes, stream_),
                 "cuMemcpyAsync");
  }
  return Check(api_->cuMemcpyHtoDAsync(d, src, bytes, stream_),
               "cuMemcpyHtoDAsync");
}

TRITONSERVER_Error* CudaDevice::CopyOut(void* dst,
                                        TRITONSERVER_MemoryType dst_memory,
                                        const void* src, uint64_t bytes) {
  if (bytes == 0) return nullptr;
  ScopedContext scope(api_, context_);
  const auto s =
      static_cast<CudaDriverApi::Ptr>(reinterpret_cast<uintptr_t>(src));
  if (dst_memory == TRITONSERVER_MEMORY_GPU) {
    return Check(api_->cuMemcpyAsync(static_cast<CudaDriverApi::Ptr>(
                                         reinterpret_cast<uintptr_t>(dst)),
                                     s, bytes, stream_),
                 "cuMemcpyAsync");
  }
  return Check(api_->cuMemcpyDtoHAsync(dst, s, bytes, stream_),
               "cuMemcpyDtoHAsync");
}

TRITONSERVER_Error* CudaDevice::Synchronize() {
  ScopedContext scope(api_, context_);
  return Check(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

}  // namespace guardjit_triton
