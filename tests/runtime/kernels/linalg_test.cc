// mm, bmm and addmm against a naive triple loop over ToDoubles of the inputs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "runtime/tensor_copy.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::RoundingRtol;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

// Checks that `result` failed with `code` and a message containing `text`.
void ExpectError(const absl::StatusOr<std::vector<Tensor>>& result,
                 absl::StatusCode code, absl::string_view text) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(result.status().message().find(text), absl::string_view::npos)
      << result.status();
}

constexpr DType kMatmulDTypes[] = {
    DType::kFloat32,  DType::kFloat64, DType::kFloat16,
    DType::kBFloat16, DType::kInt8,    DType::kUInt8,
    DType::kInt16,    DType::kInt32,   DType::kInt64};

// Row-major [batch, m, n] = a [batch, m, k] @ b [batch, k, n] in double.
std::vector<double> NaiveMatmul(const std::vector<double>& a,
                                const std::vector<double>& b, int64_t batch,
                                int64_t m, int64_t k, int64_t n) {
  std::vector<double> out(batch * m * n, 0.0);
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          sum += a[(bi * m + i) * k + kk] * b[(bi * k + kk) * n + j];
        }
        out[(bi * m + i) * n + j] = sum;
      }
    }
  }
  return out;
}

// Checks `actual` against `expected` with a tolerance for a sum of k
// products of values below 2, rounded once to `dtype`.
void ExpectProduct(const Tensor& actual, DType dtype, IntSpan sizes,
                   const std::vector<double>& expected, int64_t k) {
  const double eps = RoundingRtol(dtype);
  ExpectTensor(actual, dtype, sizes, expected, eps * 4.0 * (k + 1), eps);
}

// `t` ([..., r, c]) with its matrices stored column by column: the layout a
// transposed contiguous matrix has.
Tensor ColumnMajor(const Tensor& t) {
  const int rank = t.dim();
  Shape sizes(t.sizes().begin(), t.sizes().end());
  std::swap(sizes[rank - 1], sizes[rank - 2]);
  Tensor storage = *Tensor::Empty(t.dtype(), sizes);
  Shape strides(storage.strides().begin(), storage.strides().end());
  std::swap(strides[rank - 1], strides[rank - 2]);
  Tensor view = storage.AsStrided(t.sizes(), strides);
  CopyInto(view, t);
  return view;
}

// `t` (2-D) as a slice, with a storage offset and padded rows, of a larger
// buffer.
Tensor Sliced(const Tensor& t) {
  const int64_t rows = t.size(0), cols = t.size(1);
  Tensor big = RandomTensor(t.dtype(), {rows + 2, cols + 3}, 99);
  Tensor view = big.AsStrided({rows, cols}, {cols + 3, 1}, cols + 3 + 1);
  CopyInto(view, t);
  return view;
}

struct MatmulSize {
  int64_t m, k, n;
};

constexpr MatmulSize kSizes[] = {{1, 1, 1}, {3, 5, 7},   {1, 9, 4},
                                 {6, 1, 3}, {17, 13, 5}, {33, 65, 18}};

TEST(LinalgMmTest, MatchesNaiveLoopForEveryDType) {
  uint64_t seed = 1;
  for (DType dtype : kMatmulDTypes) {
    for (const MatmulSize& s : kSizes) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << s.m << "x"
                                        << s.k << "x" << s.n);
      Tensor a = RandomTensor(dtype, {s.m, s.k}, seed++);
      Tensor b = RandomTensor(dtype, {s.k, s.n}, seed++);
      Tensor out = RunOp1("aten.mm.default", {a, b});
      ExpectProduct(out, dtype, {s.m, s.n},
                    NaiveMatmul(ToDoubles(a), ToDoubles(b), 1, s.m, s.k, s.n),
                    s.k);
    }
  }
}

