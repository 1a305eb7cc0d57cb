// Eager plans write the last node's outputs into the caller's destinations
// (EagerInterpreter::Run with planned metadata), and say why they copy the
// rest.

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::RandomTensor;
using testing::ToDoubles;

// A one-op graph: out = target(x, [y,] extra args...).
struct OpCase {
  std::string name;
  std::string target;
  DType dtype;
  int num_tensors;        // 1 or 2 inputs
  std::vector<Arg> more;  // arguments after the tensors
  bool in_place;          // whether the kernel writes a fitting destination
  // Only into a contiguous destination (reductions write rows in order).
  bool contiguous_only = false;
  std::vector<int64_t> sizes = {6, 5};
  Kwargs kwargs = {};
};

std::shared_ptr<const Graph> OneOp(const OpCase& c) {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::vector<Arg> args = {Arg::Ref("x")};
  if (c.num_tensors == 2) {
    EXPECT_TRUE(b.AddPlaceholder("y").ok());
    args.push_back(Arg::Ref("y"));
  }
  for (const Arg& a : c.more) args.push_back(a);
  absl::Status added = b.AddNode("op", c.target, args, c.kwargs).status();
  EXPECT_TRUE(added.ok()) << added;
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("op")}).ok());
  auto g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return std::shared_ptr<const Graph>(*std::move(g));
}

std::vector<Tensor> Inputs(const OpCase& c) {
  std::vector<Tensor> in = {RandomTensor(c.dtype, c.sizes, 1, 1.0, 9.0)};
  if (c.num_tensors == 2) in.push_back(RandomTensor(c.dtype, c.sizes, 2, 1, 9));
  return in;
}

// A destination laid out transposed: strides {1, rows}.
Tensor Transposed(DType dtype, IntSpan sizes) {
  Tensor storage = *Tensor::Empty(dtype, {sizes[1], sizes[0]});
  return storage.AsStrided(sizes, {1, sizes[0]}, 0);
}

class EagerDestinationTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(EagerDestinationTest, LastNodeWritesTheDestination) {
  const OpCase& c = GetParam();
  auto graph = OneOp(c);
  auto interpreter = *EagerInterpreter::Create(graph);
  const std::vector<Tensor> in = Inputs(c);
  std::vector<TensorMeta> metas;
  for (const Tensor& t : in) metas.push_back(TensorMeta::Of(t));
  auto planned = InferShapes(*graph, metas);
  ASSERT_TRUE(planned.ok()) << planned.status();
  const std::vector<Tensor> expected = *interpreter->Run(in, &*planned);
  const Tensor& want = expected[0];
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed destination" : "contiguous");
    Tensor dest = transposed && want.dim() == 2
                      ? Transposed(want.dtype(), want.sizes())
                      : *Tensor::Empty(want.dtype(), want.sizes());
    const Tensor* dests[] = {&dest};
    RunContext ctx;
    ctx.destinations = dests;
    auto got = interpreter->Run(in, &*planned, ctx);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(ToDoubles((*got)[0]), ToDoubles(want));
    const bool expect_in_place =
        c.in_place && !(transposed && c.contiguous_only);
    EXPECT_EQ((*got)[0].data() == dest.data(), expect_in_place);
    if (expect_in_place) EXPECT_EQ(ToDoubles(dest), ToDoubles(want));
  }
  EXPECT_EQ(interpreter->DescribeOutputCopies().empty(), true);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, EagerDestinationTest,
    ::testing::Values(
        OpCase{"add", "aten.add.Tensor", DType::kFloat32, 2, {}, true},
        OpCase{"sub_int", "aten.sub.Tensor", DType::kInt64, 2, {}, true},
        OpCase{"mul_scalar",
               "aten.mul.Tensor",
               DType::kFloat16,
               1,
               {Arg::Float(0.1)},
               true},
        OpCase{"div", "aten.div.Tensor", DType::kFloat64, 2, {}, true},
        // An integer division finds zero divisors while writing: never into
        // the caller's memory.
        OpCase{"div_trunc_int",
               "aten.div.Tensor_mode",
               DType::kInt32,
               2,
               {},
               false,
               false,
               {6, 5},
               {{"rounding_mode", Arg::String("trunc")}}},
        OpCase{"maximum", "aten.maximum.default", DType::kFloat32, 2, {}, true},
        OpCase{"relu", "aten.relu.default", DType::kFloat32, 1, {}, true},
        OpCase{"exp_of_int", "aten.exp.default", DType::kInt32, 1, {}, true},
        OpCase{"isnan", "aten.isnan.default", DType::kFloat32, 1, {}, true},
        OpCase{"lt", "aten.lt.Tensor", DType::kFloat32, 2, {}, true},
        OpCase{"clamp",
               "aten.clamp.default",
               DType::kFloat32,
               1,
               {Arg::Float(2.0), Arg::Float(5.0)},
               true},
        OpCase{"leaky_relu",
               "aten.leaky_relu.default",
               DType::kFloat32,
               1,
               {Arg::Float(0.1)},
               true},
        OpCase{"sum_dim",
               "aten.sum.dim_IntList",
               DType::kFloat32,
               1,
               {Arg::OfList({Arg::Int(2)})},
               true,
               /*contiguous_only=*/true,
               {6, 5, 4}},
        OpCase{"amax",
               "aten.amax.default",
               DType::kInt64,
               1,
               {Arg::OfList({Arg::Int(0)})},
               true,
               /*contiguous_only=*/true,
               {3, 6, 5}}),
    [](const auto& info) { return info.param.name; });

