// Inference batch norms folded into the convolutions before them
// (jit/fold_batch_norm.h): which fold, and compiled results of the folded
// graphs against the eager interpreter on the original ones.

#include "jit/fold_batch_norm.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using testing::Ints;
using testing::RandomTensor;

struct Options {
  DType dtype = DType::kFloat32;
  bool conv_bias = true;
  bool affine = true;  // the batch norm's weight and bias
  int64_t groups = 1;
  bool params_as_inputs = false;  // running stats as graph inputs
  bool conv_read_twice = false;   // the convolution's output is an output
  bool reads_stats = false;       // the batch norm's output 1 is read
};

// x -> conv -> batch norm (no training) -> relu.
std::shared_ptr<const Graph> ConvBnGraph(const Options& o) {
  GraphBuilder b("conv_bn");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  const int64_t c = 8;
  const auto constant = [&](const std::string& name, const Shape& shape,
                            uint64_t seed, double lo, double hi) {
    EXPECT_TRUE(
        b.AddConstant(name, RandomTensor(o.dtype, shape, seed, lo, hi)).ok());
  };
  constant("w", {c, 4 / o.groups, 3, 3}, 1, -0.5, 0.5);
  if (o.conv_bias) constant("cb", {c}, 2, -1, 1);
  if (o.affine) {
    constant("gamma", {c}, 3, 0.5, 1.5);
    constant("beta", {c}, 4, -1, 1);
  }
  if (o.params_as_inputs) {
    EXPECT_TRUE(b.AddPlaceholder("mean").ok());
    EXPECT_TRUE(b.AddPlaceholder("var").ok());
  } else {
    constant("mean", {c}, 5, -1, 1);
    constant("var", {c}, 6, 0.2, 2);
  }
  AddNode(
      b, "conv", "aten.convolution.default",
      {Arg::Ref("x"), Arg::Ref("w"), o.conv_bias ? Arg::Ref("cb") : Arg::None(),
       Ints({1, 1}), Ints({1, 1}), Ints({1, 1}), Arg::Bool(false), Ints({0, 0}),
       Arg::Int(o.groups)});
  AddNode(b, "bn", "aten._native_batch_norm_legit_no_training.default",
          {Arg::Ref("conv"), o.affine ? Arg::Ref("gamma") : Arg::None(),
           o.affine ? Arg::Ref("beta") : Arg::None(), Arg::Ref("mean"),
           Arg::Ref("var"), Arg::Float(0.1), Arg::Float(1e-5)});
  AddNode(b, "bn0", "getitem", {Arg::Ref("bn"), Arg::Int(0)});
  AddNode(b, "out", "aten.relu.default", {Arg::Ref("bn0")});
  std::vector<Arg> outputs = {Arg::Ref("out")};
  if (o.conv_read_twice) outputs.push_back(Arg::Ref("conv"));
  if (o.reads_stats) {
    AddNode(b, "bn1", "getitem", {Arg::Ref("bn"), Arg::Int(1)});
    outputs.push_back(Arg::Ref("bn1"));
  }
  EXPECT_TRUE(b.SetOutputs(std::move(outputs)).ok());
  return Finish(b);
}

std::vector<Tensor> Inputs(const Options& o) {
  std::vector<Tensor> inputs = {RandomTensor(o.dtype, {2, 4, 7, 6}, 10)};
  if (o.params_as_inputs) {
    inputs.push_back(RandomTensor(o.dtype, {8}, 11, -1, 1));
    inputs.push_back(RandomTensor(o.dtype, {8}, 12, 0.2, 2));
  }
  return inputs;
}

int Count(const Graph& graph, const std::string& target) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += node.target == target;
  return n;
}

constexpr char kBatchNorm[] =
    "aten._native_batch_norm_legit_no_training.default";

TEST(FoldBatchNormTest, FoldsAndMatchesEager) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (bool conv_bias : {true, false}) {
      for (bool affine : {true, false}) {
        for (int64_t groups : {1, 2}) {
          Options o;
          o.dtype = dtype;
          o.conv_bias = conv_bias;
          o.affine = affine;
          o.groups = groups;
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), conv_bias ? " bias" : "",
                                    affine ? " affine" : "", " groups ",
                                    groups));
          const auto graph = ConvBnGraph(o);
          auto folded = FoldBatchNorms(graph);
          ASSERT_TRUE(folded.ok()) << folded.status();
          EXPECT_EQ(folded->folded, 1);
          EXPECT_EQ(Count(*folded->graph, kBatchNorm), 0);
          EXPECT_EQ(Count(*folded->graph, "aten.convolution.default"), 1);
          ExpectJitMatchesEager(graph, Inputs(o),
                                dtype == DType::kFloat32 ? 1e-5 : 1e-12);
        }
      }
    }
  }
}

