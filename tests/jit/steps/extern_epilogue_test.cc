// What the extern steps' fusers share (jit/steps/extern_epilogue.h), on
// hand-built references and indices: fixed and per-call operands, the size
// text of dynamic steps, the point-index test that decides whether an
// epilogue reads the product pointwise, and parameter names. Fusing real
// epilogues: gemm_epilogue_test.cc, conv_step_test.cc.

#include "jit/steps/extern_epilogue.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

using E = IndexExpr;

TEST(ExternEpilogueTest, FixedRefOfConstantsOnly) {
  TensorRef ref;
  ref.slot = 3;
  ref.sizes = {E::Const(2), E::Const(5)};
  ref.strides = {E::Const(1), E::Const(2)};
  ref.offset = E::Const(7);
  const std::optional<FixedRef> fixed = FixedRefOf(ref);
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->slot, 3);
  EXPECT_EQ(fixed->sizes, (Shape{2, 5}));
  EXPECT_EQ(fixed->strides, (Shape{1, 2}));
  EXPECT_EQ(fixed->offset, 7);

  TensorRef symbolic_size = ref;
  symbolic_size.sizes[0] = E::Size(0);
  EXPECT_FALSE(FixedRefOf(symbolic_size).has_value());
  TensorRef symbolic_offset = ref;
  symbolic_offset.offset = E::Size(1) * E::Const(5);
  EXPECT_FALSE(FixedRefOf(symbolic_offset).has_value());
}

TEST(ExternEpilogueTest, BindRefEvaluatesForACallsSymbols) {
  TensorRef ref;
  ref.slot = 1;
  ref.sizes = {E::Size(0), E::Const(4)};
  ref.strides = {E::Const(4), E::Const(1)};
  ref.offset = E::Size(1) * E::Const(2);
  const std::vector<int64_t> symbols = {3, 10};
  const FixedRef bound = BindRef(ref, symbols);
  EXPECT_EQ(bound.slot, 1);
  EXPECT_EQ(bound.sizes, (Shape{3, 4}));
  EXPECT_EQ(bound.strides, (Shape{4, 1}));
  EXPECT_EQ(bound.offset, 20);
}

TEST(ExternEpilogueTest, SizeTextParenthesizesCompoundSizes) {
  EXPECT_EQ(SizeText(E::Const(64)), "64");
  EXPECT_EQ(SizeText(E::Size(0)), "s0");
  EXPECT_EQ(SizeText(E::Size(0) * E::Const(16)), "(s0*16)");
  EXPECT_EQ(SizeText(E::Size(0) + E::Size(1)), "(s0 + s1)");
}

TEST(ExternEpilogueTest, PointIndices) {
  const std::vector<E> sizes = {E::Const(2), E::Const(3), E::Const(4)};
  const E i = E::Var(0), j = E::Var(1), k = E::Var(2);
  EXPECT_TRUE(IsPointIndex(i * E::Const(12) + j * E::Const(4) + k, sizes));
  // Another point (transposed, shifted) or a broadcast read is not.
  EXPECT_FALSE(IsPointIndex(i * E::Const(12) + k * E::Const(3) + j, sizes));
  EXPECT_FALSE(IsPointIndex(
      i * E::Const(12) + j * E::Const(4) + k + E::Const(1), sizes));
  EXPECT_FALSE(IsPointIndex(j * E::Const(4) + k, sizes));
  // A size-1 dim's variable is 0: any coefficient.
  EXPECT_TRUE(IsPointIndex(i * E::Const(7) + j, {E::Const(1), E::Const(4)}));
  // A symbolic batch keeps constant strides for the other dims.
  EXPECT_TRUE(IsPointIndex(i * E::Const(4) + j, {E::Size(0), E::Const(4)}));
  // In a layout of its own: [2, 3] stored column-major.
  const std::vector<E> two = {E::Const(2), E::Const(3)};
  EXPECT_TRUE(
      IsPointIndexAt(i + j * E::Const(2), two, {E::Const(1), E::Const(2)}));
  EXPECT_FALSE(
      IsPointIndexAt(i * E::Const(3) + j, two, {E::Const(1), E::Const(2)}));
}

TEST(ExternEpilogueTest, NameParamsNumbersInputsAndOutputsApart) {
  Kernel k;
  k.buffers = {{"", DType::kFloat32, false},
               {"", DType::kFloat32, true},
               {"", DType::kInt64, false},
               {"", DType::kFloat32, true}};
  NameParams(k);
  EXPECT_EQ(k.buffers[0].name, "in0");
  EXPECT_EQ(k.buffers[1].name, "out0");
  EXPECT_EQ(k.buffers[2].name, "in1");
  EXPECT_EQ(k.buffers[3].name, "out1");
}

}  // namespace
}  // namespace guardjit
