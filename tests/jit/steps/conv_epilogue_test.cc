// jit/steps/conv_epilogue.cc: FuseConvSteps on plans Schedule makes (the
// convolution an eager step): a float convolution becomes one ConvStep with
// its geometry read from the node, the next pointwise kernel as its epilogue
// (or a storing epilogue when the result is read elsewhere), the bias added
// to the epilogue, and Lower's reason dropped; transposed, float16 and empty
// convolutions stay eager with the reason saying why. Compiled plans against
// the eager interpreter for 1-3 spatial dims, groups, stride, padding and
// dilation.

#include "jit/steps/conv_epilogue.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/conv_step.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::Ints;
using testing::RandomTensor;

constexpr char kConv[] = "aten.convolution.default";

struct ConvArgs {
  std::vector<int64_t> stride = {1}, padding = {0}, dilation = {1};
  bool transposed = false;
  int64_t groups = 1;
  bool bias = true;
};

// x, w[, b] -> c = convolution(...) -> consumer ("relu": relu(c) the output;
// "both": relu(c) and c the outputs; "": c the output).
std::shared_ptr<const Graph> ConvGraph(const ConvArgs& a,
                                       const std::string& consumer) {
  GraphBuilder g("conv");
  EXPECT_TRUE(g.AddPlaceholder("x").ok());
  EXPECT_TRUE(g.AddPlaceholder("w").ok());
  if (a.bias) EXPECT_TRUE(g.AddPlaceholder("b").ok());
  std::vector<int64_t> output_padding(a.stride.size(), 0);
  testing::AddNode(
      g, "c", kConv,
      {Arg::Ref("x"), Arg::Ref("w"), a.bias ? Arg::Ref("b") : Arg::None(),
       Ints(a.stride), Ints(a.padding), Ints(a.dilation),
       Arg::Bool(a.transposed), Ints(output_padding), Arg::Int(a.groups)});
  std::vector<Arg> outputs;
  if (!consumer.empty()) {
    testing::AddNode(g, "r", "aten.relu.default", {Arg::Ref("c")});
    outputs.push_back(Arg::Ref("r"));
  }
  if (consumer != "relu") outputs.push_back(Arg::Ref("c"));
  EXPECT_TRUE(g.SetOutputs(outputs).ok());
  return testing::Finish(g);
}

struct Planned {
  Plan plan;
  std::vector<std::string> reasons;
};

// Lowered and scheduled (the convolution an eager step), before
// FuseConvSteps.
Planned PlanBeforeFusion(const Graph& graph,
                         const std::vector<Tensor>& inputs) {
  Planned p;
  std::vector<TensorMeta> metas;
  std::vector<std::vector<IndexExpr>> strides;
  for (const Tensor& t : inputs) {
    metas.push_back(TensorMeta::Of(t));
    strides.push_back(ConstExprs(t.strides()));
  }
  auto graph_metas = InferShapes(graph, metas);
  EXPECT_TRUE(graph_metas.ok()) << graph_metas.status();
  if (!graph_metas.ok()) return p;
  auto lowered = Lower(graph, *graph_metas, strides, &p.reasons);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return p;
  auto plan = Schedule(*lowered);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (plan.ok()) p.plan = *std::move(plan);
  return p;
}

int EagerSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) n += !s.is_kernel;
  return n;
}

const PlanStep* ConvStepOf(const Plan& plan) {
  const PlanStep* found = nullptr;
  for (const PlanStep& s : plan.steps) {
    if (s.conv != nullptr) {
      EXPECT_EQ(found, nullptr) << "two conv steps";
      found = &s;
    }
  }
  return found;
}

std::vector<Tensor> Inputs(DType d, Shape x, Shape w, bool bias,
                           uint64_t seed) {
  std::vector<Tensor> in = {RandomTensor(d, x, seed),
                            RandomTensor(d, w, seed + 1)};
  if (bias) in.push_back(RandomTensor(d, {w[0]}, seed + 2));
  return in;
}

