#ifndef GUARDJIT_TESTS_RUNTIME_KERNELS_BINARY_TEST_UTIL_H_
#define GUARDJIT_TESTS_RUNTIME_KERNELS_BINARY_TEST_UTIL_H_

// Helpers of the binary-family kernel tests: dtype lists, expected values
// computed in double and wrapped or rounded the way the dtype stores them,
// strided views of test data and error checks.

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "runtime/tensor_copy.h"
#include "tests/test_util.h"

namespace guardjit::testing::binary {

// An integral value `v` as `dtype` stores it: two's complement wrap-around
// for integer types, v != 0 for bool, v itself for floating types.
inline double StoredAs(DType dtype, double v) {
  auto wrap = [&](int bits, bool is_signed) {
    const double span = std::ldexp(1.0, bits);
    double r = std::fmod(v, span);
    if (r < 0) r += span;
    if (is_signed && r >= span / 2) r -= span;
    return r;
  };
  switch (dtype) {
    case DType::kBool:
      return v != 0 ? 1 : 0;
    case DType::kUInt8:
      return wrap(8, false);
    case DType::kInt8:
      return wrap(8, true);
    case DType::kInt16:
      return wrap(16, true);
    case DType::kInt32:
      return wrap(32, true);
    default:
      return v;  // int64 tests keep within 2^53; floats unchanged
  }
}

// f applied to the elements of equally shaped `a` and `b`.
inline std::vector<double> Zip(const Tensor& a, const Tensor& b,
                               const std::function<double(double, double)>& f) {
  std::vector<double> x = ToDoubles(a);
  std::vector<double> y = ToDoubles(b);
  std::vector<double> out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back(f(x[i], y[i]));
  return out;
}

// f over the broadcast of `inputs` (NumPy rules, computed here by index
// arithmetic rather than with the library's broadcasting), row-major.
inline std::vector<double> BroadcastApply(
    const std::vector<Tensor>& inputs, IntSpan out_shape,
    const std::function<double(const std::vector<double>&)>& f) {
  std::vector<std::vector<double>> values;
  for (const Tensor& t : inputs) values.push_back(ToDoubles(t));
  int64_t numel = 1;
  for (int64_t s : out_shape) numel *= s;
  const int rank = static_cast<int>(out_shape.size());
  std::vector<double> out;
  for (int64_t flat = 0; flat < numel; ++flat) {
    std::vector<int64_t> index(rank);
    for (int d = rank - 1; d >= 0; --d) {
      int64_t stride = 1;
      for (int e = d + 1; e < rank; ++e) stride *= out_shape[e];
      index[d] = (flat / stride) % out_shape[d];
    }
    std::vector<double> args;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& t = inputs[k];
      int64_t offset = 0;
      for (int d = 0; d < t.dim(); ++d) {
        int64_t i = t.size(d) == 1 ? 0 : index[rank - t.dim() + d];
        offset = offset * t.size(d) + i;
      }
      args.push_back(values[k][offset]);
    }
    out.push_back(f(args));
  }
  return out;
}

// `t`'s values in a row-major layout with gaps (every other element) and a
// storage offset of 7 elements: a sliced view, unlike NonContiguousCopy's
// transposed one.
inline Tensor SlicedCopy(const Tensor& t) {
  Shape strides = ContiguousStrides(t.sizes());
  for (int64_t& s : strides) s *= 2;
  Tensor storage = *Tensor::Empty(t.dtype(), {2 * t.numel() + 8});
  Tensor view = storage.AsStrided(t.sizes(), strides, 7);
  CopyInto(view, t);
  return view;
}

// `result` is INVALID_ARGUMENT and its message contains every fragment
// (e.g. "argument 'other'").
inline void ExpectInvalid(const absl::StatusOr<std::vector<Tensor>>& result,
                          const std::vector<std::string>& fragments) {
  ASSERT_FALSE(result.ok()) << "expected an error";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
      << result.status();
  for (const std::string& f : fragments) {
    EXPECT_NE(std::string(result.status().message()).find(f), std::string::npos)
        << "'" << f << "' not in: " << result.status().message();
  }
}

inline Arg None() { return Arg::None(); }

}  // namespace guardjit::testing::binary

#endif  // GUARDJIT_TESTS_RUNTIME_KERNELS_BINARY_TEST_UTIL_H_
