// The op registry (core/op_registry.h) on a registry of its own: ops under
// "aten.<name>.<overload>" or a target of another namespace, duplicates and
// bad schemas refused, int[N] arguments that take one value, ops with
// data-dependent output sizes, and the sorted listing.

#include "core/op_registry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

MetaFn SameAsSelf() {
  return [](const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
    return std::vector<TensorMeta>{args.tensor(0)};
  };
}

TEST(OpRegistryTest, RegistersUnderTheAtenTargetAndListsSorted) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register("twice.scaled(Tensor self, int[2] k) -> Tensor",
                            SameAsSelf())
                  .ok());
  ASSERT_TRUE(
      registry.Register("twice(Tensor self) -> Tensor", SameAsSelf()).ok());
  const OpDef* plain = registry.Find("aten.twice.default");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->target, "aten.twice.default");
  EXPECT_EQ(plain->schema.name, "twice");
  EXPECT_FALSE(plain->data_dependent_output);
  EXPECT_TRUE(plain->meta != nullptr);
  EXPECT_NE(registry.Find("aten.twice.scaled"), nullptr);
  EXPECT_EQ(registry.Find("aten.twice"), nullptr);
  EXPECT_EQ(registry.Find("twice"), nullptr);
  std::vector<std::string> targets;
  for (const OpDef* def : registry.All()) targets.push_back(def->target);
  EXPECT_THAT(targets, ::testing::ElementsAre("aten.twice.default",
                                              "aten.twice.scaled"));
}

TEST(OpRegistryTest, DuplicatesAndBadSchemasAreRefused) {
  OpRegistry registry;
  ASSERT_TRUE(
      registry.Register("twice(Tensor self) -> Tensor", SameAsSelf()).ok());
  const absl::Status again =
      registry.Register("twice(Tensor self) -> Tensor", SameAsSelf());
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), HasSubstr("'aten.twice.default'"));
  EXPECT_FALSE(
      registry.Register("broken(Tensor self -> Tensor", SameAsSelf()).ok());
  EXPECT_EQ(registry.All().size(), 1u);
}

TEST(OpRegistryTest, OtherNamespacesKeepTheirTarget) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .RegisterWithTarget("getitem",
                                      "getitem(Tensor self, int i) -> Tensor",
                                      SameAsSelf())
                  .ok());
  ASSERT_NE(registry.Find("getitem"), nullptr);
  EXPECT_EQ(registry.Find("aten.getitem.default"), nullptr);
}

TEST(OpRegistryTest, ExpandOneValueListsMarksOnlyFixedIntLists) {
  OpRegistry registry;
  ASSERT_TRUE(registry
                  .Register("pool(Tensor self, int[2] kernel, int[] dims, "
                            "int n) -> Tensor",
                            SameAsSelf())
                  .ok());
  ASSERT_TRUE(registry.ExpandOneValueLists("aten.pool.default").ok());
  const OpSchema& schema = registry.Find("aten.pool.default")->schema;
  ASSERT_EQ(schema.args.size(), 4u);
  EXPECT_TRUE(schema.args[1].expands_one_value);   // int[2]
  EXPECT_FALSE(schema.args[2].expands_one_value);  // int[]
  EXPECT_FALSE(schema.args[3].expands_one_value);  // int
  EXPECT_EQ(registry.ExpandOneValueLists("aten.nothing.default").code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(
      registry
          .Register("plain(Tensor self, int[] dims) -> Tensor", SameAsSelf())
          .ok());
  EXPECT_EQ(registry.ExpandOneValueLists("aten.plain.default").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(OpRegistryTest, DataDependentOpsAreMarked) {
  OpRegistry registry;
  ASSERT_TRUE(
      registry.RegisterDataDependent("picks(Tensor self) -> Tensor").ok());
  const OpDef* def = registry.Find("aten.picks.default");
  ASSERT_NE(def, nullptr);
  EXPECT_TRUE(def->data_dependent_output);
  EXPECT_EQ(
      registry.RegisterDataDependent("picks(Tensor self) -> Tensor").code(),
      absl::StatusCode::kAlreadyExists);
}

TEST(OpRegistryTest, GlobalHoldsTheBuiltInOps) {
  const OpRegistry& global = OpRegistry::Global();
  EXPECT_EQ(&global, &OpRegistry::Global());
  ASSERT_NE(global.Find("aten.add.Tensor"), nullptr);
  const OpDef* pool = global.Find("aten.max_pool3d_with_indices.default");
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->schema.args[1].expands_one_value);
  const OpDef* nonzero = global.Find("aten.nonzero.default");
  ASSERT_NE(nonzero, nullptr);
  EXPECT_TRUE(nonzero->data_dependent_output);
}

}  // namespace
}  // namespace guardjit
