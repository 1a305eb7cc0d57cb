// cuBLASLt loads without a GPU (its calls need one): where the toolkit is
// installed the table must load.

#include "runtime/cuda/cublaslt_api.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(CublasLtApiTest, LoadsWithVersion) {
  absl::StatusOr<const CublasLtApi*> api = CublasLtApi::Get();
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_GT((*api)->version, 0u);
  EXPECT_EQ((*api)->version / 10000, 13)
      << (*api)->version << ": the major of the ABI cublaslt_types.h declares";
  EXPECT_THAT((*api)->library_path, HasSubstr("libcublasLt"));
  EXPECT_EQ(*CublasLtApi::Get(), *api) << "loaded once";
}

TEST(CublasLtApiTest, StatusCarriesNameAndString) {
  ASSERT_TRUE(CublasLtApi::Get().ok());
  EXPECT_TRUE(CublasLtStatus(CUBLAS_STATUS_SUCCESS, "x").ok());
  const absl::Status unsupported =
      CublasLtStatus(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul");
  EXPECT_EQ(unsupported.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(unsupported.message(), HasSubstr("cublasLtMatmul"));
  EXPECT_THAT(unsupported.message(), HasSubstr("CUBLAS_STATUS_NOT_SUPPORTED"));
  EXPECT_EQ(CublasLtStatus(CUBLAS_STATUS_ALLOC_FAILED, "x").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(CublasLtStatus(CUBLAS_STATUS_INVALID_VALUE, "x").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace guardjit
