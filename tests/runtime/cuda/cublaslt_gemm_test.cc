// CublasLtGemm (runtime/cuda/cublaslt_gemm.h): which strides cuBLASLt reads
// in place, and row-major products through the emulated cuBLASLt on the
// emulated device (in a process of their own: emulated_process_test_util.h)
// checked against products computed here: plain, transposed operands,
// batched with a broadcast operand, alpha/beta with C, the bias + ReLU
// epilogue; descriptors cached per problem; workspace and stride errors.

#include "runtime/cuda/cublaslt_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

TEST(CublasLtGemmTest, ReadsInPlaceNeedsOneUnitStrideAndRoomForTheOther) {
  // Row-major [3, 4]: contiguous, padded rows, or a transposed view.
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 4, 4, 1));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 4, 10, 1));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 4, 1, 3));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 4, 1, 7));
  // Rows overlapping, no unit stride, or both strides large.
  EXPECT_FALSE(CublasLtGemm::ReadsInPlace(3, 4, 3, 1));
  EXPECT_FALSE(CublasLtGemm::ReadsInPlace(3, 4, 1, 2));
  EXPECT_FALSE(CublasLtGemm::ReadsInPlace(3, 4, 8, 2));
  EXPECT_FALSE(CublasLtGemm::ReadsInPlace(3, 4, 0, 1));  // broadcast rows
  // Size-1 dims take any stride.
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(1, 4, 0, 1));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(1, 4, 99, 1));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 1, 1, 0));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(3, 1, 5, 17));
  EXPECT_TRUE(CublasLtGemm::ReadsInPlace(1, 1, 0, 0));
}

// Device memory of the emulated device (host memory underneath), filled
// and read back through the driver.
class DeviceFloats {
 public:
  explicit DeviceFloats(const std::vector<float>& values)
      : driver_(*CudaDriver::Get().value()), count_(values.size()) {
    EXPECT_EQ(driver_.cuMemAlloc(&ptr_, std::max<size_t>(1, Bytes())),
              CUDA_SUCCESS);
    EXPECT_EQ(driver_.cuMemcpyHtoD(ptr_, values.data(), Bytes()), CUDA_SUCCESS);
  }
  ~DeviceFloats() { (void)driver_.cuMemFree(ptr_); }
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  std::vector<float> Read() const {
    std::vector<float> out(count_);
    EXPECT_EQ(driver_.cuMemcpyDtoH(out.data(), ptr_, Bytes()), CUDA_SUCCESS);
    return out;
  }

 private:
  size_t Bytes() const { return count_ * sizeof(float); }
  const CudaDriver& driver_;
  size_t count_;
  CUdeviceptr ptr_ = 0;
};

std::vector<float> Values(int64_t n, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = scale * static_cast<float>((i * 7) % 11) + shift;
  }
  return v;
}

// Row-major [m, k] @ [k, n] with element (i, j) of X at x[i * rs + j * cs].
std::vector<float> Reference(const std::vector<float>& a, int64_t ars,
                             int64_t acs, const std::vector<float>& b,
                             int64_t brs, int64_t bcs, int64_t m, int64_t n,
                             int64_t k) {
  std::vector<float> d(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += static_cast<double>(a[i * ars + p * acs]) * b[p * brs + j * bcs];
      }
      d[i * n + j] = static_cast<float>(s);
    }
  }
  return d;
}

void ExpectNear(const std::vector<float>& actual,
                const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4 * (1 + std::abs(expected[i])))
        << "element " << i;
  }
}

CublasLtGemm* Gemm() {
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  EXPECT_TRUE(device.ok()) << device.status();
  if (!device.ok()) return nullptr;
  absl::StatusOr<CublasLtGemm*> gemm = CublasLtGemm::ForDevice(**device);
  EXPECT_TRUE(gemm.ok()) << gemm.status();
  return gemm.ok() ? *gemm : nullptr;
}

