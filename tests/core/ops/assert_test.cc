// The shape rules of torch.export's checks (core/ops/assert.cc):
// _assert_tensor_metadata compares the dtype and sizes it is given with the
// tensor's and _assert_scalar fails on a false condition, both returning
// nothing. Over symbolic sizes each comparison is a shape guard, so an entry
// keeps the check true. The eager kernels' checks are tested in
// tests/runtime/kernels/assert_test.cc.

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

constexpr char kAssertMetadata[] = "aten._assert_tensor_metadata.default";
constexpr char kAssertScalar[] = "aten._assert_scalar.default";

struct Step {
  std::string name, target;
  std::vector<Arg> args;
};

// The outputs' metadata of the last of `steps`, nodes added in order after
// the placeholders x0, x1, ... of `inputs`.
absl::StatusOr<std::vector<TensorMeta>> LastStepMetas(
    const std::vector<TensorMeta>& inputs, std::vector<Step> steps) {
  GraphBuilder b("g");
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(b.AddPlaceholder("x" + std::to_string(i)).status());
  }
  for (Step& s : steps) {
    RETURN_IF_ERROR(b.AddNode(s.name, s.target, std::move(s.args)).status());
  }
  RETURN_IF_ERROR(b.SetOutputs({Arg::Ref("x0")}));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, b.Finish());
  ASSIGN_OR_RETURN(GraphMeta metas, InferShapes(*graph, inputs));
  return metas[graph->FindNode(steps.back().name)];
}

std::vector<std::string> GuardStrings(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const ShapeGuard& g : env.guards()) out.push_back(env.ToString(g));
  return out;
}

TEST(AssertTensorMetadataMetaTest, MatchingMetadataGivesNoOutputs) {
  const TensorMeta x(DType::kFloat16, Shape{2, 3});
  auto checked = OpMetas(kAssertMetadata, {x},
                         {Arg::Ref("x0"), Ints({2, 3}), Arg::None(),
                          Arg::OfDType(DType::kFloat16)});
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_TRUE(checked->empty());
  // A 0-dim tensor matches the empty size list.
  auto scalar = OpMetas(kAssertMetadata, {TensorMeta(DType::kInt64, Shape{})},
                        {Arg::Ref("x0"), Ints({})});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_TRUE(scalar->empty());
}

