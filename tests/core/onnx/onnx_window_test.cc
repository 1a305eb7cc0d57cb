// ONNX's window functions (core/onnx/onnx_window.h): the size as a value
// input or a constant.

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

TEST(OnnxWindowTest, SizeInputIsValueSpecializedOrConstant) {
  // A window's size as a graph input is value-specialized.
  ModelProto m = Model(17);
  AddInput(m, "size", {}, TensorProto::INT64);
  AddNode(m, "HannWindow", {"size"}, {"y"});
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{0});
  // Of a known size it is a constant.
  m = Model(17);
  AddInt64Initializer(m, "size", {}, {8});
  SetInt(AddNode(m, "BlackmanWindow", {"size"}, {"y"}), "periodic", 0);
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{8}}));
}

}  // namespace
}  // namespace guardjit::testing