Allocator& Workspace() {
  static std::shared_ptr<Allocator> allocator =
      (*CudaCachingAllocator::ForDevice(0))->OnStream(nullptr);
  return *allocator;
}

void ProductsMatchTheReference() {
  CublasLtGemm* gemm = Gemm();
  ASSERT_NE(gemm, nullptr);
  const int64_t m = 3, n = 5, k = 4;
  const std::vector<float> a = Values(m * k, 0.5f, -1);
  const std::vector<float> b = Values(k * n, -0.25f, 0.75f);
  DeviceFloats da(a), db(b), dd(std::vector<float>(m * n, -7));

  // Contiguous A and B.
  CublasLtGemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {da.get(), k, 1, 0};
  args.b = {db.get(), n, 1, 0};
  args.d = {dd.get(), n, 1, 0};
  const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  EXPECT_EQ(EmulatedCublasLt::counters().matmuls, matmuls + 1);
  ExpectNear(dd.Read(), Reference(a, k, 1, b, n, 1, m, n, k));

  // The same memory read as transposed views: A' = (a as [k, m])^T,
  // B' = (b as [n, k])^T.
  args.a = {da.get(), 1, m, 0};
  args.b = {db.get(), 1, k, 0};
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  ExpectNear(dd.Read(), Reference(a, 1, m, b, 1, k, m, n, k));
}

TEST(CublasLtGemmTest, ProductsMatchTheReference) {
  GJ_EXPECT_ON_EMULATED_DEVICE(ProductsMatchTheReference);
}

void EpilogueScalesAndBatches() {
  CublasLtGemm* gemm = Gemm();
  ASSERT_NE(gemm, nullptr);
  const int64_t batch = 2, m = 2, n = 3, k = 2;
  const std::vector<float> a = Values(batch * m * k, 1, -3);
  const std::vector<float> b = Values(k * n, 0.5f, -1);  // one, broadcast
  const std::vector<float> c = Values(batch * m * n, 0.25f, 0);
  const std::vector<float> bias = {1, -2, 0.5f};
  DeviceFloats da(a), db(b), dc(c), dbias(bias),
      dd(std::vector<float>(batch * m * n, 0));
  CublasLtGemmArgs args;
  args.batch = batch;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {da.get(), k, 1, m * k};
  args.b = {db.get(), n, 1, 0};
  args.d = {dd.get(), n, 1, m * n};
  args.c = {dc.get(), n, 1, m * n};
  args.alpha = 2;
  args.beta = 0.5;
  args.bias = dbias.get();
  args.activation = GemmActivation::kRelu;
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  EXPECT_EQ(EmulatedCublasLt::counters().last_epilogue,
            CUBLASLT_EPILOGUE_RELU_BIAS);
  EXPECT_EQ(EmulatedCublasLt::counters().last_beta, 0.5);
  std::vector<float> expected;
  for (int64_t t = 0; t < batch; ++t) {
    const std::vector<float> at(a.begin() + t * m * k,
                                a.begin() + (t + 1) * m * k);
    const std::vector<float> p = Reference(at, k, 1, b, n, 1, m, n, k);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float v =
            2 * p[i * n + j] + 0.5f * c[t * m * n + i * n + j] + bias[j];
        expected.push_back(std::max(v, 0.0f));
      }
    }
  }
  ExpectNear(dd.Read(), expected);
  // Some outputs were clamped (the check above means something).
  EXPECT_TRUE(std::count(expected.begin(), expected.end(), 0.0f) > 0);
  EXPECT_TRUE(std::count_if(expected.begin(), expected.end(),
                            [](float v) { return v > 0; }) > 0);
}

TEST(CublasLtGemmTest, EpilogueScalesAndBatches) {
  GJ_EXPECT_ON_EMULATED_DEVICE(EpilogueScalesAndBatches);
}

