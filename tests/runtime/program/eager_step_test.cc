// The eager step (runtime/program/eager_step.h): a graph node run by its
// reference kernel on the program's slots. Its step fields, every output of
// a multi-output node filling that node's extern slot, and UNIMPLEMENTED for
// a node without a reference kernel. Writing destinations:
// program_runner_test.cc.

#include "runtime/program/eager_step.h"

#include <memory>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "runtime/program/program_runner.h"
#include "runtime/program/step_runner.h"
#include "tests/core/toy_ops.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

TensorRef WholeSlot(int slot, const std::vector<IndexExpr>& sizes) {
  return {slot, sizes, ContiguousStrideExprs(sizes), IndexExpr::Const(0)};
}

Slot ExternSlot(int node, int output, DType dtype,
                std::vector<IndexExpr> sizes) {
  Slot s;
  s.source = Slot::Source::kExtern;
  s.node = node;
  s.output = output;
  s.dtype = dtype;
  s.sizes = std::move(sizes);
  return s;
}

TEST(EagerStepTest, EveryOutputOfTheNodeFillsItsSlot) {
  // (values, indices) = max.dim(x, 1) of x [2, 3], both graph outputs.
  GraphBuilder b("max");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("m", "aten.max.dim",
                        {Arg::Ref("x"), Arg::Int(1), Arg::Bool(false)})
                  .ok());
  ASSERT_TRUE(b.AddNode("v", "getitem", {Arg::Ref("m"), Arg::Int(0)}).ok());
  ASSERT_TRUE(b.AddNode("i", "getitem", {Arg::Ref("m"), Arg::Int(1)}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("v"), Arg::Ref("i")}).ok());
  auto graph = std::shared_ptr<const Graph>(*b.Finish());
  const Tensor x =
      testing::MakeTensor(DType::kFloat32, {2, 3}, {1, 5, 2, 7, 0, 3});
  auto program = std::make_unique<Program>();
  program->graph = graph;
  const TensorMeta x_meta = TensorMeta::Of(x);
  program->metas = *InferShapes(*graph, {&x_meta, 1});
  const int m = graph->FindNode("m");
  Slot in;
  in.source = Slot::Source::kInput;
  in.input = 0;
  in.sizes = ConstExprs({2, 3});
  // The indices' slot first: slots are found by (node, output).
  program->slots = {in, ExternSlot(m, 1, DType::kInt64, ConstExprs({2})),
                    ExternSlot(m, 0, DType::kFloat32, ConstExprs({2}))};
  program->slot_buffer = {-1, -1, -1};
  program->constants.resize(3);
  program->outputs = {WholeSlot(2, ConstExprs({2})),
                      WholeSlot(1, ConstExprs({2}))};
  const int64_t x_key = int64_t{graph->inputs()[0]} << 16;
  absl::StatusOr<ProgramStep> step =
      MakeEagerStep(*program, m, {{x_key, WholeSlot(0, ConstExprs({2, 3}))}});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->kind, StepKind::kEager);
  EXPECT_EQ(step->node, m);
  EXPECT_TRUE(step->can_fail) << "a reference kernel checks its arguments";
  EXPECT_EQ(step->label, "node 'm'");
  program->steps.push_back(*std::move(step));
  auto runner = ProgramRunner::Create(std::move(program));
  ASSERT_TRUE(runner.ok()) << runner.status();
  std::vector<Tensor> out(2);
  ASSERT_TRUE((*runner)->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
  testing::ExpectTensor(out[0], DType::kFloat32, {2}, {5, 7});
  testing::ExpectTensor(out[1], DType::kInt64, {2}, {1, 0});
}

TEST(EagerStepTest, ANodeWithoutAReferenceKernelIsUnimplemented) {
  GraphBuilder b("toy", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("t", "aten.trio.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.AddNode("t0", "getitem", {Arg::Ref("t"), Arg::Int(0)}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("t0")}).ok());
  Program program;
  program.graph = std::shared_ptr<const Graph>(*b.Finish());
  testing::ExpectError(MakeEagerStep(program, program.graph->FindNode("t"), {}),
                       absl::StatusCode::kUnimplemented,
                       "node 't' (aten.trio.default): no reference kernel");
}

}  // namespace
}  // namespace guardjit
