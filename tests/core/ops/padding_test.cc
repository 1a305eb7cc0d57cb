// The shape rules of reflection_pad{1,2,3}d and replication_pad{2,3}d
// (core/ops/padding.cc): each (lo, hi) pair, innermost dim first, adds to
// one of the last 1-3 dims; pads may be negative (crops); reflection pads
// must be smaller than the dim, and every output size at least 1. Over a
// symbolic size each check is a guard. The kernels' values are tested in
// tests/runtime/kernels/padding_test.cc, the argument table in
// pad_resample_args_test.cc.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/shape_env.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// `op`(x0, pad), op the name without the "aten." and ".default".
absl::StatusOr<std::vector<TensorMeta>> Pad(const std::string& op,
                                            const TensorMeta& input,
                                            const std::vector<int64_t>& pad) {
  return OpMetas("aten." + op + ".default", {input},
                 {Arg::Ref("x0"), Ints(pad)});
}

std::vector<std::string> GuardStrings(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const ShapeGuard& g : env.guards()) out.push_back(env.ToString(g));
  return out;
}

TEST(PaddingMetaTest, PairsPadTheLastDimsInnermostFirst) {
  struct Case {
    std::string op;
    Shape in;
    std::vector<int64_t> pad;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           {"reflection_pad1d", {2, 3, 5}, {2, 1}, {2, 3, 8}},
           // W: 5 + 1 + 2, H: 4 + 3 + 0; no batch dim.
           {"reflection_pad2d", {3, 4, 5}, {1, 2, 3, 0}, {3, 7, 8}},
           // W: 4 + 2, H: 3 + 4, D: 2 + 1.
           {"reflection_pad3d",
            {1, 2, 2, 3, 4},
            {1, 1, 2, 2, 0, 1},
            {1, 2, 3, 7, 6}},
           // Replication pads may exceed the dim.
           {"replication_pad2d", {1, 2, 2}, {5, 4, 0, 0}, {1, 2, 11}},
           {"replication_pad3d",
            {2, 3, 4, 5},
            {0, 0, 0, 0, 1, 2},
            {2, 6, 4, 5}},
       }) {
    SCOPED_TRACE(c.op);
    auto out = Pad(c.op, TensorMeta(DType::kInt64, c.in), c.pad);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), c.out);
    EXPECT_EQ((*out)[0].dtype, DType::kInt64);
  }
}

TEST(PaddingMetaTest, NegativePadsCropAndAnEmptyBatchIsAccepted) {
  auto cropped =
      Pad("replication_pad2d", TensorMeta(DType::kUInt8, Shape{1, 4, 6}),
          {-2, -3, 1, -1});
  ASSERT_TRUE(cropped.ok()) << cropped.status();
  EXPECT_EQ((*cropped)[0].shape(), (Shape{1, 4, 1}));
  EXPECT_EQ((*cropped)[0].dtype, DType::kUInt8);
  auto reflected = Pad("reflection_pad1d",
                       TensorMeta(DType::kFloat16, Shape{1, 5}), {-1, -2});
  ASSERT_TRUE(reflected.ok()) << reflected.status();
  EXPECT_EQ((*reflected)[0].shape(), (Shape{1, 2}));
  auto empty_batch =
      Pad("reflection_pad2d", TensorMeta(DType::kFloat32, Shape{0, 2, 3, 3}),
          {1, 1, 2, 0});
  ASSERT_TRUE(empty_batch.ok()) << empty_batch.status();
  EXPECT_EQ((*empty_batch)[0].shape(), (Shape{0, 2, 5, 5}));
}