void ProblemsAreCachedAndStridesChecked() {
  CublasLtGemm* gemm = Gemm();
  ASSERT_NE(gemm, nullptr);
  DeviceFloats da(Values(16, 1, 0)), db(Values(16, 1, 0)),
      dd(std::vector<float>(16, 0));
  CublasLtGemmArgs args;
  args.m = 4;
  args.n = 4;
  args.k = 4;
  args.a = {da.get(), 4, 1, 0};
  args.b = {db.get(), 4, 1, 0};
  args.d = {dd.get(), 4, 1, 0};
  const int64_t problems = gemm->cached_problems();
  const int64_t queries = EmulatedCublasLt::counters().heuristic_queries;
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  EXPECT_EQ(gemm->cached_problems(), problems + 1);
  EXPECT_EQ(EmulatedCublasLt::counters().heuristic_queries, queries + 1)
      << "the second run reuses the problem's algorithm";
  args.k = 2;  // a new problem
  ASSERT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
  EXPECT_EQ(gemm->cached_problems(), problems + 2);

  // No unit stride in A; D not row-contiguous.
  CublasLtGemmArgs bad = args;
  bad.a = {da.get(), 2, 2, 0};
  EXPECT_EQ(gemm->Run(bad, nullptr, Workspace()).code(),
            absl::StatusCode::kInvalidArgument);
  bad = args;
  bad.d = {dd.get(), 1, 4, 0};
  EXPECT_EQ(gemm->Run(bad, nullptr, Workspace()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(gemm->cached_problems(), problems + 2);

  // cuBLASLt's own failure comes back as an error.
  EmulatedCublasLt::FailNextMatmuls(1, CUBLAS_STATUS_EXECUTION_FAILED);
  const absl::Status failed = gemm->Run(args, nullptr, Workspace());
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("CUBLAS_STATUS_EXECUTION_FAILED"),
            absl::string_view::npos)
      << failed;
  EXPECT_TRUE(gemm->Run(args, nullptr, Workspace()).ok());
}

TEST(CublasLtGemmTest, ProblemsAreCachedAndStridesChecked) {
  GJ_EXPECT_ON_EMULATED_DEVICE(ProblemsAreCachedAndStridesChecked);
}

void RunWithWorkspaceNeedsTheAlgorithmsWorkspace() {
  CublasLtGemm* gemm = Gemm();
  ASSERT_NE(gemm, nullptr);
  const std::vector<float> a = Values(6, 1, -2), b = Values(6, -1, 3);
  DeviceFloats da(a), db(b), dd(std::vector<float>(4, 0));
  CublasLtGemmArgs args;
  args.m = 2;
  args.n = 2;
  args.k = 3;
  args.a = {da.get(), 3, 1, 0};
  args.b = {db.get(), 2, 1, 0};
  args.d = {dd.get(), 2, 1, 0};
  absl::StatusOr<size_t> need = gemm->WorkspaceBytes(args);
  ASSERT_TRUE(need.ok()) << need.status();
  ASSERT_GT(*need, 0u) << "the emulated cuBLASLt asks for a workspace";
  DeviceFloats space(std::vector<float>(*need / sizeof(float) + 1, 0));
  const absl::Status small =
      gemm->RunWithWorkspace(args, nullptr, space.get(), *need - 1);
  EXPECT_EQ(small.code(), absl::StatusCode::kFailedPrecondition) << small;
  EXPECT_EQ(gemm->RunWithWorkspace(args, nullptr, nullptr, *need).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(gemm->RunWithWorkspace(args, nullptr, space.get(), *need).ok());
  ExpectNear(dd.Read(), Reference(a, 3, 1, b, 2, 1, 2, 2, 3));
}

TEST(CublasLtGemmTest, RunWithWorkspaceNeedsTheAlgorithmsWorkspace) {
  GJ_EXPECT_ON_EMULATED_DEVICE(RunWithWorkspaceNeedsTheAlgorithmsWorkspace);
}

}  // namespace
}  // namespace guardjit
