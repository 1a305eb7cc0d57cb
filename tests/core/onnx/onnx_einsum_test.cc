// ONNX's Einsum (core/onnx/onnx_einsum.cc): the equation forms that map to
// ATen products, and malformed equations refused.

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

TEST(OnnxEinsumTest, EinsumForms) {
  struct Case {
    std::string equation;
    std::vector<std::vector<int64_t>> inputs;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5}},
           {"ij,jk", {{3, 4}, {4, 5}}, {3, 5}},
           {"ij->ji", {{3, 4}}, {4, 3}},
           {"...ii->...i", {{2, 3, 3}}, {2, 3}},
           {"i,i", {{5}, {5}}, {}},
       }) {
    ModelProto m = Model(12);
    std::vector<std::string> names;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      AddInput(m, names.back(), c.inputs[i]);
    }
    SetString(AddNode(m, "Einsum", names, {"y"}), "equation", c.equation);
    AddOutputs(m, {"y"});
    auto g = Load(m);
    ASSERT_TRUE(g.ok()) << c.equation << ": " << g.status();
    EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{c.out})) << c.equation;
  }
  ModelProto m = Model(12);
  AddInput(m, "x", {3, 4});
  SetString(AddNode(m, "Einsum", {"x"}, {"y"}), "equation", "i1->i");
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("malformed term"));
}

}  // namespace
}  // namespace guardjit::testing