TEST(PaddingMetaTest, RankAndEmptyDimsGiveATensMessage) {
  ExpectError(Pad("reflection_pad1d",
                  TensorMeta(DType::kFloat32, Shape{2, 0, 4}), {1, 1}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.reflection_pad1d.default): argument 'self': "
              "Expected 2D or 3D (batch mode) tensor with possibly 0 batch "
              "size and other non-zero dimensions for input, but got: [2, 0, "
              "4]");
  // Without a batch dim the first dim is the channel dim: not empty.
  ExpectError(
      Pad("reflection_pad1d", TensorMeta(DType::kFloat32, Shape{0, 4}), {1, 1}),
      absl::StatusCode::kInvalidArgument, "but got: [0, 4]");
  ExpectError(Pad("replication_pad3d",
                  TensorMeta(DType::kFloat32, Shape{1, 2, 3, 4, 5, 6}),
                  {1, 1, 1, 1, 1, 1}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': Expected 4D or 5D (batch mode) tensor with "
              "possibly 0 batch size and other non-zero dimensions for input, "
              "but got: [1, 2, 3, 4, 5, 6]");
  ExpectError(Pad("reflection_pad2d", TensorMeta(DType::kFloat32, Shape{4, 4}),
                  {1, 1, 1, 1}),
              absl::StatusCode::kInvalidArgument,
              "Expected 3D or 4D (batch mode)");
}

TEST(PaddingMetaTest, ReflectionPadsMustBeSmallerThanTheDim) {
  ExpectError(
      Pad("reflection_pad1d", TensorMeta(DType::kFloat32, Shape{1, 3}), {3, 0}),
      absl::StatusCode::kInvalidArgument,
      "node 'op' (aten.reflection_pad1d.default): argument 'padding': "
      "Padding size should be less than the corresponding input "
      "dimension, but got: padding (3, 0) at dimension 1 of input "
      "[1, 3]");
  // The second pair pads H, dimension 1 of an input without batch dim.
  ExpectError(Pad("reflection_pad2d",
                  TensorMeta(DType::kFloat32, Shape{1, 2, 5}), {4, 4, 0, 2}),
              absl::StatusCode::kInvalidArgument,
              "argument 'padding': Padding size should be less than the "
              "corresponding input dimension, but got: padding (0, 2) at "
              "dimension 1 of input [1, 2, 5]");
  // Replication has no such limit.
  auto replicated =
      Pad("replication_pad2d", TensorMeta(DType::kFloat32, Shape{1, 2, 5}),
          {4, 4, 0, 2});
  ASSERT_TRUE(replicated.ok()) << replicated.status();
  EXPECT_EQ((*replicated)[0].shape(), (Shape{1, 4, 13}));
}

TEST(PaddingMetaTest, OutputSizesMustBeAtLeastOne) {
  ExpectError(Pad("replication_pad2d",
                  TensorMeta(DType::kFloat32, Shape{2, 3, 3}), {-2, -1, 0, 0}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.replication_pad2d.default): argument "
              "'padding': the input size 3 at dimension 2 with padding (-2, "
              "-1) gives the output size 0; it must be >= 1");
  ExpectError(
      Pad("reflection_pad3d", TensorMeta(DType::kFloat32, Shape{1, 2, 3, 3}),
          {0, 0, 0, 0, -4, 0}),
      absl::StatusCode::kInvalidArgument,
      "argument 'padding': the input size 2 at dimension 1 with "
      "padding (-4, 0) gives the output size -2; it must be >= 1");
}

// Replication pads have no bound: pads whose sum, or the output size,
// would wrap past int64 are refused, not wrapped into a small size.
TEST(PaddingMetaTest, PadsPastInt64AreRefused) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ExpectError(
      Pad("replication_pad2d", TensorMeta(DType::kFloat32, Shape{1, 2, 5}),
          {kMax, kMax, 0, 0}),
      absl::StatusCode::kInvalidArgument,
      "argument 'padding': padding (9223372036854775807, "
      "9223372036854775807) at dimension 2 of input [1, 2, 5] gives "
      "an output size past int64");
  ExpectError(
      Pad("replication_pad2d", TensorMeta(DType::kFloat32, Shape{1, 2, 5}),
          {kMax - 4, 0, 0, 0}),
      absl::StatusCode::kInvalidArgument, "gives an output size past int64");
  // The largest output that fits (one row: the element count fits too).
  auto out =
      Pad("replication_pad2d", TensorMeta(DType::kFloat32, Shape{1, 1, 5}),
          {kMax - 5, 0, 0, 0});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, kMax}));
}