TEST(LinalgMmTest, AnyStridesAndOffsets) {
  uint64_t seed = 100;
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
    for (const MatmulSize& s : kSizes) {
      SCOPED_TRACE(::testing::Message() << DTypeName(dtype) << " " << s.m << "x"
                                        << s.k << "x" << s.n);
      Tensor a = RandomTensor(dtype, {s.m, s.k}, seed++);
      Tensor b = RandomTensor(dtype, {s.k, s.n}, seed++);
      const std::vector<double> expected =
          NaiveMatmul(ToDoubles(a), ToDoubles(b), 1, s.m, s.k, s.n);
      // Every pairing of layouts: contiguous, transposed, sliced with an
      // offset, padded column-major (NonContiguousCopy), and strided with no
      // unit stride at all (needs a copy before BLAS).
      std::vector<Tensor> as = {a, ColumnMajor(a), Sliced(a),
                                NonContiguousCopy(a)};
      std::vector<Tensor> bs = {b, ColumnMajor(b), Sliced(b),
                                NonContiguousCopy(b)};
      Tensor wide_a = RandomTensor(dtype, {2 * s.m, 2 * s.k}, seed++);
      Tensor strided_a = wide_a.AsStrided({s.m, s.k}, {4 * s.k, 2});
      CopyInto(strided_a, a);
      as.push_back(strided_a);
      for (size_t i = 0; i < as.size(); ++i) {
        for (size_t j = 0; j < bs.size(); ++j) {
          SCOPED_TRACE(::testing::Message() << "layouts " << i << ", " << j);
          ExpectProduct(RunOp1("aten.mm.default", {as[i], bs[j]}), dtype,
                        {s.m, s.n}, expected, s.k);
        }
      }
    }
  }
}

TEST(LinalgMmTest, BroadcastRowsWithZeroStride) {
  // A stride-0 operand (an expanded row) cannot go to BLAS as is.
  Tensor row = MakeTensor(DType::kFloat32, {1, 3}, {1, 2, 3});
  Tensor a = row.AsStrided({4, 3}, {0, 1});
  Tensor b = MakeTensor(DType::kFloat32, {3, 2}, {1, 0, 0, 1, 1, 1});
  ExpectTensor(RunOp1("aten.mm.default", {a, b}), DType::kFloat32, {4, 2},
               {4, 5, 4, 5, 4, 5, 4, 5});
}

TEST(LinalgMmTest, EmptyOperands) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    Tensor out = RunOp1("aten.mm.default", {*Tensor::Empty(dtype, {0, 3}),
                                            *Tensor::Empty(dtype, {3, 4})});
    ExpectTensor(out, dtype, {0, 4}, {});
    // An empty inner dim sums nothing: zeros.
    out = RunOp1("aten.mm.default", {*Tensor::Empty(dtype, {2, 0}),
                                     *Tensor::Empty(dtype, {0, 3})});
    ExpectTensor(out, dtype, {2, 3}, std::vector<double>(6, 0.0));
    out = RunOp1("aten.mm.default", {*Tensor::Empty(dtype, {2, 3}),
                                     *Tensor::Empty(dtype, {3, 0})});
    ExpectTensor(out, dtype, {2, 0}, {});
  }
}

TEST(LinalgMmTest, IntegersWrapAround) {
  // 100 * 100 = 10000 = 16 (mod 256); uint8 200*2 + 100*1 = 500 = 244.
  ExpectTensor(
      RunOp1("aten.mm.default", {MakeTensor(DType::kInt8, {1, 1}, {100}),
                                 MakeTensor(DType::kInt8, {1, 1}, {100})}),
      DType::kInt8, {1, 1}, {16});
  ExpectTensor(
      RunOp1("aten.mm.default", {MakeTensor(DType::kUInt8, {1, 2}, {200, 100}),
                                 MakeTensor(DType::kUInt8, {2, 1}, {2, 1})}),
      DType::kUInt8, {1, 1}, {244});
  Tensor big = *Tensor::Empty(DType::kInt64, {1, 2});
  big.data_as<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  big.data_as<int64_t>()[1] = 1;
  Tensor twos = MakeTensor(DType::kInt64, {2, 1}, {2, 1});
  Tensor out = RunOp1("aten.mm.default", {big, twos});
  // (2^63 - 1) * 2 + 1 = 2^64 - 1 = -1 (mod 2^64).
  EXPECT_EQ(out.data_as<int64_t>()[0], -1);
}

