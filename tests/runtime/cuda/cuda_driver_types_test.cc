// The CUDA driver types guardjit declares (runtime/cuda/cuda_driver_types.h)
// as the driver's ABI has them: each enumerator's value, the underlying
// types, and the byte layout of the structs the graph calls fill in. Where
// the toolkit's cuda.h is installed at /usr/local/cuda, every value and
// offset is also compared with it (tests/runtime/cuda/cuda_toolkit_abi_test.cc
// checks the same at compile time where CMake finds the toolkit; this file
// does at run time, naming the first difference).

#include "runtime/cuda/cuda_driver_types.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"

// cuda.h's flags are macros that would hide guardjit's constants: read ours
// before including it.
namespace {
constexpr unsigned int kOurPortable = guardjit::CU_MEMHOSTALLOC_PORTABLE;
constexpr unsigned int kOurDeviceMap = guardjit::CU_MEMHOSTALLOC_DEVICEMAP;
}  // namespace

#if defined(__has_include)
#if __has_include("/usr/local/cuda/include/cuda.h")
#include "/usr/local/cuda/include/cuda.h"
#define GJ_HAVE_TOOLKIT_CUDA_H 1
#endif
#endif

namespace guardjit {
namespace {

struct Enumerator {
  const char* name;
  int ours;
  int expected;  // cuda.h's value (CUDA 13)
};

#define GJ_E(name, value) \
  Enumerator { #name, static_cast < int>(guardjit::name), value }

// The values CUDA 13's cuda.h gives each enumerator guardjit declares.
std::vector<Enumerator> Enumerators() {
  return {
      GJ_E(CUDA_SUCCESS, 0),
      GJ_E(CUDA_ERROR_INVALID_VALUE, 1),
      GJ_E(CUDA_ERROR_OUT_OF_MEMORY, 2),
      GJ_E(CUDA_ERROR_NOT_INITIALIZED, 3),
      GJ_E(CUDA_ERROR_DEINITIALIZED, 4),
      GJ_E(CUDA_ERROR_STUB_LIBRARY, 34),
      GJ_E(CUDA_ERROR_DEVICE_UNAVAILABLE, 46),
      GJ_E(CUDA_ERROR_NO_DEVICE, 100),
      GJ_E(CUDA_ERROR_INVALID_DEVICE, 101),
      GJ_E(CUDA_ERROR_INVALID_IMAGE, 200),
      GJ_E(CUDA_ERROR_INVALID_CONTEXT, 201),
      GJ_E(CUDA_ERROR_INVALID_HANDLE, 400),
      GJ_E(CUDA_ERROR_ILLEGAL_STATE, 401),
      GJ_E(CUDA_ERROR_NOT_FOUND, 500),
      GJ_E(CUDA_ERROR_NOT_READY, 600),
      GJ_E(CUDA_ERROR_LAUNCH_FAILED, 719),
      GJ_E(CUDA_ERROR_NOT_SUPPORTED, 801),
      GJ_E(CUDA_ERROR_SYSTEM_NOT_READY, 802),
      GJ_E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803),
      GJ_E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804),
      GJ_E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8),
      GJ_E(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12),
      GJ_E(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16),
      GJ_E(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39),
      GJ_E(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75),
      GJ_E(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81),
      GJ_E(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97),
      GJ_E(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0),
      GJ_E(CU_FUNC_ATTRIBUTE_NUM_REGS, 4),
      GJ_E(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8),
      GJ_E(CU_POINTER_ATTRIBUTE_CONTEXT, 1),
      GJ_E(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2),
      GJ_E(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9),
      GJ_E(CU_MEMORYTYPE_HOST, 1),
      GJ_E(CU_MEMORYTYPE_DEVICE, 2),
      GJ_E(CU_STREAM_DEFAULT, 0),
      GJ_E(CU_STREAM_NON_BLOCKING, 1),
      GJ_E(CU_EVENT_DEFAULT, 0),
      GJ_E(CU_EVENT_DISABLE_TIMING, 2),
      GJ_E(CU_STREAM_CAPTURE_MODE_GLOBAL, 0),
      GJ_E(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1),
      GJ_E(CU_STREAM_CAPTURE_MODE_RELAXED, 2),
      GJ_E(CU_STREAM_CAPTURE_STATUS_NONE, 0),
      GJ_E(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1),
      GJ_E(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2),
      GJ_E(CU_GRAPH_NODE_TYPE_KERNEL, 0),
      GJ_E(CU_GRAPH_NODE_TYPE_MEMCPY, 1),
      GJ_E(CU_GRAPH_NODE_TYPE_MEMSET, 2),
      GJ_E(CU_GRAPH_NODE_TYPE_EMPTY, 5),
      GJ_E(CU_GRAPH_EXEC_UPDATE_SUCCESS, 0),
      GJ_E(CU_GRAPH_EXEC_UPDATE_ERROR, 1),
  };
}