TEST(EagerDestinationCopies, NamesEachCopiedOutput) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddConstant("w", *Tensor::Empty(DType::kFloat32, {2})).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.AddNode("e", "aten.exp.default", {Arg::Ref("m")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x"), Arg::Ref("w"), Arg::Ref("r"),
                            Arg::Ref("e"), Arg::Ref("e")})
                  .ok());
  auto graph = std::shared_ptr<const Graph>(*b.Finish());
  auto interpreter = *EagerInterpreter::Create(graph);
  EXPECT_EQ(interpreter->DescribeOutputCopies(),
            "outputs copied: 0 'x' (a view of input 0 ('x')), 1 'w' (a view "
            "of constant 'w'), 2 'r' (computed before node 'e' "
            "(aten.exp.default), which can still fail), 3 'e' (the same "
            "memory as output 4), 4 'e' (the same memory as output 3)");

  GraphBuilder b2("g2");
  ASSERT_TRUE(b2.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b2.AddNode("c", "aten.cumsum.default", {Arg::Ref("x"), Arg::Int(0)})
          .ok());
  ASSERT_TRUE(b2.SetOutputs({Arg::Ref("c")}).ok());
  auto interpreter2 =
      *EagerInterpreter::Create(std::shared_ptr<const Graph>(*b2.Finish()));
  EXPECT_EQ(interpreter2->DescribeOutputCopies(),
            "outputs copied: 0 'c' (the reference kernel of node 'c' "
            "(aten.cumsum.default) allocates its results)");

  // The matrix products write their destinations.
  GraphBuilder b3("g3");
  ASSERT_TRUE(b3.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b3.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b3.SetOutputs({Arg::Ref("m")}).ok());
  auto interpreter3 =
      *EagerInterpreter::Create(std::shared_ptr<const Graph>(*b3.Finish()));
  EXPECT_EQ(interpreter3->DescribeOutputCopies(), "");
}

// Fixture for the run-time conditions: relu(x) + y, the add last.
struct AddGraph {
  std::shared_ptr<const Graph> graph;
  std::unique_ptr<EagerInterpreter> interpreter;
  GraphMeta planned;
  std::vector<Tensor> in;
};

AddGraph MakeAddGraph() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode("s", "aten.add.Tensor", {Arg::Ref("r"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  AddGraph g;
  g.graph = std::shared_ptr<const Graph>(*b.Finish());
  g.interpreter = *EagerInterpreter::Create(g.graph);
  g.in = {RandomTensor(DType::kFloat32, {64}, 3),
          RandomTensor(DType::kFloat32, {64}, 4)};
  g.planned = *InferShapes(*g.graph,
                           {TensorMeta::Of(g.in[0]), TensorMeta::Of(g.in[1])});
  return g;
}

TEST(EagerDestinationConditions, DestinationOverInputIsCopiedIntoAfter) {
  AddGraph g = MakeAddGraph();
  const std::vector<double> want =
      ToDoubles((*g.interpreter->Run(g.in, &g.planned))[0]);
  // f(x) written over y: the kernel must not write into memory it reads.
  Tensor over_input = g.in[1];
  const Tensor* dests[] = {&over_input};
  RunContext ctx;
  ctx.destinations = dests;
  auto got = g.interpreter->Run(g.in, &g.planned, ctx);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NE((*got)[0].data(), over_input.data());
  EXPECT_EQ(ToDoubles((*got)[0]), want);
}

TEST(EagerDestinationConditions, StoppableCallWritesNothingInPlace) {
  AddGraph g = MakeAddGraph();
  Tensor dest = *Tensor::Empty(DType::kFloat32, {64});
  const Tensor* dests[] = {&dest};
  RunContext ctx;
  ctx.destinations = dests;
  ctx.deadline = absl::Now() + absl::Hours(1);
  auto got = g.interpreter->Run(g.in, &g.planned, ctx);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NE((*got)[0].data(), dest.data());

  ctx.deadline = absl::InfiniteFuture();
  got = g.interpreter->Run(g.in, &g.planned, ctx);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].data(), dest.data());
}

TEST(EagerDestinationConditions, UnplannedRunsNeverWriteDestinations) {
  AddGraph g = MakeAddGraph();
  Tensor dest = *Tensor::Empty(DType::kFloat32, {64});
  const Tensor* dests[] = {&dest};
  RunContext ctx;
  ctx.destinations = dests;
  auto got = g.interpreter->Run(g.in, nullptr, ctx);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NE((*got)[0].data(), dest.data());
}

}  // namespace
}  // namespace guardjit