TEST(PaddingMetaTest, PadCountAndDTypeChecks) {
  // The schema's SymInt[4] refuses other lengths before the rule reads them.
  ExpectError(Pad("replication_pad2d",
                  TensorMeta(DType::kFloat32, Shape{1, 2, 3}), {1, 1}),
              absl::StatusCode::kInvalidArgument,
              "argument 'padding': expected 4 values, got 2");
  ExpectError(Pad("reflection_pad2d", TensorMeta(DType::kBool, Shape{1, 2, 3}),
                  {1, 1, 1, 1}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.reflection_pad2d.default): argument 'self': "
              "reflection_pad2d is not implemented for bool");
  ExpectError(
      Pad("replication_pad3d", TensorMeta(DType::kBool, Shape{1, 2, 3, 4}),
          {1, 1, 1, 1, 1, 1}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': replication_pad3d is not implemented for bool");
}

TEST(PaddingMetaTest, SymbolicSizesStaySymbolicAndReflectionGuardsThePad) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt w(SymExpr::Symbol(env.NewSymbol(5, "x.size()[2]", 0, 2)), 5);
  const TensorMeta x(DType::kFloat32, SymShape{2, 3, w});
  auto replicated =
      Pad("replication_pad2d", TensorMeta(DType::kFloat32, SymShape{3, 4, w}),
          {-1, 0, 1, 1});
  ASSERT_TRUE(replicated.ok()) << replicated.status();
  EXPECT_EQ(SymShapeToString((*replicated)[0].sizes), "[3, 6, s0 - 1]");
  // s0 - 1 >= 1 holds for every s0 >= 2: no guard.
  EXPECT_TRUE(env.guards().empty());

  auto reflected = Pad("reflection_pad1d", x, {2, 1});
  ASSERT_TRUE(reflected.ok()) << reflected.status();
  EXPECT_EQ(SymShapeToString((*reflected)[0].sizes), "[2, 3, s0 + 3]");
  // A pad of 2 needs a width above 2, which the sizes >= 2 do not imply.
  EXPECT_EQ(GuardStrings(env), (std::vector<std::string>{"2 < x.size()[2]"}));
  EXPECT_FALSE(env.IsPinned(0));
}

TEST(PaddingMetaTest, ASymbolicReflectionPadTooLargeForTheHintFails) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt w(SymExpr::Symbol(env.NewSymbol(3, "x.size()[1]", 0, 1)), 3);
  ExpectError(Pad("reflection_pad1d",
                  TensorMeta(DType::kFloat32, SymShape{2, w}), {0, 3}),
              absl::StatusCode::kInvalidArgument,
              "argument 'padding': Padding size should be less than the "
              "corresponding input dimension, but got: padding (0, 3) at "
              "dimension 1 of input [2, s0]");
}

TEST(PaddingMetaTest, APadComputedFromASizeIsRefused) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt w(SymExpr::Symbol(env.NewSymbol(4, "x.size()[2]", 0, 2)), 4);
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(2)}).ok());
  ASSERT_TRUE(
      b.AddNode("p", "aten.replication_pad2d.default",
                {Arg::Ref("x"), Arg::OfList({Arg::Ref("n"), Arg::Int(0),
                                             Arg::Int(0), Arg::Int(0)})})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("p")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  ExpectError(
      InferShapes(**graph, {TensorMeta(DType::kFloat32, SymShape{2, 3, w})}),
      absl::StatusCode::kInvalidArgument,
      "node 'p' (aten.replication_pad2d.default): argument 'padding': "
      "symbolic padding");
}

}  // namespace
}  // namespace guardjit::testing