TEST(LinalgMmTest, RejectsBadOperands) {
  Tensor m23 = RandomTensor(DType::kFloat32, {2, 3}, 1);
  Tensor m45 = RandomTensor(DType::kFloat32, {4, 5}, 2);
  auto out = RunOp("aten.mm.default", {m23, m45});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': self and mat2 shapes cannot be "
              "multiplied (2x3 and 4x5)");

  out = RunOp("aten.mm.default",
              {RandomTensor(DType::kFloat32, {2, 3, 1}, 3), m45});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'self': expected a 2-D tensor, got a 3-D");

  out = RunOp("aten.mm.default", {m23, RandomTensor(DType::kFloat32, {3}, 4)});
  ExpectError(out, absl::StatusCode::kInvalidArgument, "argument 'mat2'");

  out =
      RunOp("aten.mm.default", {m23, RandomTensor(DType::kFloat64, {3, 2}, 5)});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': expected self and mat2 to have the "
              "same dtype, but got: float32 != float64");

  out = RunOp("aten.mm.default", {RandomTensor(DType::kBool, {2, 3}, 6),
                                  RandomTensor(DType::kBool, {3, 2}, 7)});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'self': matrix products are not defined for "
              "bool");

  // A number literal is a 0-dim tensor: a rank error, not a crash.
  out = RunOp("aten.mm.default", {m23, 2.0});
  ExpectError(out, absl::StatusCode::kInvalidArgument, "argument 'mat2'");
}

TEST(LinalgBmmTest, MatchesNaiveLoopForEveryDType) {
  uint64_t seed = 200;
  for (DType dtype : kMatmulDTypes) {
    for (int64_t batch : {1, 3}) {
      for (const MatmulSize& s : kSizes) {
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(dtype) << " " << batch << "x" << s.m << "x"
                     << s.k << "x" << s.n);
        Tensor a = RandomTensor(dtype, {batch, s.m, s.k}, seed++);
        Tensor b = RandomTensor(dtype, {batch, s.k, s.n}, seed++);
        const std::vector<double> expected =
            NaiveMatmul(ToDoubles(a), ToDoubles(b), batch, s.m, s.k, s.n);
        ExpectProduct(RunOp1("aten.bmm.default", {a, b}), dtype,
                      {batch, s.m, s.n}, expected, s.k);
        // Transposed matrices inside the batch, and a padded layout with
        // the batch dim fastest.
        ExpectProduct(RunOp1("aten.bmm.default", {ColumnMajor(a), b}), dtype,
                      {batch, s.m, s.n}, expected, s.k);
        ExpectProduct(
            RunOp1("aten.bmm.default", {NonContiguousCopy(a), ColumnMajor(b)}),
            dtype, {batch, s.m, s.n}, expected, s.k);
      }
    }
  }
}

TEST(LinalgBmmTest, BroadcastBatchAndEmpty) {
  // One matrix repeated over the batch by a stride-0 batch dim.
  Tensor m = RandomTensor(DType::kFloat32, {1, 2, 3}, 7);
  Tensor a = m.AsStrided({4, 2, 3}, {0, 3, 1});
  Tensor b = RandomTensor(DType::kFloat32, {4, 3, 5}, 8);
  std::vector<double> a_values = ToDoubles(a);
  ExpectProduct(RunOp1("aten.bmm.default", {a, b}), DType::kFloat32, {4, 2, 5},
                NaiveMatmul(a_values, ToDoubles(b), 4, 2, 3, 5), 3);

  ExpectTensor(
      RunOp1("aten.bmm.default", {*Tensor::Empty(DType::kFloat32, {0, 2, 3}),
                                  *Tensor::Empty(DType::kFloat32, {0, 3, 4})}),
      DType::kFloat32, {0, 2, 4}, {});
  ExpectTensor(
      RunOp1("aten.bmm.default", {*Tensor::Empty(DType::kInt32, {2, 1, 0}),
                                  *Tensor::Empty(DType::kInt32, {2, 0, 2})}),
      DType::kInt32, {2, 1, 2}, {0, 0, 0, 0});
}

