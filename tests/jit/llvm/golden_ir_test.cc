// Golden files of generated code: for a few fixed graphs, the text
// GJ_LOGS=codegen prints when the JIT compiles them (the plan with each
// fused kernel's loop IR, then the LLVM IR of the kernels before the O3
// pipeline, which has no host CPU in it) must equal tests/jit/golden/
// <name>.txt, so refactors of lowering, fusion or codegen show up as diffs.
// GJ_UPDATE_GOLDEN=1 rewrites the files instead of comparing.

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/logging.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "tests/jit/jit_test_util.h"
#include "tests/scoped_env.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::Finish;
using testing::Ints;

Specialization StaticSpec(const std::vector<Shape>& shapes) {
  Specialization spec;
  for (const Shape& s : shapes) {
    spec.inputs.push_back(
        TensorMeta::Of(testing::RandomTensor(DType::kFloat32, s, 1)));
  }
  return spec;
}

// What GJ_LOGS=codegen prints while a fresh JitCompiler (kernels numbered
// from 0, nothing cached) compiles `graph` for `spec`.
std::string CodegenLog(std::shared_ptr<const Graph> graph,
                       const Specialization& spec) {
  std::string log;
  SetLogTopics("codegen");
  SetLogSink([&log](LogTopic topic, absl::string_view message) {
    if (topic == LogTopic::kCodegen) absl::StrAppend(&log, message, "\n");
  });
  auto jit = JitCompiler::Create();
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (jit.ok()) {
    auto executable = (*jit)->Compile(std::move(graph), spec);
    EXPECT_TRUE(executable.ok()) << executable.status();
  }
  SetLogSink(nullptr);
  const char* env = std::getenv("GJ_LOGS");
  SetLogTopics(env != nullptr ? env : "");
  return log;
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  testing::ExpectGoldenFile(name + ".txt", actual);
}

// relu((x + y) * x) - 1.5 with y broadcast along rows.
std::shared_ptr<const Graph> PointwiseGraph() {
  GraphBuilder b("pointwise_broadcast");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  AddNode(b, "a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("a"), Arg::Ref("x")});
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("m")});
  AddNode(b, "o", "aten.sub.Scalar", {Arg::Ref("r"), Arg::Float(1.5)});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  return Finish(b);
}

TEST(GoldenIrTest, PointwiseChainWithBroadcasting) {
  ExpectGolden("pointwise_broadcast",
               CodegenLog(PointwiseGraph(), StaticSpec({{4, 8}, {8}})));
}

TEST(GoldenIrTest, Softmax) {
  GraphBuilder b("softmax");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "sm", "aten._softmax.default",
          {Arg::Ref("x"), Arg::Int(-1), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("sm")}).ok());
  ExpectGolden("softmax", CodegenLog(Finish(b), StaticSpec({{4, 16}})));
}

// A 2x2 max pool: its window reduction is emitted tap by tap, no loop, so
// the loop around it is innermost for the vectorizer.
TEST(GoldenIrTest, MaxPoolWindow) {
  GraphBuilder b("pool");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "pool", "aten.max_pool2d_with_indices.default",
          {Arg::Ref("x"), Ints({2, 2}), Ints({2, 2})});
  AddNode(b, "values", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("values")}).ok());
  ExpectGolden("max_pool", CodegenLog(Finish(b), StaticSpec({{2, 8, 8, 6}})));
}

TEST(GoldenIrTest, LayerNorm) {
  const testing::ScopedEnv kernels("GJ_LAYER_NORM_STEP", "0");  // lowered
  GraphBuilder b("layer_norm");
  for (const char* x : {"x", "w", "bias"}) {
    ASSERT_TRUE(b.AddPlaceholder(x).ok());
  }
  AddNode(b, "ln", "aten.native_layer_norm.default",
          {Arg::Ref("x"), Ints({16}), Arg::Ref("w"), Arg::Ref("bias"),
           Arg::Float(1e-5)});
  AddNode(b, "y", "getitem", {Arg::Ref("ln"), Arg::Int(0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  ExpectGolden("layer_norm",
               CodegenLog(Finish(b), StaticSpec({{4, 16}, {16}, {16}})));
}

// relu(pad(cat(sin(x), y))): one kernel, cat and pad as selects.
TEST(GoldenIrTest, CatPadFusion) {
  GraphBuilder b("cat_pad");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  AddNode(b, "s", "aten.sin.default", {Arg::Ref("x")});
  AddNode(b, "c", "aten.cat.default",
          {Arg::OfList({Arg::Ref("s"), Arg::Ref("y")}), Arg::Int(1)});
  AddNode(b, "p", "aten.constant_pad_nd.default",
          {Arg::Ref("c"), Ints({1, 2}), Arg::Float(0.5)});
  AddNode(b, "o", "aten.relu.default", {Arg::Ref("p")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  ExpectGolden("cat_pad", CodegenLog(Finish(b), StaticSpec({{4, 6}, {4, 3}})));
}

// relu(embedding(w, i)): one kernel, the row read through a checked
// indirect index (its failure bit is what the kernel returns).
TEST(GoldenIrTest, EmbeddingGather) {
  GraphBuilder b("embedding");
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("i").ok());
  AddNode(b, "e", "aten.embedding.default", {Arg::Ref("w"), Arg::Ref("i")});
  AddNode(b, "o", "aten.relu.default", {Arg::Ref("e")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  Specialization spec = StaticSpec({{10, 16}});
  spec.inputs.push_back(
      TensorMeta::Of(testing::RandomTensor(DType::kInt64, {3}, 1, 0, 10)));
  ExpectGolden("embedding", CodegenLog(Finish(b), spec));
}

// The pointwise chain as a dynamic entry: sizes are kernel parameters.
TEST(GoldenIrTest, DynamicPointwiseChain) {
  const std::vector<Tensor> example = {
      testing::RandomTensor(DType::kFloat32, {4, 8}, 1),
      testing::RandomTensor(DType::kFloat32, {8}, 2)};
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(PointwiseGraph(), example, {{0, 0}, {0, 1}});
  ASSERT_NE(entry.graph, nullptr);
  ExpectGolden("dynamic_pointwise", CodegenLog(entry.graph, entry.spec));
}

}  // namespace
}  // namespace guardjit
