// The view ops' shape rules (core/ops/view.cc): each view's sizes from its
// geometry over contiguous strides, the input's dtype kept, errors naming
// the argument; as_strided's sizes as given, its lists checked but not its
// bounds, which only the kernel can know. The geometry itself is tested in
// view_geometry_test.cc, the kernels' views in
// tests/runtime/kernels/view_test.cc.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/shape_env.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TEST(ViewMetaTest, EachViewOpGivesItsGeometrysSizes) {
  struct Case {
    std::string target;
    Shape in;
    std::vector<Arg> args;  // after x0
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           {"aten.view.default", {2, 3, 4}, {Ints({4, -1})}, {4, 6}},
           {"aten._unsafe_view.default",
            {2, 3, 4},
            {Ints({3, -1, 2})},
            {3, 4, 2}},
           {"aten.permute.default", {2, 3, 4}, {Ints({2, 0, -2})}, {4, 2, 3}},
           {"aten.expand.default", {3, 1}, {Ints({2, -1, 5})}, {2, 3, 5}},
           {"aten.unsqueeze.default", {2, 3}, {Arg::Int(-1)}, {2, 3, 1}},
           {"aten.squeeze.default", {1, 3, 1}, {}, {3}},
           {"aten.squeeze.dim", {1, 3, 1}, {Arg::Int(-1)}, {1, 3}},
           // Only size-1 dims go: dim 0 of size 2 stays.
           {"aten.squeeze.dims", {2, 1, 1}, {Ints({0, 1})}, {2, 1}},
           // 1, 3 of [0, 5).
           {"aten.slice.Tensor",
            {2, 5, 4},
            {Arg::Int(1), Arg::Int(1), Arg::None(), Arg::Int(2)},
            {2, 2, 4}},
           {"aten.select.int", {2, 3, 4}, {Arg::Int(1), Arg::Int(-1)}, {2, 4}},
           {"aten.alias.default", {2, 3, 4}, {}, {2, 3, 4}},
           // min(3, 4 - 1) along the last dim.
           {"aten.diagonal.default",
            {2, 3, 4},
            {Arg::Int(1), Arg::Int(1), Arg::Int(2)},
            {2, 3}},
           {"aten.diagonal.default",
            {2, 3, 4},
            {Arg::Int(-1), Arg::Int(1), Arg::Int(2)},
            {2, 2}},
       }) {
    SCOPED_TRACE(c.target);
    std::vector<Arg> args = {Arg::Ref("x0")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto out =
        OpMetas(c.target, {TensorMeta(DType::kFloat16, c.in)}, std::move(args));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), c.out);
    EXPECT_EQ((*out)[0].dtype, DType::kFloat16);
  }
}

TEST(ViewMetaTest, ErrorsNameTheNodeAndTheArgument) {
  const TensorMeta x(DType::kFloat32, Shape{2, 3, 4});
  ExpectError(
      OpMetas("aten.view.default", {x}, {Arg::Ref("x0"), Ints({5, -1})}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.view.default): argument 'size': shape "
      "'[5, -1]' is invalid for input of size 24");
  ExpectError(OpMetas("aten._unsafe_view.default", {x},
                      {Arg::Ref("x0"), Ints({-1, -1})}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten._unsafe_view.default): argument 'size': only "
              "one dimension can be inferred");
  ExpectError(
      OpMetas("aten.permute.default", {x}, {Arg::Ref("x0"), Ints({0, 0, 1})}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.permute.default): argument 'dims': dim 0 is repeated "
      "in [0, 0, 1]");
  ExpectError(
      OpMetas("aten.unsqueeze.default", {x}, {Arg::Ref("x0"), Arg::Int(4)}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.unsqueeze.default): argument 'dim': dimension "
      "4 out of range [-4, 3]");
  ExpectError(OpMetas("aten.select.int", {x},
                      {Arg::Ref("x0"), Arg::Int(1), Arg::Int(3)}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.select.int): argument 'index': index 3 is out "
              "of range for dimension 1 with size 3");
  ExpectError(OpMetas("aten.diagonal.default", {x},
                      {Arg::Ref("x0"), Arg::Int(0), Arg::Int(2), Arg::Int(-1)}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.diagonal.default): argument 'dim2': diagonal "
              "dimensions cannot be identical 2, -1");
  ExpectError(OpMetas("aten.slice.Tensor",
                      {TensorMeta(DType::kFloat32, Shape{})}, {Arg::Ref("x0")}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.slice.Tensor): argument 'self': slice() cannot "
              "be applied to a 0-dim tensor");
  ExpectError(
      OpMetas("aten.expand.default", {x}, {Arg::Ref("x0"), Ints({3, 4})}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.expand.default): argument 'size': the number "
      "of sizes provided (2) must be greater or equal to the number "
      "of dimensions in the tensor (3)");
}

