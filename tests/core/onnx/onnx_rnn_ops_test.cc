// The RNN, GRU and LSTM mappings: what they unroll to, their output shapes
// and refusals (ONNX's node tests check the numbers: ONNX.md).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// `op` over X [seq 3, batch 2, input 4] with hidden size 5, outputs Y and
// Y_h (and Y_c for LSTM).
ModelProto Recurrent(const std::string& op, int gates, int layout = 0) {
  ModelProto m = Model(14);
  AddInput(m, "X",
           layout == 0 ? std::vector<int64_t>{3, 2, 4}
                       : std::vector<int64_t>{2, 3, 4});
  AddInput(m, "W", {1, gates * 5, 4});
  AddInput(m, "R", {1, gates * 5, 5});
  AddInput(m, "B", {1, 2 * gates * 5});
  std::vector<std::string> outputs = {"Y", "Y_h"};
  if (op == "LSTM") outputs.push_back("Y_c");
  NodeProto* n = AddNode(m, op, {"X", "W", "R", "B"}, outputs);
  SetInt(n, "hidden_size", 5);
  if (layout != 0) SetInt(n, "layout", layout);
  AddOutputs(m, outputs);
  return m;
}

TEST(OnnxRnnOpsTest, UnrollsOneRecurrentProductPerStep) {
  for (auto [op, gates] :
       {std::pair<const char*, int>{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
    auto g = Load(Recurrent(op, gates));
    ASSERT_TRUE(g.ok()) << op << ": " << g.status();
    // The input projection of all steps, then one per step (GRU's hidden
    // gate has its own product after the reset).
    EXPECT_EQ(CountTarget(**g, "aten.addmm.default"),
              1 + 3 * (std::string(op) == "GRU" ? 2 : 1))
        << op;
    std::vector<Shape> want = {{3, 1, 2, 5}, {1, 2, 5}};
    if (std::string(op) == "LSTM") want.push_back({1, 2, 5});
    EXPECT_EQ(OutputShapes(**g), want) << op;
  }
}

TEST(OnnxRnnOpsTest, BatchwiseLayout) {
  auto g = Load(Recurrent("GRU", 3, /*layout=*/1));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 3, 1, 5}, {2, 1, 5}}));
}

TEST(OnnxRnnOpsTest, RefusesWhatItDoesNotUnroll) {
  ModelProto m = Recurrent("LSTM", 4);
  SetString(m.mutable_graph()->mutable_node(0), "direction", "bidirectional");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("direction 'bidirectional'"));

  m = Recurrent("RNN", 1);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("activations");
  a->set_type(AttributeProto::STRINGS);
  a->add_strings("Relu");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("activations [Relu]"));

  // Attributes the mapping does not read (clip) are refused by name.
  m = Recurrent("GRU", 3);
  auto* clip = m.mutable_graph()->mutable_node(0)->add_attribute();
  clip->set_name("clip");
  clip->set_type(AttributeProto::FLOAT);
  clip->set_f(1);
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'clip'"));

  // sequence_lens shorter than the sequence would need masking.
  m = Recurrent("RNN", 1);
  AddInt64Initializer(m, "lens", {2}, {3, 2});
  m.mutable_graph()->mutable_node(0)->add_input("lens");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("sequence_lens [3, 2]"));
}

}  // namespace
}  // namespace guardjit::testing
