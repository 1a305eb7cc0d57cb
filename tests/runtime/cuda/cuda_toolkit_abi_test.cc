// guardjit's declarations of the CUDA driver, NVRTC and cuBLASLt APIs
// (runtime/cuda/cuda_driver_types.h, cuda_driver.h, nvrtc_api.h,
// cublaslt_types.h, cublaslt_api.h) against the toolkit's own cuda.h, nvrtc.h
// and cublasLt.h: every function's signature and exported symbol, every
// declared enumerator's value, every struct's size and fields. Compile-time
// checks: tests/CMakeLists.txt compiles this file where the toolkit's headers
// are found, and a declaration that differs fails the build.

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_api.h"

// cuda.h's flags are macros: our values, read before it defines them.
namespace {
constexpr unsigned int kOurHostAllocPortable =
    guardjit::CU_MEMHOSTALLOC_PORTABLE;
constexpr unsigned int kOurHostAllocDeviceMap =
    guardjit::CU_MEMHOSTALLOC_DEVICEMAP;
}  // namespace

#include <cublasLt.h>
#include <cuda.h>
#include <nvrtc.h>

static_assert(kOurHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(kOurHostAllocDeviceMap == CU_MEMHOSTALLOC_DEVICEMAP);

namespace guardjit {
namespace {

// Toolkit<T>: T with each of guardjit's CUDA types replaced by the toolkit's
// type of the same name, through pointers, const and function types; other
// types (int, size_t, CUdeviceptr's unsigned long long) stay.
template <typename T>
struct ToToolkit {
  using type = T;
};
template <typename T>
using Toolkit = typename ToToolkit<T>::type;
template <typename T>
struct ToToolkit<T*> {
  using type = Toolkit<T>*;
};
template <typename T>
struct ToToolkit<const T> {
  using type = const Toolkit<T>;
};
template <typename R, typename... A>
struct ToToolkit<R(A...)> {
  using type = Toolkit<R>(Toolkit<A>...);
};
// A struct tag guardjit only points to, and a complete type (an enum or a
// struct) whose size must agree too.
#define GJ_SAME_HANDLE(tag) \
  template <>               \
  struct ToToolkit<tag> {   \
    using type = ::tag;     \
  };
#define GJ_SAME_TYPE(name) \
  template <>              \
  struct ToToolkit<name> { \
    using type = ::name;   \
  };                       \
  static_assert(sizeof(name) == sizeof(::name), #name "'s size differs");

// cuda.h
GJ_SAME_HANDLE(CUctx_st)
GJ_SAME_HANDLE(CUstream_st)
GJ_SAME_HANDLE(CUevent_st)
GJ_SAME_HANDLE(CUmod_st)
GJ_SAME_HANDLE(CUfunc_st)
GJ_SAME_HANDLE(CUkern_st)
GJ_SAME_HANDLE(CUarray_st)
GJ_SAME_HANDLE(CUgraph_st)
GJ_SAME_HANDLE(CUgraphExec_st)
GJ_SAME_HANDLE(CUgraphNode_st)
GJ_SAME_TYPE(CUresult)
GJ_SAME_TYPE(CUdevice_attribute)
GJ_SAME_TYPE(CUfunction_attribute)
GJ_SAME_TYPE(CUpointer_attribute)
GJ_SAME_TYPE(CUmemorytype)
GJ_SAME_TYPE(CUstream_flags)
GJ_SAME_TYPE(CUevent_flags)
GJ_SAME_TYPE(CUstreamCaptureMode)
GJ_SAME_TYPE(CUstreamCaptureStatus)
GJ_SAME_TYPE(CUgraphNodeType)
GJ_SAME_TYPE(CUgraphExecUpdateResult)
GJ_SAME_TYPE(CUDA_KERNEL_NODE_PARAMS)
GJ_SAME_TYPE(CUDA_MEMCPY3D)
GJ_SAME_TYPE(CUgraphExecUpdateResultInfo)
// nvrtc.h
GJ_SAME_HANDLE(_nvrtcProgram)
GJ_SAME_TYPE(nvrtcResult)
// cublasLt.h, library_types.h
GJ_SAME_HANDLE(cublasLtContext)
GJ_SAME_HANDLE(cublasLtMatmulDescOpaque_t)
GJ_SAME_HANDLE(cublasLtMatrixLayoutOpaque_t)
GJ_SAME_HANDLE(cublasLtMatmulPreferenceOpaque_t)
GJ_SAME_TYPE(cublasStatus_t)
GJ_SAME_TYPE(cudaDataType_t)
GJ_SAME_TYPE(cublasComputeType_t)
GJ_SAME_TYPE(cublasOperation_t)
GJ_SAME_TYPE(cublasLtOrder_t)
GJ_SAME_TYPE(cublasLtPointerMode_t)
GJ_SAME_TYPE(cublasLtEpilogue_t)
GJ_SAME_TYPE(cublasLtMatmulDescAttributes_t)
GJ_SAME_TYPE(cublasLtMatrixLayoutAttribute_t)
GJ_SAME_TYPE(cublasLtMatmulPreferenceAttributes_t)
GJ_SAME_TYPE(cublasLtMatmulAlgo_t)
GJ_SAME_TYPE(cublasLtMatmulHeuristicResult_t)
#undef GJ_SAME_HANDLE
#undef GJ_SAME_TYPE

// The typedefs name the same types as the toolkit's.
static_assert(std::is_same_v<Toolkit<CUdevice>, ::CUdevice>);
static_assert(std::is_same_v<Toolkit<CUdeviceptr>, ::CUdeviceptr>);
static_assert(std::is_same_v<Toolkit<CUcontext>, ::CUcontext>);
static_assert(std::is_same_v<Toolkit<CUstream>, ::CUstream>);
static_assert(std::is_same_v<Toolkit<CUevent>, ::CUevent>);
static_assert(std::is_same_v<Toolkit<CUmodule>, ::CUmodule>);
static_assert(std::is_same_v<Toolkit<CUfunction>, ::CUfunction>);
static_assert(std::is_same_v<Toolkit<CUgraph>, ::CUgraph>);
static_assert(std::is_same_v<Toolkit<CUgraphExec>, ::CUgraphExec>);
static_assert(std::is_same_v<Toolkit<CUgraphNode>, ::CUgraphNode>);
static_assert(std::is_same_v<Toolkit<nvrtcProgram>, ::nvrtcProgram>);
static_assert(std::is_same_v<Toolkit<cublasLtHandle_t>, ::cublasLtHandle_t>);
static_assert(
    std::is_same_v<Toolkit<cublasLtMatmulDesc_t>, ::cublasLtMatmulDesc_t>);
static_assert(
    std::is_same_v<Toolkit<cublasLtMatrixLayout_t>, ::cublasLtMatrixLayout_t>);
static_assert(std::is_same_v<Toolkit<cublasLtMatmulPreference_t>,
                             ::cublasLtMatmulPreference_t>);
static_assert(std::is_same_v<Toolkit<cudaDataType>, ::cudaDataType>);
static_assert(std::is_same_v<Toolkit<cudaStream_t>, ::cudaStream_t>);

// Every function of the tables: the signature is the toolkit's, and the
// symbol resolved is the one the toolkit's macros map the name to
// (cuMemAlloc is cuMemAlloc_v2). In this file `name` expands as a host's
// code would see it; `symbol` is never a macro.
#define GJ_STRINGIFY_INNER_(x) #x
#define GJ_STRINGIFY_(x) GJ_STRINGIFY_INNER_(x)
#define GJ_SAME_DRIVER_FUNCTION(name, symbol, signature)                \
  static_assert(std::is_same_v<Toolkit<signature>, decltype(::symbol)>, \
                #symbol ": the declared signature is not cuda.h's");    \
  static_assert(std::string_view(#symbol) == GJ_STRINGIFY_(name),       \
                #symbol ": cuda.h calls a different symbol for this name");
GJ_CUDA_DRIVER_FUNCTIONS(GJ_SAME_DRIVER_FUNCTION)
#define GJ_SAME_FUNCTION(name, signature)                               \
  static_assert(std::is_same_v<Toolkit<signature>, decltype(::name)>,   \
                #name ": the declared signature is not the toolkit's"); \
  static_assert(std::string_view(#name) == GJ_STRINGIFY_(name),         \
                #name ": the toolkit's header renames it");
GJ_NVRTC_FUNCTIONS(GJ_SAME_FUNCTION)
GJ_CUBLASLT_FUNCTIONS(GJ_SAME_FUNCTION)
#undef GJ_SAME_DRIVER_FUNCTION
#undef GJ_SAME_FUNCTION

// Every enumerator guardjit declares has the toolkit's value.
#define GJ_SAME_VALUE(name)                                 \
  static_assert(static_cast<long long>(::guardjit::name) == \
                    static_cast<long long>(::name),         \
                #name "'s value differs from the toolkit's");
// cuda.h
GJ_SAME_VALUE(CUDA_SUCCESS)
GJ_SAME_VALUE(CUDA_ERROR_INVALID_VALUE)
GJ_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
GJ_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED)
GJ_SAME_VALUE(CUDA_ERROR_DEINITIALIZED)
GJ_SAME_VALUE(CUDA_ERROR_STUB_LIBRARY)
GJ_SAME_VALUE(CUDA_ERROR_DEVICE_UNAVAILABLE)
GJ_SAME_VALUE(CUDA_ERROR_NO_DEVICE)
GJ_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE)
GJ_SAME_VALUE(CUDA_ERROR_INVALID_IMAGE)
GJ_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT)
GJ_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE)
GJ_SAME_VALUE(CUDA_ERROR_ILLEGAL_STATE)
GJ_SAME_VALUE(CUDA_ERROR_NOT_FOUND)
GJ_SAME_VALUE(CUDA_ERROR_NOT_READY)
GJ_SAME_VALUE(CUDA_ERROR_LAUNCH_FAILED)
GJ_SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED)
GJ_SAME_VALUE(CUDA_ERROR_SYSTEM_NOT_READY)
GJ_SAME_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
GJ_SAME_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
GJ_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
GJ_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
GJ_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
GJ_SAME_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
GJ_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
GJ_SAME_VALUE(CU_POINTER_ATTRIBUTE_CONTEXT)
GJ_SAME_VALUE(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
GJ_SAME_VALUE(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
GJ_SAME_VALUE(CU_MEMORYTYPE_HOST)
GJ_SAME_VALUE(CU_MEMORYTYPE_DEVICE)
GJ_SAME_VALUE(CU_STREAM_DEFAULT)
GJ_SAME_VALUE(CU_STREAM_NON_BLOCKING)
GJ_SAME_VALUE(CU_EVENT_DEFAULT)
GJ_SAME_VALUE(CU_EVENT_DISABLE_TIMING)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_NONE)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_ACTIVE)
GJ_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_INVALIDATED)
GJ_SAME_VALUE(CU_GRAPH_NODE_TYPE_KERNEL)
GJ_SAME_VALUE(CU_GRAPH_NODE_TYPE_MEMCPY)
GJ_SAME_VALUE(CU_GRAPH_NODE_TYPE_MEMSET)
GJ_SAME_VALUE(CU_GRAPH_NODE_TYPE_EMPTY)
GJ_SAME_VALUE(CU_GRAPH_EXEC_UPDATE_SUCCESS)
GJ_SAME_VALUE(CU_GRAPH_EXEC_UPDATE_ERROR)
// nvrtc.h
GJ_SAME_VALUE(NVRTC_SUCCESS)
GJ_SAME_VALUE(NVRTC_ERROR_OUT_OF_MEMORY)
GJ_SAME_VALUE(NVRTC_ERROR_PROGRAM_CREATION_FAILURE)
GJ_SAME_VALUE(NVRTC_ERROR_INVALID_INPUT)
GJ_SAME_VALUE(NVRTC_ERROR_INVALID_PROGRAM)
GJ_SAME_VALUE(NVRTC_ERROR_INVALID_OPTION)
GJ_SAME_VALUE(NVRTC_ERROR_COMPILATION)
// cublasLt.h, library_types.h
GJ_SAME_VALUE(CUBLAS_STATUS_SUCCESS)
GJ_SAME_VALUE(CUBLAS_STATUS_NOT_INITIALIZED)
GJ_SAME_VALUE(CUBLAS_STATUS_ALLOC_FAILED)
GJ_SAME_VALUE(CUBLAS_STATUS_INVALID_VALUE)
GJ_SAME_VALUE(CUBLAS_STATUS_ARCH_MISMATCH)
GJ_SAME_VALUE(CUBLAS_STATUS_EXECUTION_FAILED)
GJ_SAME_VALUE(CUBLAS_STATUS_INTERNAL_ERROR)
GJ_SAME_VALUE(CUBLAS_STATUS_NOT_SUPPORTED)
GJ_SAME_VALUE(CUDA_R_32F)
GJ_SAME_VALUE(CUDA_R_64F)
GJ_SAME_VALUE(CUDA_R_16F)
GJ_SAME_VALUE(CUDA_R_16BF)
GJ_SAME_VALUE(CUBLAS_COMPUTE_32F)
GJ_SAME_VALUE(CUBLAS_COMPUTE_64F)
GJ_SAME_VALUE(CUBLAS_OP_N)
GJ_SAME_VALUE(CUBLAS_OP_T)
GJ_SAME_VALUE(CUBLASLT_ORDER_COL)
GJ_SAME_VALUE(CUBLASLT_ORDER_ROW)
GJ_SAME_VALUE(CUBLASLT_POINTER_MODE_HOST)
GJ_SAME_VALUE(CUBLASLT_POINTER_MODE_DEVICE)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_DEFAULT)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_RELU)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_BIAS)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_RELU_BIAS)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_GELU)
GJ_SAME_VALUE(CUBLASLT_EPILOGUE_GELU_BIAS)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_SCALE_TYPE)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_POINTER_MODE)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSA)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSB)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE)
GJ_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_POINTER)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_TYPE)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_ORDER)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_ROWS)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_COLS)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_LD)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
GJ_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_SEARCH_MODE)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES)
GJ_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES)
#undef GJ_SAME_VALUE

