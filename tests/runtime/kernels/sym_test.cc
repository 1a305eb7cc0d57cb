// The kernels of the size ops (runtime/kernels/sym.cc): each value is a
// 0-dim wrapped number, int64 for sizes and bool for comparisons, read from
// the real tensor (its strides and storage offset too).

#include <cstdint>
#include <vector>

#include "core/ops/sym_ops.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;
using testing::Iota;
using testing::RunOp;

// The one output of `target` on `args`, checked to be a wrapped number.
Tensor Value(const std::string& target, std::vector<testing::OpArg> args) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(target, std::move(args));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1) return Tensor();
  const Tensor& v = (*out)[0];
  EXPECT_EQ(v.dim(), 0);
  EXPECT_TRUE(v.is_wrapped_number()) << target;
  return v;
}

TEST(SymKernelsTest, SizeAndNumelOfTheTensor) {
  const Tensor x = Iota({2, 3, 5});
  const Tensor size = Value("aten.sym_size.int", {x, -2});
  EXPECT_EQ(size.dtype(), DType::kInt64);
  EXPECT_EQ(size.ItemAsInt64(), 3);
  EXPECT_EQ(Value("aten.sym_numel.default", {x}).ItemAsInt64(), 30);
  EXPECT_EQ(Value("aten.sym_numel.default", {Iota({4, 0})}).ItemAsInt64(), 0);
}

TEST(SymKernelsTest, StrideOfANonContiguousInput) {
  // [2, 3] stored transposed with padding: its strides are not [3, 1].
  const Tensor x = testing::NonContiguousCopy(Iota({2, 3}));
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_EQ(Value("aten.sym_stride.int", {x, 0}).ItemAsInt64(), x.stride(0));
  EXPECT_EQ(Value("aten.sym_stride.int", {x, -1}).ItemAsInt64(), x.stride(1));
}

TEST(SymKernelsTest, EveryOperatorOnLiterals) {
  for (const SymOpDef& def : kSymOps) {
    for (int64_t a : {-7, 4}) {
      for (int64_t b : {-2, 3}) {
        const Tensor v = Value(def.target, {a, b});
        EXPECT_EQ(v.dtype(), def.compare ? DType::kBool : DType::kInt64)
            << def.target;
        EXPECT_EQ(v.ItemAsInt64(), ApplySymOp<int64_t>(def.op, a, b))
            << def.target << "(" << a << ", " << b << ")";
      }
    }
  }
  EXPECT_EQ(Value("operator.floordiv", {int64_t{-7}, int64_t{2}}).ItemAsInt64(),
            -4);
  EXPECT_EQ(Value("operator.mod", {int64_t{-7}, int64_t{2}}).ItemAsInt64(), 1);
  EXPECT_EQ(Value("operator.add", {int64_t{2}, true}).ItemAsInt64(), 3);
}

TEST(SymKernelsTest, DivisionByZeroIsAnError) {
  ExpectError(RunOp("operator.floordiv", {int64_t{3}, int64_t{0}}),
              absl::StatusCode::kInvalidArgument,
              "integer division or modulo by zero");
  ExpectError(RunOp("operator.mod", {int64_t{3}, int64_t{0}}),
              absl::StatusCode::kInvalidArgument,
              "integer division or modulo by zero");
}

}  // namespace
}  // namespace guardjit
