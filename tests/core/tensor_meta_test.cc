// What shape inference knows of a value (core/tensor_meta.h): metadata of
// tensors and wrapped numbers (integer ones keep their value), printing,
// equality over symbolic sizes, and the device constants go to.

#include "core/tensor_meta.h"

#include <cstdint>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(TensorMetaTest, OfATensorAndOfWrappedNumbers) {
  const TensorMeta t = TensorMeta::Of(*Tensor::Empty(DType::kFloat16, {2, 3}));
  EXPECT_EQ(t.dtype, DType::kFloat16);
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(static_cast<int64_t>(t.numel()), 6);
  EXPECT_FALSE(t.wrapped_number);
  EXPECT_FALSE(t.sym_value.has_value());
  // An integer literal keeps its value (a computed size); a float one not.
  const TensorMeta seven =
      TensorMeta::Of(Tensor::WrappedNumber(Scalar(int64_t{7})));
  EXPECT_TRUE(seven.wrapped_number);
  EXPECT_EQ(seven.dtype, DType::kInt64);
  ASSERT_TRUE(seven.sym_value.has_value());
  EXPECT_EQ(seven.sym_value->hint(), 7);
  const TensorMeta half = TensorMeta::Of(Tensor::WrappedNumber(Scalar(0.5)));
  EXPECT_TRUE(half.wrapped_number);
  EXPECT_FALSE(half.sym_value.has_value());
  const TensorMeta size = TensorMeta::SymValue(SymInt(4));
  EXPECT_EQ(size.dim(), 0);
  EXPECT_EQ(size.dtype, DType::kInt64);
  EXPECT_TRUE(size.wrapped_number);
}

TEST(TensorMetaTest, PrintsDTypeAndSizes) {
  EXPECT_EQ(TensorMeta(DType::kFloat32, Shape{2, 3}).ToString(),
            "float32[2, 3]");
  EXPECT_EQ(TensorMeta(DType::kInt64, SymShape{}).ToString(), "int64[]");
  const SymShape symbolic = {SymInt(SymExpr::Symbol(0), 5), SymInt(3)};
  EXPECT_EQ(TensorMeta(DType::kBool, symbolic).ToString(), "bool[s0, 3]");
}

TEST(TensorMetaTest, EqualityComparesExpressionsNotHints) {
  const TensorMeta a(DType::kFloat32, SymShape{SymInt(SymExpr::Symbol(0), 5)});
  const TensorMeta same_symbol_other_hint(
      DType::kFloat32, SymShape{SymInt(SymExpr::Symbol(0), 9)});
  const TensorMeta concrete(DType::kFloat32, Shape{5});
  const TensorMeta other_symbol(DType::kFloat32,
                                SymShape{SymInt(SymExpr::Symbol(1), 5)});
  EXPECT_TRUE(a == same_symbol_other_hint);
  EXPECT_FALSE(a == concrete);
  EXPECT_FALSE(a == other_symbol);
  EXPECT_FALSE(concrete == TensorMeta(DType::kFloat64, Shape{5}));
  EXPECT_FALSE(concrete == TensorMeta(DType::kFloat32, Shape{5, 1}));
  EXPECT_FALSE(concrete ==
               TensorMeta(DType::kFloat32, Shape{5}, *Device::Parse("cuda:0")));
  EXPECT_TRUE(concrete == TensorMeta(DType::kFloat32, Shape{5}));
}

TEST(TensorMetaTest, ConstantsGoToTheFirstDeviceInput) {
  const Device gpu1 = *Device::Parse("cuda:1");
  const std::vector<TensorMeta> on_cpu = {
      TensorMeta(DType::kFloat32, Shape{2})};
  EXPECT_EQ(ConstantsDevice(on_cpu), Device::Cpu());
  const std::vector<TensorMeta> mixed = {
      TensorMeta(DType::kFloat32, Shape{}),
      TensorMeta(DType::kFloat32, Shape{2}, gpu1)};
  EXPECT_EQ(ConstantsDevice(mixed), gpu1);
  EXPECT_EQ(ConstantsDevice(std::vector<TensorMeta>{}), Device::Cpu());
}

}  // namespace
}  // namespace guardjit