TEST(LinalgBmmTest, RejectsBadOperands) {
  Tensor a = RandomTensor(DType::kFloat32, {2, 2, 3}, 1);
  auto out = RunOp("aten.bmm.default",
                   {a, RandomTensor(DType::kFloat32, {3, 3, 4}, 2)});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': batch size 3 does not match self's "
              "batch size 2");

  out = RunOp("aten.bmm.default",
              {a, RandomTensor(DType::kFloat32, {2, 4, 5}, 3)});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': self and mat2 shapes cannot be "
              "multiplied (2x2x3 and 2x4x5)");

  out =
      RunOp("aten.bmm.default", {RandomTensor(DType::kFloat32, {2, 3}, 4), a});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'self': expected a 3-D tensor, got a 2-D");

  out =
      RunOp("aten.bmm.default", {a, RandomTensor(DType::kInt64, {2, 3, 4}, 5)});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': expected self "
              "and mat2 to have the same dtype");
}

TEST(LinalgAddmmTest, BetaAlphaAndBroadcastSelf) {
  const int64_t m = 5, k = 7, n = 6;
  uint64_t seed = 300;
  const std::vector<Shape> self_shapes = {{m, n}, {n}, {1, n},
                                          {m, 1}, {},  {1, 1}};
  for (DType dtype : kMatmulDTypes) {
    const bool integral = IsIntegral(dtype, false);
    // Integral tensors take integral beta and alpha, as in PyTorch.
    const std::vector<std::pair<OpArg, double>> betas =
        integral
            ? std::vector<std::pair<OpArg, double>>{{2, 2}, {-1, -1}}
            : std::vector<std::pair<OpArg, double>>{{0.5, 0.5}, {-1.5, -1.5}};
    for (const Shape& self_shape : self_shapes) {
      for (const auto& [beta, beta_value] : betas) {
        SCOPED_TRACE(::testing::Message()
                     << DTypeName(dtype) << " self " << self_shape.size()
                     << "-D, beta " << beta_value);
        Tensor self = RandomTensor(dtype, self_shape, seed++);
        Tensor a = RandomTensor(dtype, {m, k}, seed++);
        Tensor b = RandomTensor(dtype, {k, n}, seed++);
        const double alpha = integral ? 3 : 0.25;
        std::vector<double> expected =
            NaiveMatmul(ToDoubles(a), ToDoubles(b), 1, m, k, n);
        std::vector<double> self_values = ToDoubles(self);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            // Index of self's element that broadcasts to (i, j).
            int64_t si = 0;
            if (self_shape.size() == 2) {
              si = (self_shape[0] == 1 ? 0 : i) * self_shape[1] +
                   (self_shape[1] == 1 ? 0 : j);
            } else if (self_shape.size() == 1) {
              si = j;
            }
            double& e = expected[i * n + j];
            e = beta_value * self_values[si] + alpha * e;
          }
        }
        OpArg alpha_arg = integral ? OpArg(3) : OpArg(0.25);
        Tensor out = RunOp1("aten.addmm.default", {self, a, ColumnMajor(b)},
                            {{"beta", beta}, {"alpha", alpha_arg}});
        // For wrapped integers the expected value is exact; narrow types wrap.
        if (integral) {
          Tensor expected_t = MakeTensor(DType::kInt64, {m, n}, expected);
          std::vector<double> wrapped =
              ToDoubles(MakeTensor(dtype, {m, n}, ToDoubles(expected_t)));
          ExpectTensor(out, dtype, {m, n}, wrapped);
        } else {
          ExpectProduct(out, dtype, {m, n}, expected, k + 2);
        }
      }
    }
  }
}

