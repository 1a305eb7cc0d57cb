#include "runtime/eager_compiler.h"

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::RandomTensor;
using testing::ToDoubles;

std::shared_ptr<const Graph> Graph3() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(
      b.AddNode("t", "aten.permute.default",
                {Arg::Ref("x"), Arg::OfList({Arg::Int(1), Arg::Int(0)})})
          .ok());
  EXPECT_TRUE(b.AddNode("e", "aten.exp.default", {Arg::Ref("t")}).ok());
  EXPECT_TRUE(b.AddNode("s", "aten.sum.dim_IntList",
                        {Arg::Ref("e"), Arg::OfList({Arg::Int(0)})})
                  .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("s"), Arg::Ref("t")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(EagerCompilerTest, PlanMatchesTheInterpreter) {
  auto graph = Graph3();
  EagerCompiler compiler;
  Tensor x = RandomTensor(DType::kFloat32, {3, 5}, 7);
  auto plan = compiler.Compile(graph, Specialization{{TensorMeta::Of(x)}});
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto fallback = compiler.Fallback(graph);
  ASSERT_TRUE(fallback.ok());
  auto a = RunToVector(**plan, {x});
  auto b = RunToVector(**fallback, {x});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ(ToDoubles((*a)[0]), ToDoubles((*b)[0]));
  EXPECT_EQ(ToDoubles((*a)[1]), ToDoubles((*b)[1]));
  EXPECT_EQ((*plan)->Describe(),
            "eager plan, 3 kernels; outputs copied: 1 't' (computed before "
            "node 's' (aten.sum.dim_IntList), which can still fail)");
}

TEST(EagerCompilerTest, CompileReportsShapeErrorsNamingTheNode) {
  EagerCompiler compiler;
  auto plan = compiler.Compile(
      Graph3(), Specialization{{TensorMeta{DType::kFloat32, {3}}}});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("node 't' (aten.permute.default)"),
            absl::string_view::npos)
      << plan.status();
}

}  // namespace
}  // namespace guardjit