TEST(AssertTensorMetadataMetaTest, StridesAndDeviceAreNotChecked) {
  // Only dtype and sizes are compared: the kernels choose their own layouts
  // and graphs are device-agnostic.
  auto out =
      OpMetas(kAssertMetadata, {TensorMeta(DType::kFloat32, Shape{2, 3})},
              {Arg::Ref("x0"), Arg::None(), Ints({99, 7})},
              {{"device", Arg::OfDevice(Device{DeviceType::kCUDA, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

TEST(AssertTensorMetadataMetaTest, MismatchesGiveTorchsMessages) {
  const TensorMeta x(DType::kFloat32, Shape{2, 3});
  ExpectError(OpMetas(kAssertMetadata, {x},
                      {Arg::Ref("x0"), Ints({2, 3}), Arg::None(),
                       Arg::OfDType(DType::kBFloat16)}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten._assert_tensor_metadata.default): argument "
              "'dtype': Tensor dtype mismatch! Expected: bfloat16, Got: "
              "float32");
  // The same sizes in another order, and one dim more.
  ExpectError(OpMetas(kAssertMetadata, {x}, {Arg::Ref("x0"), Ints({3, 2})}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten._assert_tensor_metadata.default): argument "
              "'size': Tensor sizes mismatch! Expected: [3, 2], Got: [2, 3]");
  ExpectError(OpMetas(kAssertMetadata, {x}, {Arg::Ref("x0"), Ints({2, 3, 1})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': Tensor sizes mismatch! Expected: [2, 3, 1], "
              "Got: [2, 3]");
  ExpectError(OpMetas(kAssertMetadata, {TensorMeta(DType::kFloat32, Shape{})},
                      {Arg::Ref("x0"), Ints({1})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': Tensor sizes mismatch! Expected: [1], Got: []");
  // The dtype is checked first.
  ExpectError(OpMetas(kAssertMetadata, {x},
                      {Arg::Ref("x0"), Ints({9}), Arg::None(),
                       Arg::OfDType(DType::kInt32)}),
              absl::StatusCode::kInvalidArgument, "argument 'dtype'");
}

TEST(AssertTensorMetadataMetaTest, ASymbolicSizeAssertedConstantIsGuarded) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(4, "x.size()[0]", 0, 0)), 4);
  const TensorMeta x(DType::kFloat32, SymShape{n, 3});
  auto out = OpMetas(kAssertMetadata, {x}, {Arg::Ref("x0"), Ints({4, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(GuardStrings(env), (std::vector<std::string>{"x.size()[0] == 4"}));
  EXPECT_TRUE(env.IsPinned(0));
}

TEST(AssertTensorMetadataMetaTest, ASymbolicSizeThatDiffersFailsAndIsGuarded) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  const TensorMeta x(DType::kFloat32, SymShape{n, 3});
  ExpectError(OpMetas(kAssertMetadata, {x}, {Arg::Ref("x0"), Ints({4, 3})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': Tensor sizes mismatch! Expected: [4, 3], Got: "
              "[s0, 3]");
  // The entry that fails holds only for sizes other than 4.
  EXPECT_EQ(GuardStrings(env), (std::vector<std::string>{"x.size()[0] != 4"}));
}

TEST(AssertTensorMetadataMetaTest, ASizeAssertedAsItsOwnSymbolNeedsNoGuard) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  auto out = LastStepMetas(
      {TensorMeta(DType::kFloat32, SymShape{n, 3})},
      {{"n", "aten.sym_size.int", {Arg::Ref("x0"), Arg::Int(0)}},
       {"check",
        kAssertMetadata,
        {Arg::Ref("x0"), Arg::OfList({Arg::Ref("n"), Arg::Int(3)})}}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
  EXPECT_TRUE(env.guards().empty());
  EXPECT_FALSE(env.IsPinned(0));
}

TEST(AssertScalarMetaTest, LiteralConditions) {
  const TensorMeta x(DType::kFloat32, Shape{1});
  for (Arg holds : {Arg::Bool(true), Arg::Int(3)}) {
    auto out = OpMetas(kAssertScalar, {x}, {holds, Arg::String("never")});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->empty());
  }
  for (Arg fails : {Arg::Bool(false), Arg::Int(0)}) {
    auto out = OpMetas(kAssertScalar, {x},
                       {fails, Arg::String("Runtime assertion failed for "
                                           "expression u0 >= 2")});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(),
              "node 'op' (aten._assert_scalar.default): argument 'self': "
              "Runtime assertion failed for expression u0 >= 2");
  }
}

// _assert_scalar(sym_size(x, 0) > 4, msg) for x of `size` elements.
absl::StatusOr<std::vector<TensorMeta>> AssertMoreThanFour(ShapeEnv& env,
                                                           int64_t size) {
  const SymInt n(SymExpr::Symbol(env.NewSymbol(size, "x.size()[0]", 0, 0)),
                 size);
  return LastStepMetas(
      {TensorMeta(DType::kFloat32, SymShape{n})},
      {{"n", "aten.sym_size.int", {Arg::Ref("x0"), Arg::Int(0)}},
       {"gt", "operator.gt", {Arg::Ref("n"), Arg::Int(4)}},
       {"check",
        kAssertScalar,
        {Arg::Ref("gt"), Arg::String("x must have more than 4 rows")}}});
}

TEST(AssertScalarMetaTest, ASizeComparisonIsDecidedAndGuarded) {
  ShapeEnv holds;
  {
    ShapeEnv::Scope scope(&holds);
    auto out = AssertMoreThanFour(holds, 6);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->empty());
  }
  EXPECT_EQ(GuardStrings(holds), (std::vector<std::string>{"4 < x.size()[0]"}));

  ShapeEnv fails;
  {
    ShapeEnv::Scope scope(&fails);
    ExpectError(AssertMoreThanFour(fails, 3),
                absl::StatusCode::kInvalidArgument,
                "node 'check' (aten._assert_scalar.default): argument 'self': "
                "x must have more than 4 rows");
  }
  EXPECT_EQ(GuardStrings(fails),
            (std::vector<std::string>{"x.size()[0] <= 4"}));
}

}  // namespace
}  // namespace guardjit::testing
