// The shape rules of upsample_nearest2d.vec and upsample_bilinear2d.vec
// (core/ops/resample.cc): a non-empty 4-D input resized to output_size or
// to floor(size * factor), sizes at least 1; nearest takes floating dtypes
// and uint8, bilinear floating dtypes only. Over a symbolic size only an
// integer factor keeps the size symbolic. The kernels' values are tested in
// tests/runtime/kernels/resample_test.cc, the argument reading in
// pad_resample_args_test.cc.

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_env.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

constexpr char kNearest[] = "aten.upsample_nearest2d.vec";
constexpr char kBilinear[] = "aten.upsample_bilinear2d.vec";

Arg Floats(const std::vector<double>& values) {
  std::vector<Arg> list;
  for (double v : values) list.push_back(Arg::Float(v));
  return Arg::OfList(std::move(list));
}

// upsample_nearest2d.vec(x0, output_size, scale_factors).
absl::StatusOr<std::vector<TensorMeta>> Nearest(const TensorMeta& input,
                                                Arg output_size,
                                                Arg scale_factors) {
  return OpMetas(
      kNearest, {input},
      {Arg::Ref("x0"), std::move(output_size), std::move(scale_factors)});
}

// upsample_bilinear2d.vec(x0, output_size, align_corners, scale_factors).
absl::StatusOr<std::vector<TensorMeta>> Bilinear(const TensorMeta& input,
                                                 Arg output_size,
                                                 Arg scale_factors) {
  return OpMetas(kBilinear, {input},
                 {Arg::Ref("x0"), std::move(output_size), Arg::Bool(false),
                  std::move(scale_factors)});
}

TEST(ResampleMetaTest, OutputSizeReplacesHeightAndWidth) {
  auto nearest = Nearest(TensorMeta(DType::kUInt8, Shape{2, 3, 4, 5}),
                         Ints({7, 3}), Arg::None());
  ASSERT_TRUE(nearest.ok()) << nearest.status();
  ASSERT_EQ(nearest->size(), 1u);
  EXPECT_EQ((*nearest)[0].shape(), (Shape{2, 3, 7, 3}));
  EXPECT_EQ((*nearest)[0].dtype, DType::kUInt8);
  // An empty batch is accepted.
  auto bilinear = Bilinear(TensorMeta(DType::kBFloat16, Shape{0, 3, 4, 4}),
                           Ints({8, 2}), Arg::None());
  ASSERT_TRUE(bilinear.ok()) << bilinear.status();
  EXPECT_EQ((*bilinear)[0].shape(), (Shape{0, 3, 8, 2}));
  EXPECT_EQ((*bilinear)[0].dtype, DType::kBFloat16);
}

TEST(ResampleMetaTest, ScaleFactorsFloorTheScaledSizes) {
  // H: floor(5 * 1.5) = 7; W: floor(3 * 0.5) = 1.
  auto nearest = Nearest(TensorMeta(DType::kFloat32, Shape{1, 2, 5, 3}),
                         Arg::None(), Floats({1.5, 0.5}));
  ASSERT_TRUE(nearest.ok()) << nearest.status();
  EXPECT_EQ((*nearest)[0].shape(), (Shape{1, 2, 7, 1}));
  // H: floor(3 * 2.99) = 8; W: 4 * 1 = 4; integer factors too.
  auto bilinear = Bilinear(TensorMeta(DType::kFloat64, Shape{2, 1, 3, 4}),
                           Arg::None(), Floats({2.99, 1.0}));
  ASSERT_TRUE(bilinear.ok()) << bilinear.status();
  EXPECT_EQ((*bilinear)[0].shape(), (Shape{2, 1, 8, 4}));
  EXPECT_EQ((*bilinear)[0].dtype, DType::kFloat64);
  auto ints = Nearest(TensorMeta(DType::kFloat16, Shape{1, 1, 2, 3}),
                      Arg::None(), Ints({3, 2}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ((*ints)[0].shape(), (Shape{1, 1, 6, 6}));
}

TEST(ResampleMetaTest, TheInputMustBeNonEmptyAndFourDimensional) {
  ExpectError(Nearest(TensorMeta(DType::kFloat32, Shape{2, 3, 4}), Ints({5, 7}),
                      Arg::None()),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.upsample_nearest2d.vec): argument 'input': "
              "Non-empty 4D data tensor expected but got a tensor with sizes "
              "[2, 3, 4]");
  for (const Shape& empty :
       {Shape{1, 0, 2, 2}, Shape{1, 2, 0, 2}, Shape{1, 2, 2, 0}}) {
    ExpectError(
        Bilinear(TensorMeta(DType::kFloat32, empty), Ints({5, 7}), Arg::None()),
        absl::StatusCode::kInvalidArgument,
        "argument 'input': Non-empty 4D data tensor expected");
  }
}

TEST(ResampleMetaTest, OutputSizesMustBePositive) {
  const TensorMeta x(DType::kFloat32, Shape{1, 1, 5, 3});
  ExpectError(Nearest(x, Ints({0, 4}), Arg::None()),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.upsample_nearest2d.vec): argument "
              "'output_size': Input and output sizes should be greater than "
              "0, but got input (H: 5, W: 3) output (H: 0)");
  ExpectError(Bilinear(x, Ints({4, -2}), Arg::None()),
              absl::StatusCode::kInvalidArgument,
              "argument 'output_size': Input and output sizes should be "
              "greater than 0, but got input (H: 5, W: 3) output (W: -2)");
  // floor(3 * 0.3) = 0.
  ExpectError(Nearest(x, Arg::None(), Floats({2.0, 0.3})),
              absl::StatusCode::kInvalidArgument,
              "argument 'scale_factors': Input and output sizes should be "
              "greater than 0, but got input (H: 5, W: 3) output (W: 0)");
}