TEST(CudaDriverTypesTest, EnumeratorsHaveTheDriversValues) {
  for (const Enumerator& e : Enumerators()) {
    EXPECT_EQ(e.ours, e.expected) << e.name;
  }
  EXPECT_EQ(kOurPortable, 0x01u);
  EXPECT_EQ(kOurDeviceMap, 0x02u);
}

// Enums with a fixed `int` underlying type: 4 bytes as the C ABI passes
// cuda.h's enums, and any value a newer driver returns is representable
// (a CUresult guardjit does not list survives a round trip).
TEST(CudaDriverTypesTest, EnumsAreIntsHoldingUnlistedValues) {
  static_assert(std::is_same_v<std::underlying_type_t<CUresult>, int>);
  static_assert(
      std::is_same_v<std::underlying_type_t<CUdevice_attribute>, int>);
  static_assert(std::is_same_v<std::underlying_type_t<CUgraphNodeType>, int>);
  static_assert(std::is_same_v<std::underlying_type_t<CUmemorytype>, int>);
  EXPECT_EQ(sizeof(CUresult), 4u);
  EXPECT_EQ(sizeof(CUstreamCaptureStatus), 4u);
  const int unlisted = 999;  // CUDA_ERROR_UNKNOWN
  const CUresult r = static_cast<CUresult>(unlisted);
  EXPECT_EQ(static_cast<int>(r), unlisted);
  EXPECT_NE(r, CUDA_SUCCESS);
  // Handles are pointers, CUdeviceptr a 64-bit integer, CUdevice an int.
  EXPECT_EQ(sizeof(CUdeviceptr), 8u);
  EXPECT_TRUE(std::is_unsigned_v<CUdeviceptr>);
  EXPECT_TRUE((std::is_same_v<CUdevice, int>));
  EXPECT_TRUE(std::is_pointer_v<CUstream>);
  EXPECT_TRUE(std::is_pointer_v<CUgraphNode>);
  EXPECT_FALSE((std::is_same_v<CUstream, CUevent>));
}

// The structs the driver fills (cuGraphKernelNodeGetParams,
// cuGraphMemcpyNodeGetParams) and reads (the Set calls): LP64 offsets of
// cuda.h's CUDA_KERNEL_NODE_PARAMS_v2 and CUDA_MEMCPY3D_v2.
TEST(CudaDriverTypesTest, GraphStructsHaveTheDriversLayout) {
  EXPECT_EQ(sizeof(CUDA_KERNEL_NODE_PARAMS), 72u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, func), 0u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, gridDimX), 8u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, blockDimZ), 28u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes), 32u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, kernelParams), 40u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, extra), 48u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, kern), 56u);
  EXPECT_EQ(offsetof(CUDA_KERNEL_NODE_PARAMS, ctx), 64u);

  EXPECT_EQ(sizeof(CUDA_MEMCPY3D), 200u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, srcMemoryType), 32u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, srcHost), 40u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, srcDevice), 48u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, srcPitch), 72u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, dstXInBytes), 88u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, dstMemoryType), 120u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, dstDevice), 136u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, WidthInBytes), 176u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, Height), 184u);
  EXPECT_EQ(offsetof(CUDA_MEMCPY3D, Depth), 192u);

  EXPECT_EQ(sizeof(CUgraphExecUpdateResultInfo), 24u);
  EXPECT_EQ(offsetof(CUgraphExecUpdateResultInfo, errorNode), 8u);
  EXPECT_EQ(offsetof(CUgraphExecUpdateResultInfo, errorFromNode), 16u);
}

#ifdef GJ_HAVE_TOOLKIT_CUDA_H