TEST(ConvEpilogue, ConvolutionBecomesAConvStepWithItsConsumer) {
  ConvArgs a;
  a.stride = {2, 1};
  a.padding = {1, 0};
  a.dilation = {1, 2};
  a.groups = 2;
  auto graph = ConvGraph(a, "relu");
  const std::vector<Tensor> in =
      Inputs(DType::kFloat64, {3, 4, 9, 8}, {6, 2, 3, 2}, true, 1);
  Planned p = PlanBeforeFusion(*graph, in);
  ASSERT_EQ(EagerSteps(p.plan), 1) << p.plan.ToString();
  ASSERT_EQ(p.reasons,
            std::vector<std::string>{"c (aten.convolution.default): no JIT "
                                     "lowering"});
  const int kernels = p.plan.num_kernels();  // the relu's

  FuseConvSteps(*graph, p.plan, &p.reasons);
  EXPECT_TRUE(p.reasons.empty()) << p.reasons[0];
  EXPECT_EQ(EagerSteps(p.plan), 0) << p.plan.ToString();
  // The relu kernel is the conv step's epilogue: no kernel more.
  EXPECT_EQ(p.plan.num_kernels(), kernels);
  const PlanStep* step = ConvStepOf(p.plan);
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->is_kernel);
  const ConvStep& c = *step->conv;
  EXPECT_EQ(c.target, kConv);
  EXPECT_EQ(c.dtype, DType::kFloat64);
  EXPECT_EQ(c.spatial, 2);
  EXPECT_EQ(c.batch, 3);
  EXPECT_EQ(c.groups, 2);
  EXPECT_EQ(c.in_channels, 2);
  EXPECT_EQ(c.out_channels, 3);
  // Spatial dims right-aligned in Dims3.
  EXPECT_EQ(c.in, (ConvStep::Dims3{1, 9, 8}));
  EXPECT_EQ(c.kernel, (ConvStep::Dims3{1, 3, 2}));
  EXPECT_EQ(c.stride, (ConvStep::Dims3{1, 2, 1}));
  EXPECT_EQ(c.padding, (ConvStep::Dims3{0, 1, 0}));
  EXPECT_EQ(c.dilation, (ConvStep::Dims3{1, 1, 2}));
  // out = (in + 2 * pad - dil * (k - 1) - 1) / stride + 1.
  EXPECT_EQ(c.out, (ConvStep::Dims3{1, 5, 6}));
  EXPECT_GE(c.product_param, 0);
  EXPECT_LT(c.product_param,
            static_cast<int>(step->kernel.kernel.buffers.size()));
}

TEST(ConvEpilogue, BiasIsReadByTheEpilogue) {
  // float64 (never oneDNN): the bias is one more input of the epilogue.
  size_t buffers[2];
  for (bool bias : {false, true}) {
    ConvArgs a;
    a.bias = bias;
    auto graph = ConvGraph(a, "relu");
    Planned p = PlanBeforeFusion(
        *graph, Inputs(DType::kFloat64, {1, 2, 5}, {3, 2, 2}, bias, 2));
    FuseConvSteps(*graph, p.plan, nullptr);
    const PlanStep* step = ConvStepOf(p.plan);
    ASSERT_NE(step, nullptr);
    buffers[bias] = step->kernel.kernel.buffers.size();
  }
  EXPECT_EQ(buffers[1], buffers[0] + 1);
}

