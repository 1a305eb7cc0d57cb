#include "runtime/kernels/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/status_macros.h"
#include "runtime/blas_panels.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

constexpr int64_t kMaxBlasInt = std::numeric_limits<blasint>::max();

// The BLAS view of the [R, C] matrices of a [B, R, C] operand `t`, if their
// strides allow one without a copy.
std::optional<BlasMatrix> BlasLayout(const Tensor& t) {
  return guardjit::BlasLayout(t.size(1), t.size(2), t.stride(1), t.stride(2));
}

void CallBlas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
              blasint k, float alpha, const float* a, blasint lda,
              const float* b, blasint ldb, float beta, float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void CallBlas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
              blasint k, double alpha, const double* a, blasint lda,
              const double* b, blasint ldb, double beta, double* c,
              blasint ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

// Integers accumulate in uint64_t: wrap-around is defined there, and the low
// bits of a modular sum do not depend on the width it was computed in, so
// the result equals PyTorch's accumulation in the element type.
template <typename T>
using GemmAcc = std::conditional_t<kIsFloat<T>, OpMath<T>, uint64_t>;

template <typename T>
GemmAcc<T> ScalarAs(const Scalar& s) {
  using Acc = GemmAcc<T>;
  if constexpr (std::is_floating_point_v<Acc>) {
    const double d = s.to_double();
    const double max = std::numeric_limits<Acc>::max();
    // Clamped so that narrowing a huge double to float is not undefined.
    if (std::isfinite(d) && std::fabs(d) > max) {
      return d > 0 ? std::numeric_limits<Acc>::infinity()
                   : -std::numeric_limits<Acc>::infinity();
    }
    return static_cast<Acc>(d);
  } else {
    const int64_t v =
        s.is_float() ? Convert<int64_t>(s.to_double()) : s.to_int();
    return static_cast<uint64_t>(v);
  }
}

template <typename T>
GemmAcc<T> Load(const T* p) {
  if constexpr (kIsFloat<T>) {
    return static_cast<GemmAcc<T>>(*p);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(*p));
  }
}

template <typename T>
void ReferenceGemm(const Tensor& a, const Tensor& b, const Tensor& out,
                   const Scalar& alpha_value, const Scalar& beta_value) {
  using Acc = GemmAcc<T>;
  const Acc alpha = ScalarAs<T>(alpha_value);
  const Acc beta = ScalarAs<T>(beta_value);
  // What counts is beta as the element type: 256 is zero for uint8.
  const bool ignore_out = static_cast<T>(beta) == static_cast<T>(0);
  // alpha == 0 skips the product, as in reference BLAS: NaNs in a, b vanish.
  const bool skip_product = static_cast<T>(alpha) == static_cast<T>(0);
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2);
  const int64_t k = a.size(2);
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  T* po = out.data_as<T>();
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), Acc(0));
      const T* a_row = pa + bi * a.stride(0) + i * a.stride(1);
      for (int64_t kk = 0; kk < k && !skip_product; ++kk) {
        const Acc aik = Load(a_row + kk * a.stride(2));
        const T* b_row = pb + bi * b.stride(0) + kk * b.stride(1);
        for (int64_t j = 0; j < n; ++j) {
          row[j] += aik * Load(b_row + j * b.stride(2));
        }
      }
      T* o_row = po + bi * out.stride(0) + i * out.stride(1);
      for (int64_t j = 0; j < n; ++j) {
        T* o = o_row + j * out.stride(2);
        Acc r = alpha * row[j];
        if (!ignore_out) r += beta * Load(o);
        *o = static_cast<T>(r);
      }
    }
  }
}

// Only called when every dim is in 1..kMaxBlasInt and out is row-major.
template <typename T>
absl::Status BlasGemm(Tensor a, Tensor b, const Tensor& out,
                      const Scalar& alpha, const Scalar& beta,
                      BlasMatrix out_layout) {
  std::optional<BlasMatrix> la = BlasLayout(a);
  if (!la.has_value()) {
    ASSIGN_OR_RETURN(a, CopyAs(a, a.dtype()));
    la = BlasLayout(a);
  }
  std::optional<BlasMatrix> lb = BlasLayout(b);
  if (!lb.has_value()) {
    ASSIGN_OR_RETURN(b, CopyAs(b, b.dtype()));
    lb = BlasLayout(b);
  }
  if (!la.has_value() || !lb.has_value()) {
    return absl::InternalError("a contiguous copy has no BLAS layout");
  }
  const auto m = static_cast<blasint>(out.size(1));
  const auto n = static_cast<blasint>(out.size(2));
  const auto k = static_cast<blasint>(a.size(2));
  const T al = ScalarAs<T>(alpha), be = ScalarAs<T>(beta);
  for (int64_t i = 0; i < out.size(0); ++i) {
    CallBlas(la->trans, lb->trans, m, n, k, al,
             a.data_as<T>() + i * a.stride(0), la->ld,
             b.data_as<T>() + i * b.stride(0), lb->ld, be,
             out.data_as<T>() + i * out.stride(0), out_layout.ld);
  }
  return absl::OkStatus();
}

// out's layout when BLAS can compute the product, else nullopt.
std::optional<BlasMatrix> BlasOutLayout(const Tensor& a, const Tensor& out) {
  for (int64_t extent : {out.size(1), out.size(2), a.size(2)}) {
    if (extent < 1 || extent > kMaxBlasInt) return std::nullopt;
  }
  std::optional<BlasMatrix> layout = BlasLayout(out);
  if (!layout.has_value() || layout->trans != CblasNoTrans) return std::nullopt;
  return layout;
}

}  // namespace

absl::Status BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& out,
                         const Scalar& alpha, const Scalar& beta) {
  return VisitDType(out.dtype(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return absl::InvalidArgumentError(
          "matrix products are not defined for bool");
    } else {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        // OpenBLAS still multiplies when alpha == 0, so NaNs in a or b would
        // propagate; the loop skips the product as reference BLAS does.
        auto layout = BlasOutLayout(a, out);
        if (layout.has_value() && alpha.to_double() != 0.0) {
          return BlasGemm<T>(a, b, out, alpha, beta, *layout);
        }
      }
      ReferenceGemm<T>(a, b, out, alpha, beta);
      return absl::OkStatus();
    }
  });
}

Tensor AsBatchOfOne(const Tensor& t) {
  return t.AsStrided({1, t.size(0), t.size(1)}, {0, t.stride(0), t.stride(1)});
}

}  // namespace guardjit
