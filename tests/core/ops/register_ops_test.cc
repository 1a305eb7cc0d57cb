// The op families' registration (core/ops/register_ops.h): each family on a
// registry of its own registers its ops and nobody else's, the families
// together are RegisterAllOps (and the global registry), a second
// registration is refused, and what registration sets on the ops it adds
// (data-dependent outputs, one-value int lists, shape rules that run).

#include "core/ops/register_ops.h"

#include <set>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/shape_inference.h"
#include "core/value_inputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

struct Family {
  const char* name;
  absl::Status (*registers)(OpRegistry&);
  // Ops the family must register.
  std::vector<std::string> samples;
};

const std::vector<Family>& Families() {
  static const std::vector<Family>* families = new std::vector<Family>{
      {"unary", RegisterUnaryOps, {"aten.relu.default", "aten.exp.default"}},
      {"binary", RegisterBinaryOps, {"aten.add.Tensor", "aten.sub.Tensor"}},
      {"reduction",
       RegisterReductionOps,
       {"aten.sum.dim_IntList", "aten.max.dim"}},
      {"normalization",
       RegisterNormalizationOps,
       {"aten.native_layer_norm.default", "aten._softmax.default"}},
      {"linalg", RegisterLinalgOps, {"aten.mm.default", "aten.addmm.default"}},
      {"view", RegisterViewOps, {"aten.as_strided.default"}},
      {"shape", RegisterShapeOps, {"aten.cat.default", "aten.clone.default"}},
      {"indexing",
       RegisterIndexingOps,
       {"aten.index_select.default", "aten.index.Tensor"}},
      {"creation",
       RegisterCreationOps,
       {"aten.arange.start", "aten.full.default"}},
      {"sym", RegisterSymOps, {"aten.sym_size.int", "operator.mul"}},
      {"control_flow",
       RegisterControlFlowOps,
       {kCondTarget, kValueSpecializedTarget}},
      {"activation", RegisterActivationOps, {"aten.leaky_relu.default"}},
      {"pooling",
       RegisterPoolingOps,
       {"aten.max_pool2d_with_indices.default", "aten.avg_pool3d.default"}},
      {"assert", RegisterAssertOps, {"aten._assert_scalar.default"}},
      {"data_dependent",
       RegisterDataDependentOps,
       {"aten.nonzero.default", "aten._local_scalar_dense.default"}},
      {"padding", RegisterPaddingOps, {"aten.reflection_pad2d.default"}},
      {"resample", RegisterResampleOps, {"aten.upsample_nearest2d.vec"}},
      {"scatter", RegisterScatterOps, {"aten.scatter.src"}},
      {"sort", RegisterSortOps, {"aten.sort.default", "aten.topk.default"}},
      {"attention",
       RegisterAttentionOps,
       {"aten.scaled_dot_product_attention.default"}},
  };
  return *families;
}

std::vector<std::string> Targets(const OpRegistry& registry) {
  std::vector<std::string> out;
  for (const OpDef* def : registry.All()) out.push_back(def->target);
  return out;
}

TEST(RegisterOpsTest, EachFamilyRegistersItsOwnOpsOnly) {
  std::set<std::string> seen;
  for (const Family& family : Families()) {
    SCOPED_TRACE(family.name);
    OpRegistry registry;
    const absl::Status status = family.registers(registry);
    ASSERT_TRUE(status.ok()) << status;
    const std::vector<std::string> targets = Targets(registry);
    EXPECT_FALSE(targets.empty());
    for (const std::string& sample : family.samples) {
      EXPECT_NE(registry.Find(sample), nullptr) << sample;
    }
    // No op is registered by two families.
    for (const std::string& t : targets) {
      EXPECT_TRUE(seen.insert(t).second) << t << " in two families";
    }
  }
}

TEST(RegisterOpsTest, AllOpsIsTheUnionOfTheFamilies) {
  std::set<std::string> families;
  for (const Family& family : Families()) {
    OpRegistry registry;
    ASSERT_TRUE(family.registers(registry).ok()) << family.name;
    for (const std::string& t : Targets(registry)) families.insert(t);
  }
  OpRegistry all;
  const absl::Status status = RegisterAllOps(all);
  ASSERT_TRUE(status.ok()) << status;
  const std::vector<std::string> targets = Targets(all);
  EXPECT_EQ(std::set<std::string>(targets.begin(), targets.end()), families);
  EXPECT_EQ(targets.size(), families.size());
  // The global registry is exactly these ops.
  EXPECT_EQ(Targets(OpRegistry::Global()), targets);
}

