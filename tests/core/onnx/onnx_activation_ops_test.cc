// ONNX's activations (core/onnx/onnx_activation_ops.cc): the ATen op each
// maps to and their attributes.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

TEST(OnnxActivationOpsTest, Opset20GeluMapsToAtenGelu) {
  ModelProto m = Model(20);
  AddInput(m, "x", {4});
  NodeProto* n = AddNode(m, "Gelu", {"x"}, {"y"});
  auto* a = n->add_attribute();
  a->set_name("approximate");
  a->set_type(AttributeProto::STRING);
  a->set_s("tanh");
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(Targets(**g), std::vector<std::string>{"aten.gelu.default"});
  for (const Node& node : (*g)->nodes()) {
    if (node.target != "aten.gelu.default") continue;
    ASSERT_EQ(node.args.size(), 2u);  // gelu(self, *, approximate)
    ASSERT_TRUE(node.args[1].is_string());
    EXPECT_EQ(node.args[1].as_string(), "tanh");
  }
  m.mutable_opset_import(0)->set_version(17);
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Gelu, domain 'ai.onnx', opset 17): Gelu is an "
              "operator of opset 20 and later");
}

}  // namespace
}  // namespace guardjit::testing
