// runtime/kernels/gemm.cc: BatchedGemm against a naive double-precision
// triple loop on every dtype it takes (OpenBLAS for float32/float64, the
// reference loop otherwise), operands of any strides (transposed, broadcast
// with stride 0, neither row- nor column-major) and a non-row-major out;
// alpha and beta by hand (beta zero ignores out's NaNs, alpha zero skips the
// product, uint8's beta 256 is zero), integer wrap-around, empty extents,
// bool rejected, and AsBatchOfOne's view.

#include "runtime/kernels/gemm.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "runtime/tensor_copy.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::ToDoubles;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// alpha * (a @ b) + beta * out in double, per batch (a, b, out any strides;
// a or b with batch size 1 broadcast).
std::vector<double> Naive(const Tensor& a, const Tensor& b, const Tensor& out,
                          double alpha, double beta) {
  const std::vector<double> va = ToDoubles(a), vb = ToDoubles(b),
                            vo = ToDoubles(out);
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2),
                k = a.size(2);
  std::vector<double> r(static_cast<size_t>(batch * m * n));
  for (int64_t bi = 0; bi < batch; ++bi) {
    const int64_t ab = a.size(0) == 1 ? 0 : bi, bb = b.size(0) == 1 ? 0 : bi;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          s += va[(ab * m + i) * k + kk] * vb[(bb * k + kk) * n + j];
        }
        const size_t at = static_cast<size_t>((bi * m + i) * n + j);
        r[at] = alpha * s + (beta == 0 ? 0 : beta * vo[at]);
      }
    }
  }
  return r;
}

// The values of `t` [B, R, C] stored with each matrix column-major.
Tensor ColumnMajor(const Tensor& t) {
  Tensor storage = *Tensor::Empty(t.dtype(), {t.size(0), t.size(2), t.size(1)});
  Tensor view =
      storage.AsStrided(t.sizes(), {t.size(1) * t.size(2), 1, t.size(1)});
  CopyInto(view, t);
  return view;
}

// `t` [1, R, C] seen as [batch, R, C] with batch stride 0.
Tensor Broadcast(const Tensor& t, int64_t batch) {
  return t.AsStrided({batch, t.size(1), t.size(2)},
                     {0, t.stride(1), t.stride(2)});
}

double Tolerance(DType d) {
  switch (d) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    case DType::kFloat32:
      return 1e-5;
    case DType::kFloat64:
      return 1e-12;
    default:
      return 0;
  }
}

TEST(Gemm, ByHandWithAlphaAndBeta) {
  // [[1, 2, 3], [4, 5, 6]] @ [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]].
  const Tensor a = MakeTensor(DType::kFloat32, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = MakeTensor(DType::kFloat32, {1, 3, 2}, {1, 0, 0, 1, 1, 1});
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
    SCOPED_TRACE(DTypeName(d));
    const Tensor ad = *CopyAs(a, d), bd = *CopyAs(b, d);
    Tensor out = MakeTensor(d, {1, 2, 2}, {8, 8, 8, 8});
    ASSERT_TRUE(
        BatchedGemm(ad, bd, out, Scalar(int64_t{1}), Scalar(int64_t{0})).ok());
    ExpectTensor(out, d, {1, 2, 2}, {4, 5, 10, 11}, 0, 0);
    // 2 * ab + 3 * out.
    out = MakeTensor(d, {1, 2, 2}, {1, 2, 3, 4});
    ASSERT_TRUE(
        BatchedGemm(ad, bd, out, Scalar(int64_t{2}), Scalar(int64_t{3})).ok());
    ExpectTensor(out, d, {1, 2, 2}, {11, 16, 29, 34}, 0, 0);
  }
}

