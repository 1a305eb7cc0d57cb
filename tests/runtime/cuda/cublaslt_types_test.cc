// cuBLASLt's types as guardjit declares them (runtime/cuda/cublaslt_types.h):
// the enumerator values of CUDA 13's cublasLt.h, cublas_api.h and
// library_types.h, the epilogues' bit composition, and the layout of the
// structs cuBLASLt writes (the heuristic's result), read back from the
// emulated cuBLASLt's heuristic through the declared types.

#include "runtime/cuda/cublaslt_types.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/cublaslt_api.h"
#include "testing/cuda/emulated_cublaslt.h"

namespace guardjit {
namespace {

struct Enumerator {
  const char* name;
  int ours;
  int expected;  // the toolkit's value (CUDA 13)
};

#define GJ_E(name, value) \
  Enumerator { #name, static_cast < int>(name), value }

TEST(CublasLtTypesTest, EnumeratorsHaveTheToolkitsValues) {
  const std::vector<Enumerator> enumerators = {
      GJ_E(CUBLAS_STATUS_SUCCESS, 0),
      GJ_E(CUBLAS_STATUS_NOT_INITIALIZED, 1),
      GJ_E(CUBLAS_STATUS_ALLOC_FAILED, 3),
      GJ_E(CUBLAS_STATUS_INVALID_VALUE, 7),
      GJ_E(CUBLAS_STATUS_ARCH_MISMATCH, 8),
      GJ_E(CUBLAS_STATUS_EXECUTION_FAILED, 13),
      GJ_E(CUBLAS_STATUS_INTERNAL_ERROR, 14),
      GJ_E(CUBLAS_STATUS_NOT_SUPPORTED, 15),
      GJ_E(CUDA_R_32F, 0),
      GJ_E(CUDA_R_64F, 1),
      GJ_E(CUDA_R_16F, 2),
      GJ_E(CUDA_R_16BF, 14),
      GJ_E(CUBLAS_COMPUTE_32F, 68),
      GJ_E(CUBLAS_COMPUTE_64F, 70),
      GJ_E(CUBLAS_OP_N, 0),
      GJ_E(CUBLAS_OP_T, 1),
      GJ_E(CUBLASLT_ORDER_COL, 0),
      GJ_E(CUBLASLT_ORDER_ROW, 1),
      GJ_E(CUBLASLT_POINTER_MODE_HOST, 0),
      GJ_E(CUBLASLT_POINTER_MODE_DEVICE, 1),
      GJ_E(CUBLASLT_EPILOGUE_DEFAULT, 1),
      GJ_E(CUBLASLT_EPILOGUE_RELU, 2),
      GJ_E(CUBLASLT_EPILOGUE_BIAS, 4),
      GJ_E(CUBLASLT_EPILOGUE_RELU_BIAS, 6),
      GJ_E(CUBLASLT_EPILOGUE_GELU, 32),
      GJ_E(CUBLASLT_EPILOGUE_GELU_BIAS, 36),
      GJ_E(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0),
      GJ_E(CUBLASLT_MATMUL_DESC_SCALE_TYPE, 1),
      GJ_E(CUBLASLT_MATMUL_DESC_POINTER_MODE, 2),
      GJ_E(CUBLASLT_MATMUL_DESC_TRANSA, 3),
      GJ_E(CUBLASLT_MATMUL_DESC_TRANSB, 4),
      GJ_E(CUBLASLT_MATMUL_DESC_EPILOGUE, 7),
      GJ_E(CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_TYPE, 0),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_ORDER, 1),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_ROWS, 2),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_COLS, 3),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_LD, 4),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5),
      GJ_E(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 6),
      GJ_E(CUBLASLT_MATMUL_PREF_SEARCH_MODE, 0),
      GJ_E(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1),
      GJ_E(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 5),
      GJ_E(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 6),
      GJ_E(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 7),
      GJ_E(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 8),
  };
  for (const Enumerator& e : enumerators) {
    EXPECT_EQ(e.ours, e.expected) << e.name;
  }
}

// cublasLt.h defines the fused epilogues as ORs of their parts; guardjit
// picks an epilogue by adding BIAS to an activation's.
TEST(CublasLtTypesTest, FusedEpiloguesAreTheirPartsOred) {
  EXPECT_EQ(CUBLASLT_EPILOGUE_RELU_BIAS,
            CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(CUBLASLT_EPILOGUE_GELU_BIAS,
            CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(CUBLASLT_EPILOGUE_DEFAULT & CUBLASLT_EPILOGUE_BIAS, 0);
}

TEST(CublasLtTypesTest, TypesHaveTheLibrarysSizesAndLayout) {
  static_assert(std::is_same_v<cudaDataType, cudaDataType_t>);
  static_assert(std::is_same_v<cudaStream_t, CUstream>);
  static_assert(std::is_same_v<std::underlying_type_t<cublasStatus_t>, int>);
  static_assert(std::is_pointer_v<cublasLtHandle_t>);
  EXPECT_EQ(sizeof(cublasStatus_t), 4u);
  EXPECT_EQ(sizeof(cublasLtEpilogue_t), 4u);
  EXPECT_EQ(sizeof(cublasLtMatmulAlgo_t), 64u);
  EXPECT_EQ(sizeof(cublasLtMatmulHeuristicResult_t), 96u);
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, algo), 0u);
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize), 64u);
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, state), 72u);
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, wavesCount), 76u);
  EXPECT_EQ(offsetof(cublasLtMatmulHeuristicResult_t, reserved), 80u);
  // Descriptor handles of different kinds do not convert into one another.
  EXPECT_FALSE(
      (std::is_convertible_v<cublasLtMatmulDesc_t, cublasLtMatrixLayout_t>));
  EXPECT_FALSE((std::is_convertible_v<cublasLtMatrixLayout_t,
                                      cublasLtMatmulPreference_t>));
}

// A heuristic query through the declared types: the result struct comes
// back filled where the declared layout says (the emulated cuBLASLt asks
// for min(4 KiB, the preference's maximum) of workspace).
TEST(CublasLtTypesTest, HeuristicResultReadsBackThroughTheDeclaredLayout) {
  const CublasLtApi& api = *EmulatedCublasLt::Get();
  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(api.cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(api.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  // Column-major: D [4 x 3] = A [4 x 2] @ B [2 x 3].
  ASSERT_EQ(api.cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 4, 2, 4),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(api.cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 2, 3, 2),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(api.cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, 4, 3, 4),
            CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulPreference_t pref = nullptr;
  ASSERT_EQ(api.cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  for (const uint64_t max_workspace : {uint64_t{1} << 20, uint64_t{100}}) {
    ASSERT_EQ(api.cublasLtMatmulPreferenceSetAttribute(
                  pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                  &max_workspace, sizeof(max_workspace)),
              CUBLAS_STATUS_SUCCESS);
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0xAB, sizeof(result));
    int found = 0;
    ASSERT_EQ(api.cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, d, d, pref,
                                                 1, &result, &found),
              CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(found, 1);
    EXPECT_EQ(result.state, CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(result.workspaceSize, std::min<uint64_t>(4096, max_workspace));
  }
  EXPECT_EQ(api.cublasLtMatmulPreferenceDestroy(pref), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.cublasLtMatrixLayoutDestroy(a), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.cublasLtMatrixLayoutDestroy(b), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.cublasLtMatrixLayoutDestroy(d), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.cublasLtMatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.cublasLtDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

}  // namespace
}  // namespace guardjit
