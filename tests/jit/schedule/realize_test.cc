// Which shared pointwise values get memory (jit/schedule/realize.h), and what
// that does to a plan: a residual stream read by every layer is stored once
// per residual add, so the layers' kernels are the same code.

#include "jit/schedule/realize.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/schedule/fusion.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::PlanOf;
using testing::RandomTensor;

// x, a, b, c [4, 8]: s = x + a (two tensors), t = s + b (three), read by
// r = t.sum(-1) and v = t * c; w = s * 2 reads s once more. Outputs r, v, w.
std::shared_ptr<const Graph> SharedChain() {
  GraphBuilder b("shared");
  for (const char* name : {"x", "a", "b", "c"}) {
    EXPECT_TRUE(b.AddPlaceholder(name).ok());
  }
  EXPECT_TRUE(
      b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("a")}).ok());
  EXPECT_TRUE(
      b.AddNode("t", "aten.add.Tensor", {Arg::Ref("s"), Arg::Ref("b")}).ok());
  EXPECT_TRUE(
      b.AddNode("r", "aten.sum.dim_IntList",
                {Arg::Ref("t"), Arg::OfList({Arg::Int(-1)}), Arg::Bool(false)})
          .ok());
  EXPECT_TRUE(
      b.AddNode("v", "aten.mul.Tensor", {Arg::Ref("t"), Arg::Ref("c")}).ok());
  EXPECT_TRUE(
      b.AddNode("w", "aten.mul.Scalar", {Arg::Ref("s"), Arg::Float(2)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("r"), Arg::Ref("v"), Arg::Ref("w")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(RealizeTest, SharedValuesReadingThreeTensorsGetMemory) {
  auto graph = SharedChain();
  const std::vector<TensorMeta> inputs(
      4, TensorMeta(DType::kFloat32, Shape{4, 8}));
  const GraphMeta metas = *InferShapes(*graph, inputs);
  auto lowered =
      Lower(*graph, metas,
            std::vector<std::vector<IndexExpr>>(4, ConstExprs({8, 1})));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::vector<bool> realize = SharedValuesToRealize(*lowered);
  ASSERT_EQ(realize.size(), lowered->values.size());
  auto value = [&](const char* name) {
    return lowered->ValueOf({graph->FindNode(name), 0});
  };
  EXPECT_FALSE(realize[value("s")]);  // reads two tensors
  EXPECT_TRUE(realize[value("t")]);   // three, read twice
  EXPECT_FALSE(realize[value("v")]);  // t (stored: one) and c, read once
  EXPECT_FALSE(realize[value("x")]);  // an input has memory already
  int realized = 0;
  for (bool r : realize) realized += r;
  EXPECT_EQ(realized, 1);
}

// A transformer-shaped residual stream, h [16, 64]: h0 = x + e; per layer,
// h = h + relu(mm(layer_norm(h), w_l)). The products split the layers into
// kernels. Inlined, layer l's layer norm re-read x, e and every earlier
// layer's product (a kernel reading l + 2 tensors, each layer's different);
// stored, a layer norm reads the stream from memory.
std::shared_ptr<const Graph> ResidualStream(int layers) {
  GraphBuilder b("stream");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("e").ok());
  EXPECT_TRUE(
      b.AddNode("h0", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("e")}).ok());
  std::string h = "h0";
  for (int l = 0; l < layers; ++l) {
    const std::string w = absl::StrCat("w", l), n = absl::StrCat("n", l),
                      m = absl::StrCat("m", l), r = absl::StrCat("r", l),
                      next = absl::StrCat("h", l + 1);
    EXPECT_TRUE(b.AddPlaceholder(w).ok());
    EXPECT_TRUE(b.AddNode(n, "aten.native_layer_norm.default",
                          {Arg::Ref(h), Arg::OfList({Arg::Int(64)}),
                           Arg::None(), Arg::None(), Arg::Float(1e-5)})
                    .ok());
    EXPECT_TRUE(
        b.AddNode(n + "_0", "getitem", {Arg::Ref(n), Arg::Int(0)}).ok());
    EXPECT_TRUE(
        b.AddNode(m, "aten.mm.default", {Arg::Ref(n + "_0"), Arg::Ref(w)})
            .ok());
    EXPECT_TRUE(b.AddNode(r, "aten.relu.default", {Arg::Ref(m)}).ok());
    EXPECT_TRUE(
        b.AddNode(next, "aten.add.Tensor", {Arg::Ref(h), Arg::Ref(r)}).ok());
    h = next;
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(h)}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(RealizeTest, AResidualStreamIsStoredSoLayersShareKernels) {
  constexpr int kLayers = 6;
  auto graph = ResidualStream(kLayers);
  std::vector<Shape> shapes = {{16, 64}, {16, 64}};
  for (int l = 0; l < kLayers; ++l) shapes.push_back({64, 64});
  const Plan plan = PlanOf(*graph, shapes);
  std::set<std::string> distinct;
  size_t most_inputs = 0;
  for (const PlanStep& step : plan.steps) {
    if (!step.is_kernel) continue;
    const Kernel& k = step.kernel.kernel;
    distinct.insert(k.ToString());
    size_t inputs = 0;
    for (const BufferParam& b : k.buffers) inputs += !b.is_output;
    most_inputs = std::max(most_inputs, inputs);
  }
  // Stored every other layer (h + relu(m) reads two tensors when h is
  // stored, three when h is h' + relu(m')): layers two apart are the same
  // code, and no kernel reads more than the stream's last two terms and
  // the product.
  EXPECT_LT(distinct.size(), static_cast<size_t>(plan.num_kernels()))
      << plan.ToString();
  EXPECT_LE(most_inputs, 3u) << plan.ToString();
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(RandomTensor(DType::kFloat32, shapes[i], 10 + i));
  }
  ExpectJitMatchesEager(graph, inputs, 1e-5);
}

}  // namespace
}  // namespace guardjit
