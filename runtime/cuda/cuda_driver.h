#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_

// The CUDA driver API, loaded at run time. guardjit never links libcuda: the
// library builds, links and runs its CPU paths on machines with no GPU or
// driver, and a host that never passes a CUDA tensor never loads the driver.
// The first CudaDriver::Get() dlopens libcuda.so.1 (then libcuda.so),
// resolves every function below and calls cuInit(0); later calls return the
// same table or the same error.
//
// The build needs no CUDA headers: the types are declared in
// cuda_driver_types.h and each function's signature below, as CUDA 13's
// cuda.h declares them. A member is named as cuda.h spells the API and
// resolved by the versioned symbol cuda.h's macros map that name to
// (`driver->cuMemAlloc(...)` calls cuMemAlloc_v2): exactly the ABI a host
// compiled against cuda.h calls (the legacy default stream: guardjit does not
// define CUDA_API_PER_THREAD_DEFAULT_STREAM, so a NULL stream means what it
// means to a host on the CUDA runtime).

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cuda_driver_types.h"

namespace guardjit {

// The driver functions guardjit calls, one X(member, symbol, signature) each:
// the member's name, the symbol libcuda exports for it, and its type. Adding a
// function here is all it takes to call it through CudaDriver (and
// tests/runtime/cuda/cuda_toolkit_abi_test.cc checks the symbol and signature
// against cuda.h).
// clang-format off
#define GJ_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorName, cuGetErrorName, CUresult(CUresult, const char**)) \
  X(cuGetErrorString, cuGetErrorString, CUresult(CUresult, const char**)) \
  X(cuInit, cuInit, CUresult(unsigned int)) \
  X(cuDriverGetVersion, cuDriverGetVersion, CUresult(int*)) \
  X(cuDeviceGet, cuDeviceGet, CUresult(CUdevice*, int)) \
  X(cuDeviceGetCount, cuDeviceGetCount, CUresult(int*)) \
  X(cuDeviceGetName, cuDeviceGetName, CUresult(char*, int, CUdevice)) \
  X(cuDeviceGetAttribute, cuDeviceGetAttribute, CUresult(int*, CUdevice_attribute, CUdevice)) \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2, CUresult(size_t*, CUdevice)) \
  X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult(CUcontext*, CUdevice)) \
  X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, CUresult(CUdevice)) \
  X(cuCtxGetCurrent, cuCtxGetCurrent, CUresult(CUcontext*)) \
  X(cuCtxSetCurrent, cuCtxSetCurrent, CUresult(CUcontext)) \
  X(cuCtxPushCurrent, cuCtxPushCurrent_v2, CUresult(CUcontext)) \
  X(cuCtxPopCurrent, cuCtxPopCurrent_v2, CUresult(CUcontext*)) \
  X(cuModuleLoadData, cuModuleLoadData, CUresult(CUmodule*, const void*)) \
  X(cuModuleUnload, cuModuleUnload, CUresult(CUmodule)) \
  X(cuModuleGetFunction, cuModuleGetFunction, CUresult(CUfunction*, CUmodule, const char*)) \
  X(cuFuncGetAttribute, cuFuncGetAttribute, CUresult(int*, CUfunction_attribute, CUfunction)) \
  X(cuFuncSetAttribute, cuFuncSetAttribute, CUresult(CUfunction, CUfunction_attribute, int)) \
  X(cuLaunchKernel, cuLaunchKernel, CUresult(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void**, void**)) \
  X(cuMemAlloc, cuMemAlloc_v2, CUresult(CUdeviceptr*, size_t)) \
  X(cuMemFree, cuMemFree_v2, CUresult(CUdeviceptr)) \
  X(cuMemAllocAsync, cuMemAllocAsync, CUresult(CUdeviceptr*, size_t, CUstream)) \
  X(cuMemFreeAsync, cuMemFreeAsync, CUresult(CUdeviceptr, CUstream)) \
  X(cuMemHostAlloc, cuMemHostAlloc, CUresult(void**, size_t, unsigned int)) \
  X(cuMemFreeHost, cuMemFreeHost, CUresult(void*)) \
  X(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer_v2, CUresult(CUdeviceptr*, void*, unsigned int)) \
  X(cuMemcpyHtoD, cuMemcpyHtoD_v2, CUresult(CUdeviceptr, const void*, size_t)) \
  X(cuMemcpyDtoH, cuMemcpyDtoH_v2, CUresult(void*, CUdeviceptr, size_t)) \
  X(cuMemcpyDtoD, cuMemcpyDtoD_v2, CUresult(CUdeviceptr, CUdeviceptr, size_t)) \
  X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, CUresult(CUdeviceptr, const void*, size_t, CUstream)) \
  X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, CUresult(void*, CUdeviceptr, size_t, CUstream)) \
  X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
  X(cuMemsetD8, cuMemsetD8_v2, CUresult(CUdeviceptr, unsigned char, size_t)) \
  X(cuMemsetD8Async, cuMemsetD8Async, CUresult(CUdeviceptr, unsigned char, size_t, CUstream)) \
  X(cuMemsetD32Async, cuMemsetD32Async, CUresult(CUdeviceptr, unsigned int, size_t, CUstream)) \
  X(cuPointerGetAttribute, cuPointerGetAttribute, CUresult(void*, CUpointer_attribute, CUdeviceptr)) \
  X(cuStreamCreate, cuStreamCreate, CUresult(CUstream*, unsigned int)) \
  X(cuStreamDestroy, cuStreamDestroy_v2, CUresult(CUstream)) \
  X(cuStreamSynchronize, cuStreamSynchronize, CUresult(CUstream)) \
  X(cuStreamQuery, cuStreamQuery, CUresult(CUstream)) \
  X(cuStreamWaitEvent, cuStreamWaitEvent, CUresult(CUstream, CUevent, unsigned int)) \
  X(cuStreamBeginCapture, cuStreamBeginCapture_v2, CUresult(CUstream, CUstreamCaptureMode)) \
  X(cuStreamEndCapture, cuStreamEndCapture, CUresult(CUstream, CUgraph*)) \
  X(cuStreamIsCapturing, cuStreamIsCapturing, CUresult(CUstream, CUstreamCaptureStatus*)) \
  X(cuGraphInstantiate, cuGraphInstantiateWithFlags, CUresult(CUgraphExec*, CUgraph, unsigned long long)) \
  X(cuGraphLaunch, cuGraphLaunch, CUresult(CUgraphExec, CUstream)) \
  X(cuGraphGetNodes, cuGraphGetNodes, CUresult(CUgraph, CUgraphNode*, size_t*)) \
  X(cuGraphNodeGetType, cuGraphNodeGetType, CUresult(CUgraphNode, CUgraphNodeType*)) \
  X(cuGraphKernelNodeGetParams, cuGraphKernelNodeGetParams_v2, CUresult(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*)) \
  X(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams_v2, CUresult(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS*)) \
  X(cuGraphMemcpyNodeGetParams, cuGraphMemcpyNodeGetParams, CUresult(CUgraphNode, CUDA_MEMCPY3D*)) \
  X(cuGraphExecMemcpyNodeSetParams, cuGraphExecMemcpyNodeSetParams, CUresult(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D*, CUcontext)) \
  X(cuGraphExecUpdate, cuGraphExecUpdate_v2, CUresult(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo*)) \
  X(cuGraphExecDestroy, cuGraphExecDestroy, CUresult(CUgraphExec)) \
  X(cuGraphDestroy, cuGraphDestroy, CUresult(CUgraph)) \
  X(cuEventCreate, cuEventCreate, CUresult(CUevent*, unsigned int)) \
  X(cuEventRecord, cuEventRecord, CUresult(CUevent, CUstream)) \
  X(cuEventSynchronize, cuEventSynchronize, CUresult(CUevent)) \
  X(cuEventQuery, cuEventQuery, CUresult(CUevent)) \
  X(cuEventElapsedTime, cuEventElapsedTime_v2, CUresult(float*, CUevent, CUevent)) \
  X(cuEventDestroy, cuEventDestroy_v2, CUresult(CUevent))
// clang-format on

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

#define GJ_CUDA_DRIVER_MEMBER(name, symbol, signature) \
  std::add_pointer_t<signature> name = nullptr;
  GJ_CUDA_DRIVER_FUNCTIONS(GJ_CUDA_DRIVER_MEMBER)
#undef GJ_CUDA_DRIVER_MEMBER

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
    const ::guardjit::CUresult gj_cu_result_ = (expr);     \
    if (gj_cu_result_ != ::guardjit::CUDA_SUCCESS) {       \
      return ::guardjit::CudaStatus(gj_cu_result_, #expr); \
    }                                                      \
  } while (0)

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_DRIVER_H_