// Every enumerator, each struct's size and every field's offset, against
// the installed cuda.h.
TEST(CudaDriverTypesTest, MatchTheInstalledToolkitsCudaH) {
  const std::vector<Enumerator> ours = Enumerators();
  const std::vector<int> theirs = {
      ::CUDA_SUCCESS,
      ::CUDA_ERROR_INVALID_VALUE,
      ::CUDA_ERROR_OUT_OF_MEMORY,
      ::CUDA_ERROR_NOT_INITIALIZED,
      ::CUDA_ERROR_DEINITIALIZED,
      ::CUDA_ERROR_STUB_LIBRARY,
      ::CUDA_ERROR_DEVICE_UNAVAILABLE,
      ::CUDA_ERROR_NO_DEVICE,
      ::CUDA_ERROR_INVALID_DEVICE,
      ::CUDA_ERROR_INVALID_IMAGE,
      ::CUDA_ERROR_INVALID_CONTEXT,
      ::CUDA_ERROR_INVALID_HANDLE,
      ::CUDA_ERROR_ILLEGAL_STATE,
      ::CUDA_ERROR_NOT_FOUND,
      ::CUDA_ERROR_NOT_READY,
      ::CUDA_ERROR_LAUNCH_FAILED,
      ::CUDA_ERROR_NOT_SUPPORTED,
      ::CUDA_ERROR_SYSTEM_NOT_READY,
      ::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
      ::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
      ::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
      ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
      ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
      ::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
      ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
      ::CU_DEVICE_ATTRIBUTE_WARP_SIZE,
      ::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
      ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
      ::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
      ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
      ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
      ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
      ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
      ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
      ::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      ::CU_FUNC_ATTRIBUTE_NUM_REGS,
      ::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      ::CU_POINTER_ATTRIBUTE_CONTEXT,
      ::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
      ::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
      ::CU_MEMORYTYPE_HOST,
      ::CU_MEMORYTYPE_DEVICE,
      ::CU_STREAM_DEFAULT,
      ::CU_STREAM_NON_BLOCKING,
      ::CU_EVENT_DEFAULT,
      ::CU_EVENT_DISABLE_TIMING,
      ::CU_STREAM_CAPTURE_MODE_GLOBAL,
      ::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
      ::CU_STREAM_CAPTURE_MODE_RELAXED,
      ::CU_STREAM_CAPTURE_STATUS_NONE,
      ::CU_STREAM_CAPTURE_STATUS_ACTIVE,
      ::CU_STREAM_CAPTURE_STATUS_INVALIDATED,
      ::CU_GRAPH_NODE_TYPE_KERNEL,
      ::CU_GRAPH_NODE_TYPE_MEMCPY,
      ::CU_GRAPH_NODE_TYPE_MEMSET,
      ::CU_GRAPH_NODE_TYPE_EMPTY,
      ::CU_GRAPH_EXEC_UPDATE_SUCCESS,
      ::CU_GRAPH_EXEC_UPDATE_ERROR,
  };
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].ours, theirs[i])
        << ours[i].name << " differs from cuda.h";
  }
  EXPECT_EQ(kOurPortable, static_cast<unsigned int>(CU_MEMHOSTALLOC_PORTABLE));
  EXPECT_EQ(kOurDeviceMap,
            static_cast<unsigned int>(CU_MEMHOSTALLOC_DEVICEMAP));

  EXPECT_EQ(sizeof(CUdeviceptr), sizeof(::CUdeviceptr));
  EXPECT_EQ(sizeof(CUDA_KERNEL_NODE_PARAMS), sizeof(::CUDA_KERNEL_NODE_PARAMS));
  EXPECT_EQ(sizeof(CUDA_MEMCPY3D), sizeof(::CUDA_MEMCPY3D));
  EXPECT_EQ(sizeof(CUgraphExecUpdateResultInfo),
            sizeof(::CUgraphExecUpdateResultInfo));
#define GJ_SAME_OFFSET(type, field) \
  EXPECT_EQ(offsetof(type, field), offsetof(::type, field)) << #type "." #field
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, func);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, gridDimX);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, blockDimX);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, sharedMemBytes);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, kernelParams);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, extra);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, kern);
  GJ_SAME_OFFSET(CUDA_KERNEL_NODE_PARAMS, ctx);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, srcMemoryType);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, srcHost);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, srcDevice);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, srcArray);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, srcPitch);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, dstXInBytes);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, dstMemoryType);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, dstHost);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, dstDevice);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, dstPitch);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, WidthInBytes);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, Height);
  GJ_SAME_OFFSET(CUDA_MEMCPY3D, Depth);
  GJ_SAME_OFFSET(CUgraphExecUpdateResultInfo, result);
  GJ_SAME_OFFSET(CUgraphExecUpdateResultInfo, errorNode);
  GJ_SAME_OFFSET(CUgraphExecUpdateResultInfo, errorFromNode);
#undef GJ_SAME_OFFSET
}

#endif  // GJ_HAVE_TOOLKIT_CUDA_H

}  // namespace
}  // namespace guardjit