TEST(Gemm, MatchesNaiveLoopOnEveryDTypeAndLayout) {
  int seed = 0;
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                  DType::kBFloat16, DType::kInt8, DType::kUInt8, DType::kInt16,
                  DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(d));
    const bool floating = IsFloating(d);
    const double lo = floating ? -2 : 0, hi = floating ? 2 : 5;
    const Tensor a = RandomTensor(d, {3, 5, 7}, ++seed, lo, hi);
    const Tensor b = RandomTensor(d, {3, 7, 4}, ++seed, lo, hi);
    const Tensor a1 = RandomTensor(d, {1, 5, 7}, ++seed, lo, hi);
    const std::vector<std::pair<Tensor, Tensor>> operands = {
        {a, b},
        {ColumnMajor(a), b},                           // a transposed
        {a, ColumnMajor(b)},                           // b transposed
        {NonContiguousCopy(a), NonContiguousCopy(b)},  // neither: copied
        {Broadcast(a1, 3), b},                         // a's batch stride 0
    };
    for (size_t c = 0; c < operands.size(); ++c) {
      SCOPED_TRACE(c);
      const Tensor& x = operands[c].first;
      const Tensor& y = operands[c].second;
      for (const bool column_major_out : {false, true}) {
        const Tensor old = RandomTensor(d, {3, 5, 4}, ++seed, lo, hi);
        Tensor out = column_major_out ? ColumnMajor(old) : *CopyAs(old, d);
        const Tensor x_values = c == 4 ? a1 : x;
        const std::vector<double> want =
            Naive(x_values, y, old, 1.5, floating ? 0.5 : 2);
        ASSERT_TRUE(BatchedGemm(x, y, out, Scalar(1.5),
                                floating ? Scalar(0.5) : Scalar(int64_t{2}))
                        .ok());
        if (floating) {
          const double tol = Tolerance(d) * 20;  // |values| up to ~20
          ExpectTensor(out, d, {3, 5, 4}, want, tol, Tolerance(d));
        } else {
          // alpha 1.5 is read as 1 for integers; values small: no wrap.
          const std::vector<double> ints = Naive(x_values, y, old, 1, 2);
          ExpectTensor(out, d, {3, 5, 4}, ints, 0, 0);
        }
      }
    }
  }
}

TEST(Gemm, IntegersWrapAsTheirDType) {
  // int8: 100 * 100 + 100 * 100 = 20000 = 0x4e20 -> 0x20.
  Tensor out = MakeTensor(DType::kInt8, {1, 1, 1}, {0});
  ASSERT_TRUE(BatchedGemm(MakeTensor(DType::kInt8, {1, 1, 2}, {100, 100}),
                          MakeTensor(DType::kInt8, {1, 2, 1}, {100, 100}), out,
                          Scalar(int64_t{1}), Scalar(int64_t{0}))
                  .ok());
  ExpectTensor(out, DType::kInt8, {1, 1, 1}, {32}, 0, 0);
  // int32: 2^16 * 2^16 = 2^32 -> 0; -1 * 2^31 wraps to -2^31.
  out = MakeTensor(DType::kInt32, {1, 1, 2}, {0, 0});
  ASSERT_TRUE(BatchedGemm(MakeTensor(DType::kInt32, {1, 1, 1}, {65536}),
                          MakeTensor(DType::kInt32, {1, 1, 2}, {65536, -32768}),
                          out, Scalar(int64_t{1}), Scalar(int64_t{0}))
                  .ok());
  ExpectTensor(out, DType::kInt32, {1, 1, 2}, {0, -2147483648.0}, 0, 0);
  // uint8: beta 256 is 0 there, so out's old values are ignored.
  out = MakeTensor(DType::kUInt8, {1, 1, 1}, {7});
  ASSERT_TRUE(BatchedGemm(MakeTensor(DType::kUInt8, {1, 1, 1}, {3}),
                          MakeTensor(DType::kUInt8, {1, 1, 1}, {4}), out,
                          Scalar(int64_t{1}), Scalar(int64_t{256}))
                  .ok());
  ExpectTensor(out, DType::kUInt8, {1, 1, 1}, {12}, 0, 0);
}