TEST(ViewMetaTest, ViewTrustsContiguousStridesAfterAnotherView) {
  // The rule has no strides: a view of a permuted tensor passes here and is
  // left to the kernel, which can refuse it (as PyTorch's view does).
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("t", "aten.permute.default", {Arg::Ref("x"), Ints({1, 0})})
          .ok());
  ASSERT_TRUE(
      b.AddNode("v", "aten.view.default", {Arg::Ref("t"), Ints({-1})}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("v")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto metas = InferShapes(**graph, {TensorMeta(DType::kFloat32, Shape{2, 3})});
  ASSERT_TRUE(metas.ok()) << metas.status();
  EXPECT_EQ((*metas)[(*graph)->FindNode("v")][0].shape(), (Shape{6}));
}

TEST(ViewMetaTest, AsStridedTakesTheSizesAskedFor) {
  const TensorMeta x(DType::kInt32, Shape{3, 4});
  auto out =
      OpMetas("aten.as_strided.default", {x},
              {Arg::Ref("x0"), Ints({2, 5, 1}), Ints({1, 2, 0}), Arg::Int(1)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 5, 1}));
  EXPECT_EQ((*out)[0].dtype, DType::kInt32);
  // Past the input's 12 elements: only the kernel knows the storage.
  auto outside = OpMetas("aten.as_strided.default", {x},
                         {Arg::Ref("x0"), Ints({4, 4}), Ints({4, 1})});
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_EQ((*outside)[0].shape(), (Shape{4, 4}));
}

TEST(ViewMetaTest, AsStridedChecksItsLists) {
  const TensorMeta x(DType::kFloat32, Shape{3, 4});
  auto as_strided = [&](std::vector<int64_t> size, std::vector<int64_t> stride,
                        Arg offset = Arg::None()) {
    return OpMetas("aten.as_strided.default", {x},
                   {Arg::Ref("x0"), Ints(size), Ints(stride), offset});
  };
  ExpectError(as_strided({2, 2}, {1}), absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.as_strided.default): argument 'stride': "
              "mismatch in length of strides and shape");
  ExpectError(as_strided({2, 2}, {1, -2}), absl::StatusCode::kInvalidArgument,
              "argument 'stride': as_strided: Negative strides are not "
              "supported at the moment, got strides: [1, -2]");
  ExpectError(as_strided({2, -1}, {1, 1}), absl::StatusCode::kInvalidArgument,
              "argument 'size': negative size in [2, -1]");
  ExpectError(as_strided({2, 2}, {1, 1}, Arg::Int(-3)),
              absl::StatusCode::kInvalidArgument,
              "argument 'storage_offset': invalid storage offset -3");
}

TEST(ViewMetaTest, SymbolicSizesStaySymbolic) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  const TensorMeta x(DType::kFloat32, SymShape{n, 1, 4});
  struct Case {
    std::string target;
    std::vector<Arg> args;  // after x0
    std::string out;
  };
  for (const Case& c : std::vector<Case>{
           {"aten.permute.default", {Ints({2, 0, 1})}, "[4, s0, 1]"},
           {"aten.squeeze.default", {}, "[s0, 4]"},
           {"aten.unsqueeze.default", {Arg::Int(0)}, "[1, s0, 1, 4]"},
           {"aten.expand.default", {Ints({2, -1, 3, 4})}, "[2, s0, 3, 4]"},
           {"aten.slice.Tensor",
            {Arg::Int(0), Arg::Int(1), Arg::None(), Arg::Int(1)},
            "[s0 - 1, 1, 4]"},
           {"aten.select.int", {Arg::Int(0), Arg::Int(-1)}, "[1, 4]"},
       }) {
    SCOPED_TRACE(c.target);
    std::vector<Arg> args = {Arg::Ref("x0")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto out = OpMetas(c.target, {x}, std::move(args));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(SymShapeToString((*out)[0].sizes), c.out);
  }
  // Every decision was proven by the range s0 >= 2.
  EXPECT_TRUE(env.guards().empty());
}

TEST(ViewMetaTest, AViewToComputedSizesStaysSymbolic) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(3, "x.size()[0]", 0, 0)), 3);
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}).ok());
  ASSERT_TRUE(
      b.AddNode("n4", "operator.mul", {Arg::Ref("n"), Arg::Int(4)}).ok());
  ASSERT_TRUE(
      b.AddNode("v", "aten.view.default",
                {Arg::Ref("x"), Arg::OfList({Arg::Ref("n4"), Arg::Int(-1)})})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("v")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto metas =
      InferShapes(**graph, {TensorMeta(DType::kFloat32, SymShape{n, 4, 6})});
  ASSERT_TRUE(metas.ok()) << metas.status();
  const TensorMeta& v = (*metas)[(*graph)->FindNode("v")][0];
  EXPECT_EQ(SymShapeToString(v.sizes), "[4*s0, 6]");
  EXPECT_FALSE(env.IsPinned(0));
}

}  // namespace
}  // namespace guardjit::testing
