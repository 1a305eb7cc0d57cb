// Node attributes as the importer reads them (core/onnx/onnx_attributes.h):
// unknown names and wrong types are refused naming the node.

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

TEST(OnnxAttributesTest, UnknownAttributeIsRefused) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  SetInt(AddNode(m, "Relu", {"x"}, {"y"}), "fancy", 1);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Relu, domain 'ai.onnx', opset 13): attribute "
              "'fancy' is not supported");
}

TEST(OnnxAttributesTest, AttributeOfTheWrongTypeIsInvalid) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  SetInt(AddNode(m, "LeakyRelu", {"x"}, {"y"}), "alpha", 1);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "attribute 'alpha' is INT, expected FLOAT");
}

}  // namespace
}  // namespace guardjit::testing