TEST(LinalgAddmmTest, DefaultsAndNonContiguousSelf) {
  Tensor self = RandomTensor(DType::kFloat64, {3, 4}, 1);
  Tensor a = RandomTensor(DType::kFloat64, {3, 2}, 2);
  Tensor b = RandomTensor(DType::kFloat64, {2, 4}, 3);
  std::vector<double> expected =
      NaiveMatmul(ToDoubles(a), ToDoubles(b), 1, 3, 2, 4);
  std::vector<double> self_values = ToDoubles(self);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += self_values[i];
  ExpectTensor(RunOp1("aten.addmm.default", {NonContiguousCopy(self), Sliced(a),
                                             NonContiguousCopy(b)}),
               DType::kFloat64, {3, 4}, expected, 1e-12, 1e-12);
}

TEST(LinalgAddmmTest, BetaZeroIgnoresSelfAndAlphaZeroIgnoresProduct) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    Tensor nan_self = MakeTensor(dtype, {2, 2}, std::vector<double>(4, NAN));
    Tensor a = MakeTensor(dtype, {2, 1}, {1, 2});
    Tensor b = MakeTensor(dtype, {1, 2}, {3, 4});
    ExpectTensor(RunOp1("aten.addmm.default", {nan_self, a, b},
                        {{"beta", 0}, {"alpha", 2}}),
                 dtype, {2, 2}, {6, 8, 12, 16});
    // alpha == 0: the product is skipped, as in BLAS, so NaNs there vanish.
    Tensor self = MakeTensor(dtype, {2}, {1, -1});
    Tensor nan_a = MakeTensor(dtype, {2, 1}, {NAN, 1});
    ExpectTensor(RunOp1("aten.addmm.default", {self, nan_a, b},
                        {{"beta", 2}, {"alpha", 0}}),
                 dtype, {2, 2}, {2, -2, 2, -2});
  }
  // An empty inner dim leaves beta * self.
  ExpectTensor(RunOp1("aten.addmm.default",
                      {MakeTensor(DType::kFloat32, {2}, {1, 2}),
                       *Tensor::Empty(DType::kFloat32, {3, 0}),
                       *Tensor::Empty(DType::kFloat32, {0, 2})},
                      {{"beta", 3}}),
               DType::kFloat32, {3, 2}, {3, 6, 3, 6, 3, 6});
}

TEST(LinalgAddmmTest, RejectsBadOperands) {
  Tensor a = RandomTensor(DType::kFloat32, {2, 3}, 1);
  Tensor b = RandomTensor(DType::kFloat32, {3, 4}, 2);
  auto out = RunOp("aten.addmm.default",
                   {RandomTensor(DType::kFloat32, {3}, 3), a, b});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'self': shape [3] cannot be broadcast to the "
              "result shape [2, 4]");

  out = RunOp("aten.addmm.default",
              {RandomTensor(DType::kFloat32, {1, 2, 4}, 3), a, b});
  ExpectError(out, absl::StatusCode::kInvalidArgument, "argument 'self'");

  out = RunOp("aten.addmm.default",
              {RandomTensor(DType::kFloat64, {4}, 3), a, b});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'self': expected mat1 and self to have the "
              "same dtype, but got: float32 != float64");

  out = RunOp("aten.addmm.default",
              {RandomTensor(DType::kFloat32, {4}, 3), a, a});
  ExpectError(out, absl::StatusCode::kInvalidArgument,
              "argument 'mat2': mat1 and mat2 shapes cannot be "
              "multiplied (2x3 and 2x3)");
}

}  // namespace
}  // namespace guardjit
