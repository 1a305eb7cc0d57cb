// runtime/cuda/cublaslt_gemm.h on the emulated device and the emulated
// cuBLASLt (installed by this binary's main, in emulated_device_test.cc):
// the row-major to column-major mapping, transposed and batched operands,
// alpha/beta, the fused epilogues, and the descriptor cache. The emulated
// device's memory is host memory, so operands are host vectors here.

#include "runtime/cuda/cublaslt_gemm.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "core/half.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_cublaslt.h"

namespace guardjit {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

class CublasLtGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
    ASSERT_TRUE(device.ok()) << device.status();
    absl::StatusOr<CublasLtGemm*> gemm = CublasLtGemm::ForDevice(**device);
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    gemm_ = *gemm;
    absl::StatusOr<CudaCachingAllocator*> allocator =
        CudaCachingAllocator::ForDevice(0);
    ASSERT_TRUE(allocator.ok()) << allocator.status();
    workspace_ = (*allocator)->OnStream(nullptr);
  }
  CublasLtGemm* gemm_ = nullptr;
  std::shared_ptr<Allocator> workspace_;
};

// A row-major [rows, cols] matrix stored transposed or not, batched.
struct Matrix {
  int64_t batch, rows, cols;
  bool transposed;
  bool broadcast;  // one matrix for every batch (batch stride 0)
  std::vector<float> data;

  Matrix(int64_t b, int64_t r, int64_t c, bool t, bool bc, uint32_t seed)
      : batch(b), rows(r), cols(c), transposed(t), broadcast(bc) {
    data = Random((bc ? 1 : b) * r * c, seed);
  }
  float at(int64_t b, int64_t i, int64_t j) const {
    const int64_t base = broadcast ? 0 : b * rows * cols;
    return data[base + (transposed ? j * rows + i : i * cols + j)];
  }
  GemmMatrix view() const {
    return GemmMatrix{data.data(), transposed ? 1 : cols, transposed ? rows : 1,
                      broadcast ? 0 : rows * cols};
  }
};

