#include "core/op_schema.h"

#include "core/op_registry.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(OpSchemaTest, ParsesAddTensor) {
  auto s = ParseOpSchema(
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->QualifiedName(), "aten.add.Tensor");
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].type, ArgType::kTensor);
  EXPECT_FALSE(s->args[1].kwarg_only);
  EXPECT_TRUE(s->args[2].kwarg_only);
  EXPECT_EQ(s->args[2].type, ArgType::kScalar);
  EXPECT_EQ(*s->args[2].default_value, Arg::Int(1));
  EXPECT_EQ(s->num_returns, 1);
  EXPECT_EQ(s->ToString(),
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha) -> Tensor");
}

TEST(OpSchemaTest, ParsesListsOptionalsAliasesAndTuples) {
  auto s = ParseOpSchema(
      "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? "
      "weight, "
      "Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->overload, "default");
  EXPECT_EQ(s->args[1].type, ArgType::kIntList);
  EXPECT_TRUE(s->args[2].optional);
  EXPECT_EQ(s->num_returns, 3);

  auto conv = ParseOpSchema(
      "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
      "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] "
      "output_padding, "
      "SymInt groups) -> Tensor");
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->args.size(), 9u);

  auto view = ParseOpSchema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->args[0].type, ArgType::kTensor);

  auto pad = ParseOpSchema(
      "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
      "padding=0) -> Tensor");
  ASSERT_TRUE(pad.ok()) << pad.status();
  EXPECT_EQ(pad->args[1].fixed_list_size, 2);
  EXPECT_EQ(*pad->args[3].default_value,
            Arg::OfList({Arg::Int(0), Arg::Int(0)}));

  auto split = ParseOpSchema(
      "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) "
      "-> Tensor(a)[]");
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_TRUE(split->returns_list);

  auto div = ParseOpSchema(
      "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> "
      "Tensor");
  ASSERT_TRUE(div.ok());
  EXPECT_EQ(div->args[2].type, ArgType::kString);
  EXPECT_TRUE(div->args[2].optional);
  EXPECT_FALSE(div->args[2].default_value.has_value());

  auto eps = ParseOpSchema(
      "f(Tensor x, float eps=1e-05, bool keepdim=False, ScalarType? "
      "dtype=None) -> Tensor");
  ASSERT_TRUE(eps.ok());
  EXPECT_EQ(*eps->args[1].default_value, Arg::Float(1e-5));
  EXPECT_EQ(*eps->args[2].default_value, Arg::Bool(false));
  EXPECT_TRUE(eps->args[3].default_value->is_none());
}

TEST(OpSchemaTest, RejectsMalformedSchemas) {
  EXPECT_FALSE(ParseOpSchema("add(Tensor self").ok());
  EXPECT_FALSE(ParseOpSchema("add(Tensor) -> Tensor").ok());
  EXPECT_FALSE(ParseOpSchema("add(Banana self) -> Tensor").ok());
  EXPECT_FALSE(ParseOpSchema("no arrow").ok());
}

// Only ops that say so take a one-value list for an int[N] argument.
TEST(OpSchemaTest, OneValueListsExpandOnlyWhereAnOpSaysSo) {
  const OpRegistry& global = OpRegistry::Global();
  for (const char* target :
       {"aten.avg_pool2d.default", "aten.max_pool3d_with_indices.default"}) {
    const OpDef* def = global.Find(target);
    ASSERT_NE(def, nullptr) << target;
    EXPECT_TRUE(def->schema.args[1].expands_one_value) << target;  // kernel
  }
  const OpDef* adaptive = global.Find("aten._adaptive_avg_pool2d.default");
  ASSERT_NE(adaptive, nullptr);
  EXPECT_FALSE(adaptive->schema.args[1].expands_one_value);

  OpRegistry registry;
  ASSERT_TRUE(
      registry
          .Register("pool(Tensor self, int[2] k, int n) -> Tensor",
                    [](const MetaArgs&) { return std::vector<TensorMeta>{}; })
          .ok());
  ASSERT_TRUE(registry.ExpandOneValueLists("aten.pool.default").ok());
  const OpSchema& schema = registry.Find("aten.pool.default")->schema;
  EXPECT_TRUE(schema.args[1].expands_one_value);
  EXPECT_FALSE(schema.args[2].expands_one_value);
  EXPECT_EQ(registry.ExpandOneValueLists("aten.missing.default").code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(
      registry
          .Register("plain(Tensor self) -> Tensor",
                    [](const MetaArgs&) { return std::vector<TensorMeta>{}; })
          .ok());
  EXPECT_EQ(registry.ExpandOneValueLists("aten.plain.default").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace guardjit