// Struct fields: same offsets, same types.
#define GJ_SAME_FIELD(type, field)                                             \
  static_assert(offsetof(type, field) == offsetof(::type, field),              \
                #type "::" #field "'s offset differs");                        \
  static_assert(                                                               \
      std::is_same_v<Toolkit<decltype(type::field)>, decltype(::type::field)>, \
      #type "::" #field "'s type differs");
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, func)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, gridDimX)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, gridDimY)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, gridDimZ)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, blockDimX)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, blockDimY)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, blockDimZ)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, kernelParams)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, extra)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, kern)
GJ_SAME_FIELD(CUDA_KERNEL_NODE_PARAMS, ctx)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcXInBytes)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcY)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcZ)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcLOD)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcMemoryType)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcHost)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcDevice)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcArray)
GJ_SAME_FIELD(CUDA_MEMCPY3D, reserved0)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcPitch)
GJ_SAME_FIELD(CUDA_MEMCPY3D, srcHeight)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstXInBytes)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstY)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstZ)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstLOD)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstMemoryType)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstHost)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstDevice)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstArray)
GJ_SAME_FIELD(CUDA_MEMCPY3D, reserved1)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstPitch)
GJ_SAME_FIELD(CUDA_MEMCPY3D, dstHeight)
GJ_SAME_FIELD(CUDA_MEMCPY3D, WidthInBytes)
GJ_SAME_FIELD(CUDA_MEMCPY3D, Height)
GJ_SAME_FIELD(CUDA_MEMCPY3D, Depth)
GJ_SAME_FIELD(CUgraphExecUpdateResultInfo, result)
GJ_SAME_FIELD(CUgraphExecUpdateResultInfo, errorNode)
GJ_SAME_FIELD(CUgraphExecUpdateResultInfo, errorFromNode)
GJ_SAME_FIELD(cublasLtMatmulAlgo_t, data)
GJ_SAME_FIELD(cublasLtMatmulHeuristicResult_t, algo)
GJ_SAME_FIELD(cublasLtMatmulHeuristicResult_t, workspaceSize)
GJ_SAME_FIELD(cublasLtMatmulHeuristicResult_t, state)
GJ_SAME_FIELD(cublasLtMatmulHeuristicResult_t, wavesCount)
GJ_SAME_FIELD(cublasLtMatmulHeuristicResult_t, reserved)
#undef GJ_SAME_FIELD

}  // namespace
}  // namespace guardjit
