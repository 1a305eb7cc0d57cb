// Node attributes as the importer reads them (core/onnx/onnx_attributes.h):
// typed reads with fallbacks, types inferred for producers that leave them
// unset, and the refusals (wrong type, duplicates, function references, an
// attribute nothing read), directly and through a model naming the node.

#include "core/onnx/onnx_attributes.h"

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

TEST(OnnxAttributesTest, TypedReadsWithFallbacks) {
  NodeProto n;
  SetInt(&n, "axis", -2);
  SetFloat(&n, "alpha", 0.25f);
  SetString(&n, "mode", "linear");
  SetInts(&n, "pads", {1, 2});
  auto* scales = AddAttribute(&n, "scales", AttributeProto::FLOATS);
  scales->add_floats(2.0f);
  auto attrs = OnnxAttributes::Create(n);
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  EXPECT_EQ(*attrs->Int("axis", 0), -2);
  EXPECT_EQ(*attrs->Int("missing", 7), 7);
  EXPECT_EQ(*attrs->OptionalInt("missing"), std::nullopt);
  EXPECT_EQ(*attrs->Float("alpha", 1.0f), 0.25f);
  EXPECT_EQ(*attrs->String("mode", "nearest"), "linear");
  EXPECT_EQ(**attrs->Ints("pads"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*attrs->Ints("strides"), std::nullopt);
  EXPECT_TRUE(attrs->Has("scales"));
  EXPECT_FALSE(attrs->Has("strides"));
  // Not read yet: refused by name.
  absl::Status unread = attrs->CheckAllRead();
  EXPECT_EQ(unread.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(unread.message(), "attribute 'scales' is not supported");
  EXPECT_EQ(**attrs->Floats("scales"), std::vector<float>{2.0f});
  EXPECT_TRUE(attrs->CheckAllRead().ok());
}

TEST(OnnxAttributesTest, UnsetTypesAreInferredFromTheValue) {
  // ONNX IR < 3 producers leave `type` unset.
  NodeProto n;
  auto* axis = n.add_attribute();
  axis->set_name("axis");
  axis->set_i(3);
  auto* perm = n.add_attribute();
  perm->set_name("perm");
  perm->add_ints(1);
  perm->add_ints(0);
  auto attrs = OnnxAttributes::Create(n);
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  EXPECT_EQ(*attrs->Int("axis", 0), 3);
  EXPECT_EQ(**attrs->Ints("perm"), (std::vector<int64_t>{1, 0}));
  // A wrong type is an error naming both types, and the read still counts.
  ExpectError(attrs->Float("axis", 0), absl::StatusCode::kInvalidArgument,
              "attribute 'axis' is INT, expected FLOAT");
}

TEST(OnnxAttributesTest, DuplicatesAndFunctionReferencesAreRefused) {
  NodeProto twice;
  SetInt(&twice, "axis", 0);
  SetInt(&twice, "axis", 1);
  ExpectError(OnnxAttributes::Create(twice), absl::StatusCode::kInvalidArgument,
              "attribute 'axis' given twice");
  NodeProto ref;
  auto* a = AddAttribute(&ref, "alpha", AttributeProto::FLOAT);
  a->set_ref_attr_name("outer_alpha");
  ExpectError(OnnxAttributes::Create(ref), absl::StatusCode::kUnimplemented,
              "attribute 'alpha' refers to a function attribute "
              "('outer_alpha')");
}

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
