// The reference kernels' registration (runtime/kernels/register_kernels.h):
// each family on a registry of its own registers its kernels and nobody
// else's, the families together are RegisterAllKernels (and the global
// registry), a second registration is refused, every kernel has an op and
// every op a kernel, the kernels that write destinations are marked, and an
// interpreter over a partial registry runs only what it registered.

#include "runtime/kernels/register_kernels.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/value_inputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "runtime/kernel_registry.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::RandomTensor;
using testing::ToDoubles;

struct Family {
  const char* name;
  absl::Status (*registers)(KernelRegistry&);
  std::vector<std::string> samples;
};

const std::vector<Family>& Families() {
  static const std::vector<Family>* families = new std::vector<Family>{
      {"unary", RegisterUnaryKernels, {"aten.relu.default"}},
      {"binary", RegisterBinaryKernels, {"aten.add.Tensor"}},
      {"reduction", RegisterReductionKernels, {"aten.sum.dim_IntList"}},
      {"normalization",
       RegisterNormalizationKernels,
       {"aten.native_layer_norm.default"}},
      {"linalg",
       RegisterLinalgKernels,
       {"aten.mm.default", "aten.bmm.default", "aten.addmm.default"}},
      {"view", RegisterViewKernels, {"aten.as_strided.default"}},
      {"shape", RegisterShapeKernels, {"aten.cat.default"}},
      {"indexing", RegisterIndexingKernels, {"aten.index_select.default"}},
      {"creation", RegisterCreationKernels, {"aten.arange.start"}},
      {"sym", RegisterSymKernels, {"aten.sym_size.int", "operator.mul"}},
      {"activation", RegisterActivationKernels, {"aten.leaky_relu.default"}},
      {"pooling",
       RegisterPoolingKernels,
       {"aten.max_pool2d_with_indices.default", "aten.avg_pool3d.default"}},
      {"assert", RegisterAssertKernels, {"aten._assert_scalar.default"}},
      {"data_dependent",
       RegisterDataDependentKernels,
       {"aten.nonzero.default"}},
      {"padding", RegisterPaddingKernels, {"aten.reflection_pad2d.default"}},
      {"resample", RegisterResampleKernels, {"aten.upsample_nearest2d.vec"}},
      {"scatter", RegisterScatterKernels, {"aten.scatter.src"}},
      {"sort", RegisterSortKernels, {"aten.sort.default"}},
      {"attention",
       RegisterAttentionKernels,
       {"aten.scaled_dot_product_attention.default"}},
  };
  return *families;
}

TEST(RegisterKernelsTest, EachFamilyRegistersItsOwnKernelsOnly) {
  std::set<std::string> seen;
  for (const Family& family : Families()) {
    SCOPED_TRACE(family.name);
    KernelRegistry registry;
    const absl::Status status = family.registers(registry);
    ASSERT_TRUE(status.ok()) << status;
    const std::vector<std::string> targets = registry.Targets();
    EXPECT_FALSE(targets.empty());
    for (const std::string& sample : family.samples) {
      EXPECT_NE(registry.Find(sample), nullptr) << sample;
    }
    for (const std::string& t : targets) {
      EXPECT_TRUE(seen.insert(t).second) << t << " in two families";
      EXPECT_NE(*registry.Find(t), nullptr) << t;  // a callable kernel
    }
  }
}

TEST(RegisterKernelsTest, AllKernelsIsTheUnionOfTheFamilies) {
  std::set<std::string> families;
  for (const Family& family : Families()) {
    KernelRegistry registry;
    ASSERT_TRUE(family.registers(registry).ok()) << family.name;
    for (const std::string& t : registry.Targets()) families.insert(t);
  }
  KernelRegistry all;
  const absl::Status status = RegisterAllKernels(all);
  ASSERT_TRUE(status.ok()) << status;
  const std::vector<std::string> targets = all.Targets();
  EXPECT_EQ(std::set<std::string>(targets.begin(), targets.end()), families);
  EXPECT_EQ(targets.size(), families.size());
  EXPECT_EQ(KernelRegistry::Global().Targets(), targets);
}