// A dynamic entry's symbolic metadata follows the folded graph's nodes.
TEST(FoldBatchNormTest, DynamicBatchMatchesEager) {
  const auto graph = ConvBnGraph(Options());
  std::vector<std::vector<Tensor>> calls;
  for (int64_t batch : {2, 3, 5}) {
    calls.push_back({RandomTensor(DType::kFloat32, {batch, 4, 7, 6}, batch)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 1e-5);
}

// The rest of the graph is copied as it was: an input stays
// value-specialized (core/value_inputs.h), metadata and names stay.
TEST(FoldBatchNormTest, CopiesTheRestOfTheGraphAsItWas) {
  GraphBuilder b("conv_bn_shift");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddPlaceholder("shift", TensorMeta(DType::kInt64, {SymInt(1)})).ok());
  ASSERT_TRUE(b.MarkValueSpecialized("shift").ok());
  const auto constant = [&](const std::string& name, const Shape& shape,
                            uint64_t seed, double lo, double hi) {
    ASSERT_TRUE(
        b.AddConstant(name, RandomTensor(DType::kFloat32, shape, seed, lo, hi))
            .ok());
  };
  constant("w", {8, 4, 3, 3}, 1, -0.5, 0.5);
  constant("mean", {8}, 5, -1, 1);
  constant("var", {8}, 6, 0.2, 2);
  AddNode(
      b, "conv", "aten.convolution.default",
      {Arg::Ref("x"), Arg::Ref("w"), Arg::None(), Ints({1, 1}), Ints({1, 1}),
       Ints({1, 1}), Arg::Bool(false), Ints({0, 0}), Arg::Int(1)});
  AddNode(b, "bn", kBatchNorm,
          {Arg::Ref("conv"), Arg::None(), Arg::None(), Arg::Ref("mean"),
           Arg::Ref("var"), Arg::Float(0.1), Arg::Float(1e-5)});
  AddNode(b, "bn0", "getitem", {Arg::Ref("bn"), Arg::Int(0)});
  AddNode(b, "out", "aten.add.Tensor", {Arg::Ref("bn0"), Arg::Ref("shift")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  const auto graph = Finish(b);
  auto folded = FoldBatchNorms(graph);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->folded, 1);
  const Graph& g = *folded->graph;
  EXPECT_EQ(Count(g, kBatchNorm), 0);
  EXPECT_EQ(g.node(1).name, "shift");
  EXPECT_TRUE(g.node(1).specialize_value);
  ASSERT_TRUE(g.node(1).meta.has_value());
  EXPECT_EQ(g.node(1).meta->dtype, DType::kInt64);
  // The folded convolution stands for the input graph's convolution.
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (g.node(i).target != "aten.convolution.default") continue;
    ASSERT_GE(folded->source_node[i], 0);
    EXPECT_EQ(graph->node(folded->source_node[i]).name, "conv");
  }
}

TEST(FoldBatchNormTest, LeavesWhatCannotFold) {
  Options stats_inputs;
  stats_inputs.params_as_inputs = true;
  Options conv_read;
  conv_read.conv_read_twice = true;
  Options stats_read;
  stats_read.reads_stats = true;
  for (const Options& o : {stats_inputs, conv_read, stats_read}) {
    const auto graph = ConvBnGraph(o);
    auto folded = FoldBatchNorms(graph);
    ASSERT_TRUE(folded.ok()) << folded.status();
    EXPECT_EQ(folded->folded, 0);
    EXPECT_EQ(folded->graph, graph);
    ExpectJitMatchesEager(graph, Inputs(o), 1e-5);
  }
}

// x -> (conv -> batch norm -> relu) x `layers`; the last layer's batch norm
// also returns its output 1, so it stays unfolded.
std::shared_ptr<const Graph> ConvBnChain(int layers) {
  GraphBuilder b("conv_bn_chain");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  const int64_t c = 8;
  std::string in = "x";
  std::vector<Arg> outputs;
  for (int l = 0; l < layers; ++l) {
    const std::string p = absl::StrCat("l", l, "_");
    const uint64_t seed = 100 * (l + 1);
    const auto constant = [&](const std::string& name, const Shape& shape,
                              uint64_t offset, double lo, double hi) {
      EXPECT_TRUE(b.AddConstant(p + name, RandomTensor(DType::kFloat32, shape,
                                                       seed + offset, lo, hi))
                      .ok());
    };
    constant("w", {c, l == 0 ? 4 : c, 3, 3}, 1, -0.5, 0.5);
    constant("cb", {c}, 2, -1, 1);
    constant("gamma", {c}, 3, 0.5, 1.5);
    constant("beta", {c}, 4, -1, 1);
    constant("mean", {c}, 5, -1, 1);
    constant("var", {c}, 6, 0.2, 2);
    AddNode(b, p + "conv", "aten.convolution.default",
            {Arg::Ref(in), Arg::Ref(p + "w"), Arg::Ref(p + "cb"), Ints({1, 1}),
             Ints({1, 1}), Ints({1, 1}), Arg::Bool(false), Ints({0, 0}),
             Arg::Int(1)});
    AddNode(b, p + "bn", "aten._native_batch_norm_legit_no_training.default",
            {Arg::Ref(p + "conv"), Arg::Ref(p + "gamma"), Arg::Ref(p + "beta"),
             Arg::Ref(p + "mean"), Arg::Ref(p + "var"), Arg::Float(0.1),
             Arg::Float(1e-5)});
    AddNode(b, p + "bn0", "getitem", {Arg::Ref(p + "bn"), Arg::Int(0)});
    AddNode(b, p + "out", "aten.relu.default", {Arg::Ref(p + "bn0")});
    in = p + "out";
    if (l == layers - 1) {
      AddNode(b, p + "bn1", "getitem", {Arg::Ref(p + "bn"), Arg::Int(1)});
      outputs.push_back(Arg::Ref(p + "bn1"));
    }
  }
  outputs.insert(outputs.begin(), Arg::Ref(in));
  EXPECT_TRUE(b.SetOutputs(std::move(outputs)).ok());
  return Finish(b);
}

// Folds computed on a pool's threads are the ones computed on one thread,
// node for node and bit for bit.
// The folded weights and biases are cut from one block
// (core/constant_arena.h), each still a tensor of its own: its own storage,
// starting at it, holding its bytes, 64-byte aligned.
TEST(FoldBatchNormTest, FoldedConstantsHaveStoragesOfTheirOwn) {
  const auto graph = ConvBnChain(6);
  ThreadPool pool(3);
  auto folded = FoldBatchNorms(graph, &pool);
  ASSERT_TRUE(folded.ok()) << folded.status();
  ASSERT_EQ(folded->folded, 5);
  std::vector<const Tensor*> made;  // the constants the fold made
  for (size_t i = 0; i < folded->graph->nodes().size(); ++i) {
    const Node& node = folded->graph->node(static_cast<int>(i));
    if (node.kind == NodeKind::kConstant && folded->source_node[i] < 0) {
      made.push_back(&node.constant);
    }
  }
  EXPECT_EQ(made.size(), 10u);  // a weight and a bias per fold
  testing::ExpectStoragesOfTheirOwn(made);
}

TEST(FoldBatchNormTest, FoldsOnPoolThreadsAsOnOneThread) {
  const auto graph = ConvBnChain(6);
  auto serial = FoldBatchNorms(graph);
  ASSERT_TRUE(serial.ok()) << serial.status();
  ThreadPool pool(4);
  auto pooled = FoldBatchNorms(graph, &pool);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  EXPECT_EQ(serial->folded, 5);
  EXPECT_EQ(pooled->folded, 5);
  EXPECT_EQ(Count(*pooled->graph, kBatchNorm), 1);
  EXPECT_EQ(pooled->source_node, serial->source_node);
  ASSERT_EQ(pooled->graph->nodes().size(), serial->graph->nodes().size());
  for (size_t i = 0; i < serial->graph->nodes().size(); ++i) {
    const Node& a = serial->graph->node(static_cast<int>(i));
    const Node& b = pooled->graph->node(static_cast<int>(i));
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.target, b.target);
    if (a.kind != NodeKind::kConstant) continue;
    ASSERT_EQ(a.constant.sizes(), b.constant.sizes());
    EXPECT_EQ(std::memcmp(a.constant.data(), b.constant.data(),
                          a.constant.numel() * sizeof(float)),
              0);
  }
  ExpectJitMatchesEager(
      graph, {RandomTensor(DType::kFloat32, {2, 4, 7, 6}, 10)}, 1e-4);
}

}  // namespace
}  // namespace guardjit