TEST(ResampleMetaTest, FactorsThatOverflowTheSizeAreRefused) {
  const TensorMeta x(DType::kFloat32, Shape{1, 1, 5, 3});
  ExpectError(Nearest(x, Arg::None(), Floats({1e300, 1.0})),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.upsample_nearest2d.vec): argument "
              "'scale_factors': factor 1e+300 overflows the size");
  ExpectError(Bilinear(x, Arg::None(),
                       Floats({1.0, std::numeric_limits<double>::quiet_NaN()})),
              absl::StatusCode::kInvalidArgument,
              "argument 'scale_factors': factor nan overflows the size");
}

TEST(ResampleMetaTest, DTypesEachModeImplements) {
  for (DType dtype :
       {DType::kBool, DType::kInt8, DType::kInt32, DType::kInt64}) {
    ExpectError(Nearest(TensorMeta(dtype, Shape{1, 1, 2, 2}), Ints({4, 4}),
                        Arg::None()),
                absl::StatusCode::kUnimplemented,
                absl::StrCat("node 'op' (aten.upsample_nearest2d.vec): "
                             "argument 'input': upsample_nearest2d is not "
                             "implemented for ",
                             DTypeName(dtype)));
  }
  ExpectError(Bilinear(TensorMeta(DType::kUInt8, Shape{1, 1, 2, 2}),
                       Ints({4, 4}), Arg::None()),
              absl::StatusCode::kUnimplemented,
              "argument 'input': upsample_bilinear2d is not implemented for "
              "uint8");
  auto half = Bilinear(TensorMeta(DType::kFloat16, Shape{1, 1, 2, 2}),
                       Ints({4, 4}), Arg::None());
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ((*half)[0].dtype, DType::kFloat16);
}

TEST(ResampleMetaTest, IntegerFactorsKeepSymbolicSizesSymbolic) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt h(SymExpr::Symbol(env.NewSymbol(4, "x.size()[2]", 0, 2)), 4);
  const SymInt w(SymExpr::Symbol(env.NewSymbol(6, "x.size()[3]", 0, 3)), 6);
  const TensorMeta x(DType::kFloat32, SymShape{2, 3, h, w});
  auto out = Nearest(x, Arg::None(), Floats({2.0, 3.0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(SymShapeToString((*out)[0].sizes), "[2, 3, 2*s0, 3*s1]");
  EXPECT_TRUE(env.guards().empty());

  ExpectError(Bilinear(x, Arg::None(), Floats({1.5, 2.0})),
              absl::StatusCode::kUnimplemented,
              "node 'op' (aten.upsample_bilinear2d.vec): argument "
              "'scale_factors': the non-integer factor 1.5 over the symbolic "
              "size s0");
  // An integer factor too large for a size product is named as such.
  ExpectError(Nearest(x, Arg::None(), Floats({4294967296.0, 2.0})),
              absl::StatusCode::kUnimplemented,
              "'scale_factors': the factor of 2^31 or more, 4.29497e+09 over "
              "the symbolic size s0");
  // A factor 0 gives the constant 0 whatever the size is.
  ExpectError(Nearest(x, Arg::None(), Floats({1.0, 0.0})),
              absl::StatusCode::kInvalidArgument,
              "argument 'scale_factors': Input and output sizes should be "
              "greater than 0, but got input (H: s0, W: s1) output (W: 0)");
}

TEST(ResampleMetaTest, AnOutputSizeComputedFromASizeStaysSymbolic) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt h(SymExpr::Symbol(env.NewSymbol(4, "x.size()[2]", 0, 2)), 4);
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(2)}).ok());
  ASSERT_TRUE(
      b.AddNode("n2", "operator.mul", {Arg::Ref("n"), Arg::Int(2)}).ok());
  ASSERT_TRUE(
      b.AddNode("up", kNearest,
                {Arg::Ref("x"), Arg::OfList({Arg::Ref("n2"), Arg::Int(5)}),
                 Arg::None()})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("up")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto metas =
      InferShapes(**graph, {TensorMeta(DType::kFloat32, SymShape{1, 3, h, 7})});
  ASSERT_TRUE(metas.ok()) << metas.status();
  const TensorMeta& up = (*metas)[(*graph)->FindNode("up")][0];
  EXPECT_EQ(SymShapeToString(up.sizes), "[1, 3, 2*s0, 5]");
  // 2*s0 > 0 holds for every s0 >= 2: no guard.
  EXPECT_TRUE(env.guards().empty());
}

}  // namespace
}  // namespace guardjit::testing
