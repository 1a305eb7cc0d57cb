#ifndef GUARDJIT_TESTS_TEST_UTIL_H_
#define GUARDJIT_TESTS_TEST_UTIL_H_

// Helpers shared by the tests: tensors from values, random and non-contiguous
// tensors, and running one op through the graph builder and the eager
// interpreter exactly as a graph would.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/arg_value.h"
#include "core/tensor.h"
#include "gtest/gtest.h"

namespace guardjit::testing {

// Every dtype guardjit supports, for tests that loop over them.
inline constexpr DType kAllDTypes[] = {
    DType::kBool,    DType::kUInt8,  DType::kInt8,    DType::kInt16,
    DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
    DType::kFloat32, DType::kFloat64};

// Relative error of one rounding to `dtype` (zero for exact types): the
// tolerance for results computed in higher precision and rounded once.
inline double RoundingRtol(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 1e-3;
    case DType::kBFloat16:
      return 8e-3;
    case DType::kFloat32:
      return 1e-6;
    case DType::kFloat64:
      return 1e-12;
    default:
      return 0;
  }
}

// A contiguous tensor of `dtype` holding `values` (converted as PyTorch
// would) in row-major order.
Tensor MakeTensor(DType dtype, IntSpan sizes,
                  const std::vector<double>& values);
// Values of any tensor (any strides) in row-major order, as double.
std::vector<double> ToDoubles(const Tensor& t);
// Uniform values in [lo, hi) (integers for integral dtypes, 0/1 for bool).
Tensor RandomTensor(DType dtype, IntSpan sizes, uint64_t seed, double lo = -2.0,
                    double hi = 2.0);
// The same values as `t` in a non-contiguous layout: stored transposed in a
// buffer with padding and a nonzero storage offset.
Tensor NonContiguousCopy(const Tensor& t);
// 0, 1, 2, ... in row-major order.
Tensor Iota(IntSpan sizes, DType dtype = DType::kFloat32);

// That every tensor of `tensors` is one as if allocated alone (from a
// ConstantArena, core/constant_arena.h, or not): a storage of its own,
// starting at the tensor and holding its bytes, 64-byte aligned.
void ExpectStoragesOfTheirOwn(const std::vector<const Tensor*>& tensors);

// That `result` failed with `code` and a message containing `needle`.
template <typename T>
void ExpectError(const absl::StatusOr<T>& result, absl::StatusCode code,
                 absl::string_view needle) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(result.status().message().find(needle), absl::string_view::npos)
      << result.status();
}

// One argument of RunOp: a tensor (becomes a graph input), a list of tensors
// (a default-constructed Tensor in it is a None element), or a literal.
class OpArg {
 public:
  OpArg(Tensor t) : v_(std::move(t)) {}                 // NOLINT
  OpArg(std::vector<Tensor> ts) : v_(std::move(ts)) {}  // NOLINT
  OpArg(Arg a) : v_(std::move(a)) {}                    // NOLINT
  OpArg(int v) : v_(Arg::Int(v)) {}                     // NOLINT
  OpArg(int64_t v) : v_(Arg::Int(v)) {}                 // NOLINT
  OpArg(double v) : v_(Arg::Float(v)) {}                // NOLINT
  OpArg(bool v) : v_(Arg::Bool(v)) {}                   // NOLINT
  OpArg(DType d) : v_(Arg::OfDType(d)) {}               // NOLINT
  OpArg(const char* s) : v_(Arg::String(s)) {}          // NOLINT
  OpArg(std::initializer_list<int64_t> ints);           // int list
  OpArg(const std::vector<int64_t>& ints);              // NOLINT

  const std::variant<Tensor, std::vector<Tensor>, Arg>& value() const {
    return v_;
  }

 private:
  std::variant<Tensor, std::vector<Tensor>, Arg> v_;
};

// Runs `target` on `args`/`kwargs` through GraphBuilder + EagerInterpreter and
// returns every output (ops returning Tensor[] return `num_list_outputs`).
absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& target, std::vector<OpArg> args,
    std::vector<std::pair<std::string, OpArg>> kwargs = {},
    int num_list_outputs = 0);
// RunOp for single-output ops; fails the test on error.
Tensor RunOp1(const std::string& target, std::vector<OpArg> args,
              std::vector<std::pair<std::string, OpArg>> kwargs = {});

// Checks dtype, shape and every value of `actual` against `expected` within
// atol + rtol * |expected| (NaNs must match NaNs).
void ExpectTensor(const Tensor& actual, DType dtype, IntSpan sizes,
                  const std::vector<double>& expected, double atol = 1e-6,
                  double rtol = 1e-6);

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_TEST_UTIL_H_