double Gelu(double x) {
  return 0.5 * x *
         (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

TEST_F(CublasLtGemmTest, LayoutsBatchesAndEpiloguesMatchAReference) {
  const int64_t m = 5, n = 6, k = 7;
  uint32_t seed = 1;
  for (int64_t batch : {1, 3}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (GemmActivation act : {GemmActivation::kNone, GemmActivation::kRelu,
                                   GemmActivation::kGeluTanh}) {
          for (bool with_bias : {false, true}) {
            SCOPED_TRACE(::testing::Message()
                         << "batch " << batch << " ta " << ta << " tb " << tb
                         << " act " << static_cast<int>(act) << " bias "
                         << with_bias);
            const Matrix a(batch, m, k, ta, false, seed++);
            // b broadcast over the batch.
            const Matrix b(batch, k, n, tb, batch > 1, seed++);
            const Matrix c(batch, m, n, false, false, seed++);
            const std::vector<float> bias = Random(n, seed++);
            std::vector<float> d(batch * m * n, -99);
            CublasLtGemmArgs args;
            args.batch = batch;
            args.m = m;
            args.n = n;
            args.k = k;
            args.a = a.view();
            args.b = b.view();
            args.d = GemmMatrix{d.data(), n, 1, m * n};
            args.alpha = 1.5;
            args.beta = with_bias ? 0 : 0.25;
            args.c = c.view();
            args.bias = with_bias ? bias.data() : nullptr;
            args.activation = act;
            ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
            for (int64_t p = 0; p < batch; ++p) {
              for (int64_t i = 0; i < m; ++i) {
                for (int64_t j = 0; j < n; ++j) {
                  double v = 0;
                  for (int64_t q = 0; q < k; ++q) {
                    v += double{a.at(p, i, q)} * b.at(p, q, j);
                  }
                  v *= 1.5;
                  if (!with_bias) v += 0.25 * c.at(p, i, j);
                  if (with_bias) v += bias[j];
                  if (act == GemmActivation::kRelu) v = std::max(v, 0.0);
                  if (act == GemmActivation::kGeluTanh) v = Gelu(v);
                  ASSERT_NEAR(d[(p * m + i) * n + j], v, 1e-5)
                      << p << " " << i << " " << j;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST_F(CublasLtGemmTest, Float16Product) {
  const int64_t m = 3, n = 4, k = 5;
  const std::vector<float> a = Random(m * k, 5), b = Random(k * n, 6);
  std::vector<uint16_t> ah, bh, d(m * n);
  for (float v : a) ah.push_back(FloatToHalfBits(v));
  for (float v : b) bh.push_back(FloatToHalfBits(v));
  CublasLtGemmArgs args;
  args.dtype = DType::kFloat16;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = GemmMatrix{ah.data(), k, 1, 0};
  args.b = GemmMatrix{bh.data(), n, 1, 0};
  args.d = GemmMatrix{d.data(), n, 1, 0};
  ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float v = 0;
      for (int64_t q = 0; q < k; ++q) {
        v += HalfBitsToFloat(ah[i * k + q]) * HalfBitsToFloat(bh[q * n + j]);
      }
      EXPECT_NEAR(HalfBitsToFloat(d[i * n + j]), v, 2e-3 * (1 + std::fabs(v)));
    }
  }
}

// D = act(alpha * A @ B + beta * C + bias) with C in rows padded past n (its
// own leading dimension), negative beta, and float16 and bfloat16 C and D
// (float32 scale); beta 0 does not read C at all (NaNs there stay out).
TEST_F(CublasLtGemmTest, CMatrixWithItsOwnStridesAndHalfPrecision) {
  const int64_t m = 4, n = 5, k = 3, ldc = n + 3;
  const std::vector<float> a = Random(m * k, 21), b = Random(k * n, 22),
                           c = Random(m * ldc, 23), bias = Random(n, 24);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (double beta : {-0.5, 0.0}) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(dtype) << " beta " << beta);
      const bool half = dtype != DType::kFloat32;
      auto to_bits = [&](float v) {
        return dtype == DType::kFloat16 ? FloatToHalfBits(v)
                                        : FloatToBFloat16Bits(v);
      };
      auto from_bits = [&](uint16_t v) {
        return dtype == DType::kFloat16 ? HalfBitsToFloat(v)
                                        : BFloat16BitsToFloat(v);
      };
      // Operands as the device holds them, and their values as it reads
      // them (rounded to the dtype).
      auto stored = [&](const std::vector<float>& v, std::vector<uint16_t>* h,
                        std::vector<float>* read) {
        for (float x : v) {
          h->push_back(to_bits(x));
          read->push_back(half ? from_bits(h->back()) : x);
        }
      };
      std::vector<uint16_t> ah, bh, ch, biash;
      std::vector<float> ar, br, cr, biasr;
      stored(a, &ah, &ar);
      stored(b, &bh, &br);
      stored(c, &ch, &cr);
      stored(bias, &biash, &biasr);
      std::vector<float> cf = c;
      if (beta == 0) {
        for (float& v : cf) v = std::nanf("");
        for (uint16_t& v : ch) v = 0x7e00;  // NaN in both half formats
      }
      std::vector<float> d(m * n, -99);
      std::vector<uint16_t> dh(m * n, 0);
      CublasLtGemmArgs args;
      args.dtype = dtype;
      args.m = m;
      args.n = n;
      args.k = k;
      const void* pa = half ? static_cast<const void*>(ah.data()) : a.data();
      const void* pb = half ? static_cast<const void*>(bh.data()) : b.data();
      const void* pc = half ? static_cast<const void*>(ch.data()) : cf.data();
      void* pd = half ? static_cast<void*>(dh.data()) : d.data();
      args.a = GemmMatrix{pa, k, 1, 0};
      args.b = GemmMatrix{pb, n, 1, 0};
      args.c = GemmMatrix{pc, ldc, 1, 0};
      args.d = GemmMatrix{pd, n, 1, 0};
      args.alpha = 2;
      args.beta = beta;
      args.bias = half ? static_cast<const void*>(biash.data()) : bias.data();
      args.activation = GemmActivation::kRelu;
      const int64_t with_c = EmulatedCublasLt::counters().matmuls_reading_c;
      ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
      EXPECT_EQ(EmulatedCublasLt::counters().matmuls_reading_c - with_c,
                beta != 0 ? 1 : 0);
      const double tolerance = dtype == DType::kBFloat16  ? 3e-2
                               : dtype == DType::kFloat16 ? 4e-3
                                                          : 1e-5;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double v = 0;
          for (int64_t q = 0; q < k; ++q) {
            v += double{ar[i * k + q]} * br[q * n + j];
          }
          v = 2 * v + biasr[j];
          if (beta != 0) v += beta * cr[i * ldc + j];
          v = std::max(v, 0.0);
          const double got = half ? from_bits(dh[i * n + j]) : d[i * n + j];
          ASSERT_NEAR(got, v, tolerance * (1 + std::fabs(v))) << i << " " << j;
        }
      }
    }
  }
  // A C cuBLASLt would read transposed is refused, not misread.
  std::vector<float> a2 = Random(4 * 4, 1), c2 = Random(16, 2), d2(16);
  CublasLtGemmArgs args;
  args.m = args.n = args.k = 4;
  args.a = args.b = GemmMatrix{a2.data(), 4, 1, 0};
  args.c = GemmMatrix{c2.data(), 1, 4, 0};
  args.d = GemmMatrix{d2.data(), 4, 1, 0};
  args.beta = 1;
  const absl::Status status = gemm_->Run(args, nullptr, *workspace_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

// A problem seen before creates no descriptor and asks no heuristic; a new
// shape or epilogue does.
TEST_F(CublasLtGemmTest, CachedProblemsCreateNoDescriptors) {
  std::vector<float> a = Random(8 * 9, 1), b = Random(9 * 10, 2), d(8 * 10);
  CublasLtGemmArgs args;
  args.m = 8;
  args.n = 10;
  args.k = 9;
  args.a = GemmMatrix{a.data(), 9, 1, 0};
  args.b = GemmMatrix{b.data(), 10, 1, 0};
  args.d = GemmMatrix{d.data(), 10, 1, 0};
  ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
  const EmulatedCublasLt::Counters first = EmulatedCublasLt::counters();
  const int64_t cached = gemm_->cached_problems();
  for (int i = 0; i < 3; ++i) {
    args.alpha = 1 + i;  // alpha and beta are per call, not per problem
    ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
  }
  const EmulatedCublasLt::Counters hits = EmulatedCublasLt::counters();
  EXPECT_EQ(hits.matmuls - first.matmuls, 3);
  EXPECT_EQ(hits.matmul_descs, first.matmul_descs);
  EXPECT_EQ(hits.layouts, first.layouts);
  EXPECT_EQ(hits.heuristic_queries, first.heuristic_queries);
  EXPECT_EQ(gemm_->cached_problems(), cached);
  args.activation = GemmActivation::kRelu;
  ASSERT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
  EXPECT_EQ(EmulatedCublasLt::counters().matmul_descs, first.matmul_descs + 1);
  EXPECT_EQ(gemm_->cached_problems(), cached + 1);
}

TEST_F(CublasLtGemmTest, UnreadableStridesAndCublasErrorsAreStatuses) {
  std::vector<float> a(64), b(64), d(64);
  CublasLtGemmArgs args;
  args.m = args.n = args.k = 4;
  args.a = GemmMatrix{a.data(), 8, 2, 0};  // no unit stride
  args.b = GemmMatrix{b.data(), 4, 1, 0};
  args.d = GemmMatrix{d.data(), 4, 1, 0};
  EXPECT_FALSE(CublasLtGemm::ReadsInPlace(4, 4, 8, 2));
  absl::Status status = gemm_->Run(args, nullptr, *workspace_);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  args.a = GemmMatrix{a.data(), 4, 1, 0};
  EmulatedCublasLt::FailNextMatmuls(1, CUBLAS_STATUS_NOT_SUPPORTED);
  status = gemm_->Run(args, nullptr, *workspace_);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_NE(status.message().find("CUBLAS_STATUS_NOT_SUPPORTED"),
            std::string::npos)
      << status;
  EXPECT_TRUE(gemm_->Run(args, nullptr, *workspace_).ok());
}

}  // namespace
}  // namespace guardjit
