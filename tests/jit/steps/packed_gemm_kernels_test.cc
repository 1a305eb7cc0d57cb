// The packed products' ahead-of-time kernels (jit/steps/packed_gemm_kernels.h)
// against a reference product in double: random shapes, row strides of A,
// alphas, every tile the host's instruction sets allow (each width it has,
// each tile height and vector count ChoosePackedGemm may pick, so the row
// tails' tiles too), column tails, k blocks and panel splits.

#include "jit/steps/packed_gemm_kernels.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jit/steps/packed_gemm.h"

namespace guardjit {
namespace {

// The widths this host runs ahead of time (16 with AVX-512, 8 with AVX2 and
// FMA, 4 on any x86-64), with their register counts.
std::vector<VectorTarget> HostTargets() {
  std::vector<VectorTarget> targets;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) {
    targets.push_back({16, 32});
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    targets.push_back({8, 16});
  }
  targets.push_back({4, 16});
#endif
  return targets;
}

// 64-byte aligned floats, as the step allocates the packed weight.
struct Aligned {
  explicit Aligned(size_t n) : storage(n + 16) {
    data = storage.data();
    while (reinterpret_cast<uintptr_t>(data) % 64 != 0) ++data;
  }
  std::vector<float> storage;
  float* data;
};

TEST(PackedGemmKernelsTest, RandomProductsMatchAReference) {
  const std::vector<VectorTarget> targets = HostTargets();
  if (targets.empty()) GTEST_SKIP() << "no ahead-of-time kernels off x86-64";
  std::mt19937 rng(77);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<float> value(-1, 1);
  int trials = 0;
  for (const VectorTarget& target : targets) {
    for (int vectors = 1; vectors <= 4; ++vectors) {
      const int max_rows = (target.registers - vectors - 1) / vectors;
      for (int rows = 1; rows <= max_rows; ++rows) {
        ++trials;
        const int64_t m = uniform(1, 3 * rows + 2);
        const int64_t n = uniform(1, 3 * vectors * target.width + 5);
        const int64_t k = uniform(1, 90);
        const int64_t lda = k + uniform(0, 3);
        PackedGemm g = ChoosePackedGemm(m, n, k, lda, 1,
                                        trials % 4 == 0 ? -0.75 : 1, target);
        g.panel_width = vectors * target.width;
        g.tile_rows = rows;
        g.k_block = uniform(1, k);
        SCOPED_TRACE(g.ToString());
        const PackedGemmKernel kernel = FindPackedGemmKernel(g);
        ASSERT_NE(kernel, nullptr);
        std::vector<float> a(static_cast<size_t>(m * lda));
        for (float& x : a) x = value(rng);
        std::vector<float> b(static_cast<size_t>(k * n));  // [k, n]
        for (float& x : b) x = value(rng);
        Aligned packed(PackedGemmFloats(g));
        const int64_t strides[2] = {n, 1};
        PackGemmPanels(g, b.data(), strides, packed.data);
        std::vector<float> c(static_cast<size_t>(m * n), NAN);
        for (int64_t p = 0; p < g.panels();) {
          const int64_t last = std::min(g.panels(), p + uniform(1, 2));
          kernel(g, a.data(), lda, packed.data, c.data(), p, last);
          p = last;
        }
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t kk = 0; kk < k; ++kk) {
              sum += static_cast<double>(a[i * lda + kk]) * b[kk * n + j];
            }
            ASSERT_NEAR(c[i * n + j], g.alpha * sum, 1e-5 * (k + 1))
                << i << ", " << j;
          }
        }
      }
    }
  }
  EXPECT_GT(trials, 0);
}

TEST(PackedGemmKernelsTest, PanelsOutsideTheRangeAreNotWritten) {
  const std::vector<VectorTarget> targets = HostTargets();
  if (targets.empty()) GTEST_SKIP() << "no ahead-of-time kernels off x86-64";
  PackedGemm g = ChoosePackedGemm(5, 40, 7, 7, 1, 1, targets.back());
  const PackedGemmKernel kernel = FindPackedGemmKernel(g);
  ASSERT_NE(kernel, nullptr);
  ASSERT_GT(g.panels(), 1);
  std::vector<float> a(5 * 7, 1.0f), b(7 * 40, 2.0f);
  Aligned packed(PackedGemmFloats(g));
  const int64_t strides[2] = {40, 1};
  PackGemmPanels(g, b.data(), strides, packed.data);
  std::vector<float> c(5 * 40, NAN);
  kernel(g, a.data(), 7, packed.data, c.data(), 1, 1);  // empty
  for (float v : c) ASSERT_TRUE(std::isnan(v));
  kernel(g, a.data(), 7, packed.data, c.data(), 1, 2);  // the second panel
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 40; ++j) {
      const bool in = j >= g.panel_width && j < 2 * g.panel_width;
      if (in) {
        EXPECT_EQ(c[i * 40 + j], 14.0f) << i << ", " << j;
      } else {
        EXPECT_TRUE(std::isnan(c[i * 40 + j])) << i << ", " << j;
      }
    }
  }
}

TEST(PackedGemmKernelsTest, NoKernelOutsideWhatTheyCover) {
  PackedGemm g = ChoosePackedGemm(8, 64, 32, 32, 1, 1, {4, 16});
  ASSERT_NE(FindPackedGemmKernel(g), nullptr);
  PackedGemm tall = g;
  tall.tile_rows = 40;  // more accumulators than registers
  EXPECT_EQ(FindPackedGemmKernel(tall), nullptr);
  PackedGemm wide = g;
  wide.panel_width = 5 * g.vector_width;
  EXPECT_EQ(FindPackedGemmKernel(wide), nullptr);
  PackedGemm ragged = g;
  ragged.panel_width = g.vector_width + 1;
  EXPECT_EQ(FindPackedGemmKernel(ragged), nullptr);
  PackedGemm blocks = g;
  blocks.k_block = g.k + 1;
  EXPECT_EQ(FindPackedGemmKernel(blocks), nullptr);
  PackedGemm odd = g;
  odd.vector_width = 32;
  odd.panel_width = 32;
  EXPECT_EQ(FindPackedGemmKernel(odd), nullptr);
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) {
    PackedGemm avx512 = ChoosePackedGemm(8, 64, 32, 32, 1, 1, {16, 32});
    EXPECT_EQ(FindPackedGemmKernel(avx512), nullptr)
        << "a width the host lacks";
  }
#endif
}

TEST(PackedGemmKernelsTest, CopyGemmRowsGathersAnyColumnStride) {
  // A read transposed: element (i, k) at a[i + k * 3], 3 rows of 4.
  PackedGemm g;
  g.m = 3;
  g.k = 4;
  g.lda = 1;
  g.a_col_stride = 3;
  std::vector<float> a(12);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  std::vector<float> out(12, -1);
  CopyGemmRows(g, a.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
}

}  // namespace
}  // namespace guardjit
