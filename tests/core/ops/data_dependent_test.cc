// The ops whose output sizes depend on input values (core/ops/
// data_dependent.cc): their ATen schemas (argument names, defaults, output
// counts) and their shape rules, which answer UNIMPLEMENTED, a graph break,
// for any arguments (the reference kernels check those). The kernels and
// graph breaks at nonzero are tested in
// tests/runtime/kernels/data_dependent_test.cc.

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// The argument names of `target`'s schema.
std::vector<std::string> ArgNames(const std::string& target) {
  std::vector<std::string> names;
  const OpDef* def = OpRegistry::Global().Find(target);
  if (def == nullptr) return names;
  for (const ArgSchema& a : def->schema.args) names.push_back(a.name);
  return names;
}

TEST(DataDependentMetaTest, SchemasHaveATensArgumentsAndOutputCounts) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(ArgNames("aten.nonzero.default"), (Names{"self"}));
  EXPECT_EQ(ArgNames("aten.masked_select.default"), (Names{"self", "mask"}));
  EXPECT_EQ(ArgNames("aten._unique2.default"),
            (Names{"self", "sorted", "return_inverse", "return_counts"}));
  EXPECT_EQ(ArgNames("aten.unique_consecutive.default"),
            (Names{"self", "return_inverse", "return_counts", "dim"}));
  EXPECT_EQ(ArgNames("aten._local_scalar_dense.default"), (Names{"self"}));
  for (const char* target :
       {"aten.nonzero.default", "aten.masked_select.default",
        "aten._local_scalar_dense.default"}) {
    EXPECT_EQ(OpRegistry::Global().Find(target)->schema.num_returns, 1)
        << target;
  }
  EXPECT_EQ(OpRegistry::Global()
                .Find("aten.unique_consecutive.default")
                ->schema.num_returns,
            3);
}

TEST(DataDependentMetaTest, OmittedArgumentsTakeTheSchemasDefaults) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("u", "aten._unique2.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("c", "aten.unique_consecutive.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Node& unique = (*graph)->node((*graph)->FindNode("u"));
  ASSERT_EQ(unique.args.size(), 4u);
  EXPECT_EQ(unique.args[1], Arg::Bool(true)) << "sorted";
  EXPECT_EQ(unique.args[2], Arg::Bool(false)) << "return_inverse";
  EXPECT_EQ(unique.args[3], Arg::Bool(false)) << "return_counts";
  const Node& consecutive = (*graph)->node((*graph)->FindNode("c"));
  ASSERT_EQ(consecutive.args.size(), 4u);
  EXPECT_EQ(consecutive.args[1], Arg::Bool(false)) << "return_inverse";
  EXPECT_EQ(consecutive.args[2], Arg::Bool(false)) << "return_counts";
  EXPECT_TRUE(consecutive.args[3].is_none()) << "dim";
}

TEST(DataDependentMetaTest, EveryShapeRuleIsAGraphBreakNamingTheNode) {
  const TensorMeta x(DType::kFloat32, Shape{2, 3});
  const TensorMeta mask(DType::kBool, Shape{2, 3});
  struct Case {
    std::string target;
    std::vector<TensorMeta> inputs;
    std::vector<Arg> args;
  };
  for (const Case& c : std::vector<Case>{
           {"aten.nonzero.default", {x}, {Arg::Ref("x0")}},
           {"aten.masked_select.default",
            {x, mask},
            {Arg::Ref("x0"), Arg::Ref("x1")}},
           {"aten._unique2.default",
            {x},
            {Arg::Ref("x0"), Arg::Bool(false), Arg::Bool(true),
             Arg::Bool(true)}},
           {"aten.unique_consecutive.default",
            {x},
            {Arg::Ref("x0"), Arg::Bool(true), Arg::Bool(false), Arg::Int(1)}},
           {"aten._local_scalar_dense.default",
            {TensorMeta(DType::kInt64, Shape{})},
            {Arg::Ref("x0")}},
       }) {
    SCOPED_TRACE(c.target);
    auto out = OpMetas(c.target, c.inputs, c.args);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_EQ(out.status().message(),
              "node 'op' (" + c.target +
                  "): its output size depends on input values (a graph "
                  "break)");
  }
}

TEST(DataDependentMetaTest, TheRulesLeaveArgumentChecksToTheKernels) {
  // What the kernels refuse (a float mask, item of three elements, a dim
  // out of range) is still the graph break, not an argument error.
  const TensorMeta x(DType::kFloat32, Shape{3});
  ExpectError(OpMetas("aten.masked_select.default",
                      {x, TensorMeta(DType::kFloat32, Shape{5})},
                      {Arg::Ref("x0"), Arg::Ref("x1")}),
              absl::StatusCode::kUnimplemented, "a graph break");
  ExpectError(
      OpMetas("aten._local_scalar_dense.default", {x}, {Arg::Ref("x0")}),
      absl::StatusCode::kUnimplemented, "a graph break");
  ExpectError(OpMetas("aten.unique_consecutive.default", {x},
                      {Arg::Ref("x0"), Arg::Bool(false), Arg::Bool(false),
                       Arg::Int(4)}),
              absl::StatusCode::kUnimplemented, "a graph break");
}

}  // namespace
}  // namespace guardjit::testing
