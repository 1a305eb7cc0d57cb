#include "core/onnx/onnx_detect.h"

#include <string>

#include "core/graph.pb.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace guardjit {
namespace {

TEST(OnnxDetectTest, ModelProtoIsDetected) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("g");
  EXPECT_TRUE(IsOnnxModel(m.SerializeAsString()));
}

TEST(OnnxDetectTest, IrVersionAfterOtherFieldsIsDetected) {
  // Field order is free in protobuf: the graph first, ir_version last.
  onnx::ModelProto graph_only;
  graph_only.mutable_graph()->set_name("g");
  onnx::ModelProto version_only;
  version_only.set_ir_version(7);
  EXPECT_TRUE(IsOnnxModel(graph_only.SerializeAsString() +
                          version_only.SerializeAsString()));
}

TEST(OnnxDetectTest, GuardjitGraphsAreNotOnnx) {
  proto::Graph g;
  g.set_name("mlp");
  g.add_placeholders()->set_name("x");
  auto* node = g.add_nodes();
  node->set_name("r");
  node->set_target("aten.relu.default");
  node->add_args()->set_ref("x");
  g.add_outputs()->set_ref("r");
  auto* c = g.add_constants();
  c->set_name("w");
  c->set_dtype(proto::FLOAT32);
  c->add_sizes(1);
  c->set_data(std::string(4, '\0'));
  EXPECT_FALSE(IsOnnxModel(g.SerializeAsString()));
  proto::Graph unnamed;  // no name field at all
  unnamed.add_placeholders()->set_name("x");
  EXPECT_FALSE(IsOnnxModel(unnamed.SerializeAsString()));
}

TEST(OnnxDetectTest, TextAndGarbageAreNotOnnx) {
  EXPECT_FALSE(IsOnnxModel(""));
  EXPECT_FALSE(IsOnnxModel("name: \"g\"\nplaceholders { name: \"x\" }\n"));
  EXPECT_FALSE(IsOnnxModel(std::string("\xff\xff\xff\xff\xff", 5)));
  // A varint field 1 behind bytes that are not wire format is not reached.
  EXPECT_FALSE(IsOnnxModel(std::string("\x0f\x08\x01", 3)));
}

}  // namespace
}  // namespace guardjit
