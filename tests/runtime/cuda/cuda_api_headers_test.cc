// guardjit's CUDA headers without the CUDA toolkit: this file is compiled
// with tests/runtime/cuda/no_toolkit/ first on the include path, whose
// cuda.h, nvrtc.h and cublasLt.h are #errors, so a header below that
// included one of the toolkit's (rather than the declarations in
// runtime/cuda/) fails the build on every machine, toolkit or not. The tests
// call through the declared types on the emulated device.

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_graph.h"
#include "runtime/cuda/cuda_transfer.h"
#include "runtime/cuda/nvrtc_api.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"

// The error macros outside namespace guardjit, as a host of these headers
// may use them.
absl::Status CopyThroughDevice(const guardjit::CudaDriver& driver,
                               const void* src, void* dst, size_t bytes) {
  guardjit::CUdeviceptr device = 0;
  RETURN_IF_CUDA_ERROR(driver.cuMemAlloc(&device, bytes));
  RETURN_IF_CUDA_ERROR(driver.cuMemcpyHtoD(device, src, bytes));
  RETURN_IF_CUDA_ERROR(driver.cuMemcpyDtoH(dst, device, bytes));
  RETURN_IF_CUDA_ERROR(driver.cuMemFree(device));
  return absl::OkStatus();
}

absl::Status FreeTwice(const guardjit::CudaDriver& driver) {
  guardjit::CUdeviceptr device = 0;
  RETURN_IF_CUDA_ERROR(driver.cuMemAlloc(&device, 16));
  RETURN_IF_CUDA_ERROR(driver.cuMemFree(device));
  RETURN_IF_CUDA_ERROR(driver.cuMemFree(device));
  return absl::OkStatus();
}

absl::Status CreateAndDestroyDesc(const guardjit::CublasLtApi& api) {
  guardjit::cublasLtMatmulDesc_t desc = nullptr;
  RETURN_IF_CUBLASLT_ERROR(api.cublasLtMatmulDescCreate(
      &desc, guardjit::CUBLAS_COMPUTE_32F, guardjit::CUDA_R_32F));
  const guardjit::cublasOperation_t transpose = guardjit::CUBLAS_OP_T;
  RETURN_IF_CUBLASLT_ERROR(api.cublasLtMatmulDescSetAttribute(
      desc, guardjit::CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
      sizeof(transpose)));
  RETURN_IF_CUBLASLT_ERROR(api.cublasLtMatmulDescDestroy(desc));
  return absl::OkStatus();
}

namespace guardjit {
namespace {

// The declared types have the sizes the driver's ABI gives them (LP64).
static_assert(sizeof(CUresult) == 4 && sizeof(CUdevice) == 4);
static_assert(sizeof(CUdeviceptr) == 8);
static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS) == 72);
static_assert(sizeof(CUDA_MEMCPY3D) == 200);
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96);
static_assert(std::is_same_v<decltype(CudaDriver::cuMemAlloc),
                             CUresult (*)(CUdeviceptr*, size_t)>);

TEST(CudaApiHeadersTest, DriverCallsThroughTheDeclaredSignatures) {
  const CudaDriver* driver = EmulatedCudaDriver::Get();
  std::vector<int32_t> in = {1, -2, 3, 1 << 30};
  std::vector<int32_t> out(in.size(), 0);
  ASSERT_TRUE(CopyThroughDevice(*driver, in.data(), out.data(),
                                in.size() * sizeof(int32_t))
                  .ok());
  EXPECT_EQ(out, in);
  const char* name = nullptr;
  ASSERT_EQ(driver->cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &name),
            CUDA_SUCCESS);
  EXPECT_STREQ(name, "CUDA_ERROR_OUT_OF_MEMORY");
}

TEST(CudaApiHeadersTest, ErrorMacroReturnsTheCallsError) {
  const absl::Status status = FreeTwice(*EmulatedCudaDriver::Get());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cuMemFree(device)"), absl::string_view::npos)
      << status;
}

TEST(CudaApiHeadersTest, CublasLtCallsThroughTheDeclaredSignatures) {
  EXPECT_TRUE(CreateAndDestroyDesc(*EmulatedCublasLt::Get()).ok());
  EXPECT_EQ(CublasLtStatus(CUBLAS_STATUS_NOT_SUPPORTED, "x").code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(NvrtcStatus(NVRTC_ERROR_INVALID_OPTION, "x").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace guardjit