TEST(RegisterOpsTest, RegisteringTwiceIsRefused) {
  OpRegistry registry;
  ASSERT_TRUE(RegisterAllOps(registry).ok());
  const size_t count = registry.All().size();
  const absl::Status again = RegisterAllOps(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_EQ(registry.All().size(), count);
  // Every family's first op is already there.
  for (const Family& family : Families()) {
    EXPECT_EQ(family.registers(registry).code(),
              absl::StatusCode::kAlreadyExists)
        << family.name;
  }
  EXPECT_EQ(registry.All().size(), count);
}

TEST(RegisterOpsTest, EveryOpHasASchemaAndAShapeRule) {
  OpRegistry registry;
  ASSERT_TRUE(RegisterAllOps(registry).ok());
  for (const OpDef* def : registry.All()) {
    SCOPED_TRACE(def->target);
    EXPECT_TRUE(def->meta != nullptr);
    EXPECT_FALSE(def->schema.name.empty());
    // ATen ops are found under "aten.<name>.<overload>".
    if (def->target.rfind("aten.", 0) == 0) {
      EXPECT_EQ(def->target,
                "aten." + def->schema.name + "." + def->schema.overload);
    }
  }
}

TEST(RegisterOpsTest, DataDependentOpsAreMarkedAndTheirRulesRefuseSizes) {
  OpRegistry registry;
  ASSERT_TRUE(RegisterDataDependentOps(registry).ok());
  for (const OpDef* def : registry.All()) {
    EXPECT_TRUE(def->data_dependent_output) << def->target;
  }
  // sym_stride reads what shape inference does not model: a graph break.
  OpRegistry sym;
  ASSERT_TRUE(RegisterSymOps(sym).ok());
  EXPECT_TRUE(sym.Find("aten.sym_stride.int")->data_dependent_output);
  EXPECT_FALSE(sym.Find("aten.sym_size.int")->data_dependent_output);
  OpRegistry unary;
  ASSERT_TRUE(RegisterUnaryOps(unary).ok());
  EXPECT_FALSE(unary.Find("aten.relu.default")->data_dependent_output);

  // nonzero's size is unknown before it runs: a graph of it stops there.
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("nz")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const TensorMeta x(DType::kFloat32, Shape{3});
  auto metas = InferShapes(**graph, {&x, 1});
  ASSERT_FALSE(metas.ok());
  EXPECT_EQ(metas.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(metas.status().message(), HasSubstr("input values"));
}

TEST(RegisterOpsTest, PoolingKernelListsTakeOneValue) {
  OpRegistry registry;
  ASSERT_TRUE(RegisterPoolingOps(registry).ok());
  for (const char* target :
       {"aten.max_pool2d_with_indices.default", "aten.avg_pool2d.default",
        "aten.max_pool3d_with_indices.default", "aten.avg_pool3d.default"}) {
    const OpDef* def = registry.Find(target);
    ASSERT_NE(def, nullptr) << target;
    ASSERT_FALSE(def->schema.args.empty());
    EXPECT_EQ(def->schema.args[1].name, "kernel_size");
    EXPECT_TRUE(def->schema.args[1].expands_one_value) << target;
  }
  // Adaptive pooling's output_size refuses a one-value list, as torch does.
  const OpDef* adaptive = registry.Find("aten._adaptive_avg_pool2d.default");
  ASSERT_NE(adaptive, nullptr);
  EXPECT_FALSE(adaptive->schema.args[1].expands_one_value);
}

TEST(RegisterOpsTest, RegisteredRulesComputeMetadata) {
  OpRegistry registry;
  ASSERT_TRUE(RegisterAllOps(registry).ok());
  // A graph built against this registry infers shapes through its rules.
  GraphBuilder b("g", registry);
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w")}).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("m")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::vector<TensorMeta> inputs = {
      TensorMeta(DType::kFloat32, Shape{2, 5}),
      TensorMeta(DType::kFloat32, Shape{5, 7})};
  auto metas = InferShapes(**graph, inputs);
  ASSERT_TRUE(metas.ok()) << metas.status();
  EXPECT_EQ((*metas)[(*graph)->FindNode("r")][0],
            TensorMeta(DType::kFloat32, Shape{2, 7}));
  // And rejects what the rule rejects.
  const std::vector<TensorMeta> bad = {
      TensorMeta(DType::kFloat32, Shape{2, 5}),
      TensorMeta(DType::kFloat32, Shape{4, 7})};
  EXPECT_FALSE(InferShapes(**graph, bad).ok());
  // An empty registry knows no op at all.
  OpRegistry empty;
  GraphBuilder none("g", empty);
  ASSERT_TRUE(none.AddPlaceholder("x").ok());
  EXPECT_EQ(
      none.AddNode("r", "aten.relu.default", {Arg::Ref("x")}).status().code(),
      absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace guardjit