TEST(Gemm, BetaZeroIgnoresOutAndAlphaZeroSkipsTheProduct) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    const Tensor a = MakeTensor(d, {1, 2, 2}, {1, 2, 3, 4});
    const Tensor eye = MakeTensor(d, {1, 2, 2}, {1, 0, 0, 1});
    // beta 0: NaNs in out do not reach the result.
    Tensor out = MakeTensor(d, {1, 2, 2}, {kNaN, kNaN, kNaN, kNaN});
    ASSERT_TRUE(BatchedGemm(a, eye, out, Scalar(int64_t{1}), Scalar(0.0)).ok());
    ExpectTensor(out, d, {1, 2, 2}, {1, 2, 3, 4}, 0, 0);
    // alpha 0: NaNs in a do not reach the result; out is beta * out.
    const Tensor nan_a = MakeTensor(d, {1, 2, 2}, {kNaN, 1, 1, kNaN});
    out = MakeTensor(d, {1, 2, 2}, {1, 2, 3, 4});
    ASSERT_TRUE(
        BatchedGemm(nan_a, eye, out, Scalar(0.0), Scalar(int64_t{2})).ok());
    ExpectTensor(out, d, {1, 2, 2}, {2, 4, 6, 8}, 0, 0);
    // Both: zeros.
    out = MakeTensor(d, {1, 2, 2}, {kNaN, 1, 1, kNaN});
    ASSERT_TRUE(BatchedGemm(nan_a, eye, out, Scalar(0.0), Scalar(0.0)).ok());
    ExpectTensor(out, d, {1, 2, 2}, {0, 0, 0, 0}, 0, 0);
  }
}

TEST(Gemm, EmptyExtents) {
  for (DType d : {DType::kFloat32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(d));
    // K = 0: the product is zero, out = beta * out.
    Tensor out = MakeTensor(d, {2, 1, 2}, {1, 2, 3, 4});
    ASSERT_TRUE(BatchedGemm(MakeTensor(d, {2, 1, 0}, {}),
                            MakeTensor(d, {2, 0, 2}, {}), out,
                            Scalar(int64_t{1}), Scalar(int64_t{3}))
                    .ok());
    ExpectTensor(out, d, {2, 1, 2}, {3, 6, 9, 12}, 0, 0);
    // M = 0 or B = 0: nothing to write.
    Tensor none = MakeTensor(d, {1, 0, 2}, {});
    EXPECT_TRUE(BatchedGemm(MakeTensor(d, {1, 0, 3}, {}),
                            MakeTensor(d, {1, 3, 2}, {1, 2, 3, 4, 5, 6}), none,
                            Scalar(int64_t{1}), Scalar(int64_t{0}))
                    .ok());
    Tensor no_batch = MakeTensor(d, {0, 2, 2}, {});
    EXPECT_TRUE(BatchedGemm(MakeTensor(d, {0, 2, 3}, {}),
                            MakeTensor(d, {0, 3, 2}, {}), no_batch,
                            Scalar(int64_t{1}), Scalar(int64_t{0}))
                    .ok());
  }
}

TEST(Gemm, HugeAlphaSaturatesInTheAccumulator) {
  // float16 accumulates in float: alpha 1e300 is +inf there, not UB.
  Tensor out = MakeTensor(DType::kFloat16, {1, 1, 1}, {0});
  ASSERT_TRUE(BatchedGemm(MakeTensor(DType::kFloat16, {1, 1, 1}, {1}),
                          MakeTensor(DType::kFloat16, {1, 1, 1}, {-2}), out,
                          Scalar(1e300), Scalar(0.0))
                  .ok());
  ExpectTensor(out, DType::kFloat16, {1, 1, 1},
               {-std::numeric_limits<double>::infinity()}, 0, 0);
}

TEST(Gemm, BoolIsRejected) {
  const Tensor t = MakeTensor(DType::kBool, {1, 1, 1}, {1});
  const absl::Status s =
      BatchedGemm(t, t, t, Scalar(int64_t{1}), Scalar(int64_t{0}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), "matrix products are not defined for bool");
}

TEST(Gemm, AsBatchOfOneIsAView) {
  const Tensor t = NonContiguousCopy(testing::Iota({2, 3}));
  const Tensor b = AsBatchOfOne(t);
  EXPECT_EQ(b.data(), t.data());
  EXPECT_EQ(b.dim(), 3);
  EXPECT_EQ(b.size(0), 1);
  EXPECT_EQ(b.size(1), 2);
  EXPECT_EQ(b.size(2), 3);
  EXPECT_EQ(b.stride(0), 0);
  EXPECT_EQ(b.stride(1), t.stride(0));
  EXPECT_EQ(b.stride(2), t.stride(1));
  EXPECT_EQ(ToDoubles(b), ToDoubles(t));
}

}  // namespace
}  // namespace guardjit