TEST(ConvEpilogue, ResultReadElsewhereGetsAStoringEpilogue) {
  // relu(c) and c both outputs: the conv step stores c; the relu stays a
  // kernel of its own reading it.
  auto graph = ConvGraph(ConvArgs(), "both");
  const std::vector<Tensor> in =
      Inputs(DType::kFloat64, {2, 3, 6, 6}, {4, 3, 3, 3}, true, 3);
  Planned p = PlanBeforeFusion(*graph, in);
  const int kernels = p.plan.num_kernels();
  FuseConvSteps(*graph, p.plan, &p.reasons);
  EXPECT_TRUE(p.reasons.empty());
  ASSERT_NE(ConvStepOf(p.plan), nullptr);
  EXPECT_EQ(p.plan.num_kernels(), kernels + 1) << p.plan.ToString();
  // A bare convolution, too, gets a storing epilogue.
  auto bare = ConvGraph(ConvArgs(), "");
  Planned q = PlanBeforeFusion(*bare, in);
  EXPECT_EQ(q.plan.num_kernels(), 0);
  FuseConvSteps(*bare, q.plan, nullptr);
  EXPECT_EQ(q.plan.num_kernels(), 1);
  ASSERT_NE(ConvStepOf(q.plan), nullptr);
  testing::ExpectJitMatchesEager(graph, in, 1e-12);
  testing::ExpectJitMatchesEager(bare, in, 1e-12);
}

TEST(ConvEpilogue, ConvolutionsLeftEagerSayWhy) {
  struct Case {
    ConvArgs args;
    DType dtype;
    Shape x, w;
    std::string why;
  };
  ConvArgs transposed;
  transposed.transposed = true;
  transposed.bias = false;  // Inputs' bias is sized for a plain conv
  const std::vector<Case> cases = {
      {transposed,
       DType::kFloat32,
       {1, 2, 5, 5},
       {2, 3, 3, 3},
       "c (aten.convolution.default): no conv step: transposed "
       "convolution"},
      {ConvArgs(),
       DType::kFloat16,
       {1, 2, 5, 5},
       {3, 2, 3, 3},
       "c (aten.convolution.default): no conv step: float16: conv steps "
       "take float32 and float64"},
      {ConvArgs(),
       DType::kFloat32,
       {0, 2, 5, 5},
       {3, 2, 3, 3},
       "c (aten.convolution.default): no conv step: an empty extent"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    auto graph = ConvGraph(c.args, "relu");
    const std::vector<Tensor> in = Inputs(c.dtype, c.x, c.w, c.args.bias, 4);
    Planned p = PlanBeforeFusion(*graph, in);
    const size_t steps = p.plan.steps.size();
    FuseConvSteps(*graph, p.plan, &p.reasons);
    EXPECT_EQ(p.reasons, std::vector<std::string>{c.why});
    EXPECT_EQ(ConvStepOf(p.plan), nullptr);
    EXPECT_EQ(EagerSteps(p.plan), 1);
    EXPECT_EQ(p.plan.steps.size(), steps);
    testing::ExpectJitMatchesEager(graph, in,
                                   c.dtype == DType::kFloat16 ? 1e-2 : 1e-5);
  }
}

TEST(ConvEpilogue, CompiledConvStepsMatchEager) {
  struct Case {
    ConvArgs args;
    Shape x, w;
  };
  ConvArgs one_d;
  one_d.stride = {3};
  one_d.padding = {2};
  one_d.groups = 3;
  ConvArgs three_d;
  three_d.dilation = {2, 1, 1};
  three_d.padding = {1};
  three_d.bias = false;
  const std::vector<Case> cases = {
      {one_d, {2, 6, 11}, {9, 2, 4}},
      {three_d, {1, 2, 5, 4, 3}, {3, 2, 2, 3, 1}},
  };
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << DTypeName(d) << " rank " << c.x.size());
      auto graph = ConvGraph(c.args, "relu");
      const std::vector<Tensor> in = Inputs(d, c.x, c.w, c.args.bias, 5);
      const Plan plan = testing::PlanOfInputs(*graph, in);
      EXPECT_NE(ConvStepOf(plan), nullptr) << plan.ToString();
      EXPECT_EQ(EagerSteps(plan), 0);
      testing::ExpectJitMatchesEager(graph, in,
                                     d == DType::kFloat32 ? 1e-4 : 1e-12);
    }
  }
}

}  // namespace
}  // namespace guardjit