TEST(RegisterKernelsTest, RegisteringTwiceIsRefused) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterAllKernels(registry).ok());
  const size_t count = registry.Targets().size();
  const absl::Status again = RegisterAllKernels(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_THAT(again.message(), HasSubstr("registered twice"));
  for (const Family& family : Families()) {
    EXPECT_EQ(family.registers(registry).code(),
              absl::StatusCode::kAlreadyExists)
        << family.name;
  }
  EXPECT_EQ(registry.Targets().size(), count);
}

TEST(RegisterKernelsTest, KernelsAndOpsMirrorEachOther) {
  KernelRegistry kernels;
  ASSERT_TRUE(RegisterAllKernels(kernels).ok());
  const OpRegistry& ops = OpRegistry::Global();
  for (const std::string& t : kernels.Targets()) {
    EXPECT_NE(ops.Find(t), nullptr) << "kernel without an op: " << t;
  }
  for (const OpDef* def : ops.All()) {
    EXPECT_NE(kernels.Find(def->target), nullptr)
        << "op without a kernel: " << def->target;
  }
  // Control flow runs in the interpreter itself: its kernels (registered
  // with the sym family) only refuse.
  KernelRegistry sym;
  ASSERT_TRUE(RegisterSymKernels(sym).ok());
  for (const char* target : {kCondTarget, kValueSpecializedTarget}) {
    const KernelFn* fn = sym.Find(target);
    ASSERT_NE(fn, nullptr) << target;
  }
}

TEST(RegisterKernelsTest, DestinationWritersAreMarked) {
  KernelRegistry all;
  ASSERT_TRUE(RegisterAllKernels(all).ok());
  for (const char* target :
       {"aten.mm.default", "aten.bmm.default", "aten.addmm.default",
        "aten.relu.default", "aten.add.Tensor", "aten.leaky_relu.default",
        "aten.scaled_dot_product_attention.default"}) {
    EXPECT_TRUE(all.writes_destinations(target)) << target;
  }
  // Views and size-discovering kernels return what they make themselves.
  for (const char* target : {"aten.as_strided.default", "aten.nonzero.default",
                             "aten.sym_size.int"}) {
    EXPECT_FALSE(all.writes_destinations(target)) << target;
  }
  // Marked only where registered: a family alone marks its own.
  KernelRegistry linalg;
  ASSERT_TRUE(RegisterLinalgKernels(linalg).ok());
  EXPECT_TRUE(linalg.writes_destinations("aten.mm.default"));
  EXPECT_FALSE(linalg.writes_destinations("aten.relu.default"));
}

// mm then relu: an interpreter over a registry lacking relu's family
// refuses the graph naming the node; with both families it runs.
TEST(RegisterKernelsTest, AnInterpreterRunsWhatItsRegistryHas) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w")}).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("m")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());

  KernelRegistry partial;
  ASSERT_TRUE(RegisterLinalgKernels(partial).ok());
  auto refused = EagerInterpreter::Create(graph, partial);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(refused.status().message(), HasSubstr("'r'"));

  ASSERT_TRUE(RegisterUnaryKernels(partial).ok());
  auto interpreter = EagerInterpreter::Create(graph, partial);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  const Tensor w = RandomTensor(DType::kFloat32, {3, 4}, 2);
  auto out = (*interpreter)->Run({x, w});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const std::vector<double> xs = ToDoubles(x), ws = ToDoubles(w);
  const std::vector<double> got = ToDoubles((*out)[0]);
  ASSERT_EQ(got.size(), 8u);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += xs[i * 3 + k] * ws[k * 4 + j];
      EXPECT_NEAR(got[i * 4 + j], std::max(sum, 0.0), 1e-5);
    }
  }
}

}  // namespace
}  // namespace guardjit
