#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_

// The CUDA driver API, loaded at run time. guardjit never links libcuda: the
// library builds, links and runs its CPU paths on machines with no GPU or
// driver, and a host that never passes a CUDA tensor never loads the driver.
// The first CudaDriver::Get() dlopens libcuda.so.1 (then libcuda.so),
// resolves every function below and calls cuInit(0); later calls return the
// same table or the same error.
//
// The table's members are spelled as cuda.h spells the API, its macros
// included: cuda.h #defines cuMemAlloc as cuMemAlloc_v2, so
// `driver->cuMemAlloc(...)` calls the member cuMemAlloc_v2, which was resolved
// by that versioned name: exactly the ABI the header declares (the legacy
// default stream: guardjit does not define CUDA_API_PER_THREAD_DEFAULT_STREAM,
// so a NULL stream means what it means to a host on the CUDA runtime).
//
// Without the CUDA headers (GUARDJIT_HAVE_CUDA_HEADERS unset in the generated
// runtime/cuda/cuda_config.h) the table is empty and Get() is UNAVAILABLE;
// code that calls through the table is compiled only with the headers.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cuda_config.h"

#ifdef GUARDJIT_HAVE_CUDA_HEADERS
#include <cuda.h>
#else
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef unsigned long long CUdeviceptr;
#endif

namespace guardjit {

// The driver functions guardjit calls, one X(name) each. Adding a function
// here is all it takes to call it through CudaDriver.
#define GJ_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)               \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuDeviceGet)                    \
  X(cuDeviceGetCount)               \
  X(cuDeviceGetName)                \
  X(cuDeviceGetAttribute)           \
  X(cuDeviceTotalMem)               \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease)      \
  X(cuCtxGetCurrent)                \
  X(cuCtxSetCurrent)                \
  X(cuCtxPushCurrent)               \
  X(cuCtxPopCurrent)                \
  X(cuModuleLoadData)               \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuFuncGetAttribute)             \
  X(cuFuncSetAttribute)             \
  X(cuLaunchKernel)                 \
  X(cuMemAlloc)                     \
  X(cuMemFree)                      \
  X(cuMemAllocAsync)                \
  X(cuMemFreeAsync)                 \
  X(cuMemHostAlloc)                 \
  X(cuMemFreeHost)                  \
  X(cuMemHostGetDevicePointer)      \
  X(cuMemcpyHtoD)                   \
  X(cuMemcpyDtoH)                   \
  X(cuMemcpyDtoD)                   \
  X(cuMemcpyHtoDAsync)              \
  X(cuMemcpyDtoHAsync)              \
  X(cuMemcpyDtoDAsync)              \
  X(cuMemsetD8)                     \
  X(cuMemsetD8Async)                \
  X(cuMemsetD32Async)               \
  X(cuPointerGetAttribute)          \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy)                \
  X(cuStreamSynchronize)            \
  X(cuStreamQuery)                  \
  X(cuStreamWaitEvent)              \
  X(cuStreamBeginCapture)           \
  X(cuStreamEndCapture)             \
  X(cuStreamIsCapturing)            \
  X(cuGraphInstantiate)             \
  X(cuGraphLaunch)                  \
  X(cuGraphGetNodes)                \
  X(cuGraphNodeGetType)             \
  X(cuGraphKernelNodeGetParams)     \
  X(cuGraphExecKernelNodeSetParams) \
  X(cuGraphMemcpyNodeGetParams)     \
  X(cuGraphExecMemcpyNodeSetParams) \
  X(cuGraphExecUpdate)              \
  X(cuGraphExecDestroy)             \
  X(cuGraphDestroy)                 \
  X(cuEventCreate)                  \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventQuery)                   \
  X(cuEventElapsedTime)             \
  X(cuEventDestroy)

// The loaded driver: one function pointer per GJ_CUDA_DRIVER_FUNCTIONS entry,
// all non-null. Immutable after loading, so any thread may call through it.
struct CudaDriver {
  // The process-wide table, loaded on the first call (thread-safe). Errors,
  // all UNAVAILABLE: libcuda not found (the message names the library and
  // dlerror()), a function missing from it, or cuInit failing (no device,
  // driver older than the kernel module: the CUresult's name and string).
  static absl::StatusOr<const CudaDriver*> Get();

  // Tests: makes Get() return `driver` (a software device such as
  // EmulatedCudaDriver's) for the rest of the process, whatever libcuda
  // says. Call before anything uses CUDA: devices read through the table
  // keep the driver they were first read with.
  static void InstallForTesting(const CudaDriver* driver);

#ifdef GUARDJIT_HAVE_CUDA_HEADERS
#define GJ_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  GJ_CUDA_DRIVER_FUNCTIONS(GJ_CUDA_DRIVER_MEMBER)
#undef GJ_CUDA_DRIVER_MEMBER
#endif

  int driver_version = 0;    // cuDriverGetVersion: 13000 is CUDA 13.0
  std::string library_path;  // the libcuda the loader opened
  // A software device (testing/cuda/emulated_driver.h): cuModuleLoadData
  // takes the module's CUDA C source, NUL-terminated, where a real driver
  // takes the CUBIN NVRTC made of it.
  bool loads_cuda_source = false;
};

// `what` failed with `result`, as a Status whose message carries the error's
// name and string ("cuMemAlloc(1024): CUDA_ERROR_OUT_OF_MEMORY (out of
// memory)"); OK for CUDA_SUCCESS. Out of memory is RESOURCE_EXHAUSTED, an
// invalid value INVALID_ARGUMENT, no device or driver UNAVAILABLE, anything
// else INTERNAL. Before the driver is loaded the message has the number.
absl::Status CudaStatus(CUresult result, absl::string_view what);

}  // namespace guardjit

// Evaluates a driver call and returns its error, described by the call's own
// text, from the enclosing function:
//   RETURN_IF_CUDA_ERROR(driver->cuMemAlloc(&ptr, bytes));
#define RETURN_IF_CUDA_ERROR(expr)                         \
  do {                                                     \
    const CUresult gj_cu_result_ = (expr);                 \
    if (gj_cu_result_ != 0) {                              \
      return ::guardjit::CudaStatus(gj_cu_result_, #expr); \
    }                                                      \
  } while (0)

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_
