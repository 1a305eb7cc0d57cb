// The parameterized activations' shape and dtype rules
// (core/ops/activation.cc): hardtanh, leaky_relu and elu keep the input's
// dtype and sizes whatever their Scalar parameters are, with ATen's dtype
// checks naming the argument. The reference kernels' values are tested in
// tests/runtime/kernels/activation_test.cc.

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_env.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

constexpr char kHardtanh[] = "aten.hardtanh.default";
constexpr char kLeakyRelu[] = "aten.leaky_relu.default";
constexpr char kElu[] = "aten.elu.default";

constexpr DType kFloatingDTypes[] = {DType::kFloat16, DType::kBFloat16,
                                     DType::kFloat32, DType::kFloat64};

TEST(ActivationMetaTest, HardtanhKeepsEveryNonBoolDTypeAndTheSizes) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    // Float bounds do not promote an integral input.
    auto out = OpMetas(kHardtanh, {TensorMeta(dtype, Shape{2, 0, 3})},
                       {Arg::Ref("x0"), Arg::Float(0.5), Arg::Float(6.5)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].dtype, dtype);
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 0, 3}));
  }
  // The default bounds (-1, 1) on a 0-dim input.
  auto scalar = OpMetas(kHardtanh, {TensorMeta(DType::kFloat64, Shape{})},
                        {Arg::Ref("x0")});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ((*scalar)[0].dtype, DType::kFloat64);
  EXPECT_EQ((*scalar)[0].dim(), 0);
}

TEST(ActivationMetaTest, HardtanhRefusesBool) {
  ExpectError(OpMetas(kHardtanh, {TensorMeta(DType::kBool, Shape{3})},
                      {Arg::Ref("x0"), Arg::Int(0), Arg::Int(1)}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.hardtanh.default): argument 'self': Bool "
              "inputs not supported for hardtanh");
}

TEST(ActivationMetaTest, HardtanhOnUInt8ReadsTheBoundsAsTruncatedInts) {
  const TensorMeta u8(DType::kUInt8, Shape{4});
  // A negative max_val is refused too, though the message names min_val
  // (ATen's single check of both bounds).
  ExpectError(
      OpMetas(kHardtanh, {u8}, {Arg::Ref("x0"), Arg::Int(0), Arg::Int(-3)}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.hardtanh.default): argument 'min_val': cannot "
      "do hardtanh on an unsigned type with negative limits");
  ExpectError(
      OpMetas(kHardtanh, {u8}, {Arg::Ref("x0"), Arg::Float(-1.5), Arg::Int(3)}),
      absl::StatusCode::kInvalidArgument, "negative limits");
  // -0.5 truncates to 0, which uint8 takes.
  auto truncated = OpMetas(kHardtanh, {u8},
                           {Arg::Ref("x0"), Arg::Float(-0.5), Arg::Float(2.5)});
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_EQ((*truncated)[0].dtype, DType::kUInt8);
  EXPECT_EQ((*truncated)[0].shape(), (Shape{4}));
  // Signed integers take negative bounds.
  auto signed_bounds = OpMetas(kHardtanh, {TensorMeta(DType::kInt8, Shape{4})},
                               {Arg::Ref("x0"), Arg::Int(-3), Arg::Int(-1)});
  ASSERT_TRUE(signed_bounds.ok()) << signed_bounds.status();
  EXPECT_EQ((*signed_bounds)[0].dtype, DType::kInt8);
}

TEST(ActivationMetaTest, LeakyReluAndEluKeepFloatingDTypesAndSizes) {
  for (DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const TensorMeta x(dtype, Shape{3, 1, 2});
    auto leaky = OpMetas(kLeakyRelu, {x}, {Arg::Ref("x0"), Arg::Float(0.2)});
    ASSERT_TRUE(leaky.ok()) << leaky.status();
    ASSERT_EQ(leaky->size(), 1u);
    EXPECT_EQ((*leaky)[0].dtype, dtype);
    EXPECT_EQ((*leaky)[0].shape(), (Shape{3, 1, 2}));
    // Integer parameters do not change the dtype either.
    auto elu = OpMetas(kElu, {x},
                       {Arg::Ref("x0"), Arg::Int(2), Arg::Int(3), Arg::Int(1)});
    ASSERT_TRUE(elu.ok()) << elu.status();
    EXPECT_EQ((*elu)[0].dtype, dtype);
    EXPECT_EQ((*elu)[0].shape(), (Shape{3, 1, 2}));
  }
}

TEST(ActivationMetaTest, LeakyReluAndEluRefuseEveryNonFloatingDType) {
  for (DType dtype : {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt16,
                      DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const TensorMeta x(dtype, Shape{2});
    ExpectError(OpMetas(kLeakyRelu, {x}, {Arg::Ref("x0")}),
                absl::StatusCode::kInvalidArgument,
                absl::StrCat("node 'op' (aten.leaky_relu.default): argument "
                             "'self': leaky_relu needs a floating tensor, got ",
                             DTypeName(dtype)));
    ExpectError(OpMetas(kElu, {x}, {Arg::Ref("x0")}),
                absl::StatusCode::kInvalidArgument,
                absl::StrCat("node 'op' (aten.elu.default): argument 'self': "
                             "elu needs a floating tensor, got ",
                             DTypeName(dtype)));
  }
}

TEST(ActivationMetaTest, SymbolicSizesPassThroughWithoutGuards) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  const TensorMeta x(DType::kFloat32, SymShape{n, 4});
  for (const char* target : {kHardtanh, kLeakyRelu, kElu}) {
    SCOPED_TRACE(target);
    auto out = OpMetas(target, {x}, {Arg::Ref("x0")});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dim(), 2);
    EXPECT_TRUE((*out)[0].sizes[0].is_symbolic());
    EXPECT_EQ((*out)[0].sizes[0].ToString(), "s0");
    EXPECT_EQ((*out)[0].sizes[1].ToString(), "4");
  }
  EXPECT_TRUE(env.guards().empty());
}

}  // namespace
}  // namespace guardjit::testing
