#ifndef GUARDJIT_TESTS_CORE_ONNX_ONNX_TEST_MODELS_H_
#define GUARDJIT_TESTS_CORE_ONNX_ONNX_TEST_MODELS_H_

// Small ONNX models built in code for the importer's tests
// (tests/core/onnx/*_test.cc), and what the tests read back from the graph
// each loads to: its ATen targets and its outputs' shapes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/graph_loader.h"
#include "core/shape_inference.h"
#include "core/tensor_meta.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace guardjit::testing {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

// An empty model of the default domain at `opset`.
inline ModelProto Model(int opset = 13) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// A graph input of `dims`, where -1 is the dim_param "batch".
inline void AddInput(ModelProto& m, const std::string& name,
                     const std::vector<int64_t>& dims,
                     int elem_type = TensorProto::FLOAT) {
  auto* t = m.mutable_graph()->add_input();
  t->set_name(name);
  auto* type = t->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  auto* shape = type->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("batch");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

// A node named after its first output (or its op without outputs).
inline NodeProto* AddNode(ModelProto& m, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(outputs.empty() ? op : outputs[0]);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline void AddOutputs(ModelProto& m, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    m.mutable_graph()->add_output()->set_name(name);
  }
}
inline void AddOutput(ModelProto& m, const std::string& name) {
  AddOutputs(m, {name});
}

inline AttributeProto* AddAttribute(NodeProto* n, const std::string& name,
                                    AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void SetInt(NodeProto* n, const std::string& name, int64_t v) {
  AddAttribute(n, name, AttributeProto::INT)->set_i(v);
}
inline void SetFloat(NodeProto* n, const std::string& name, float v) {
  AddAttribute(n, name, AttributeProto::FLOAT)->set_f(v);
}
inline void SetString(NodeProto* n, const std::string& name,
                      const std::string& v) {
  AddAttribute(n, name, AttributeProto::STRING)->set_s(v);
}
inline void SetInts(NodeProto* n, const std::string& name,
                    const std::vector<int64_t>& v) {
  auto* a = AddAttribute(n, name, AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void AddInitializer(ModelProto& m, const std::string& name,
                           const std::vector<int64_t>& dims,
                           const std::vector<float>& values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}
inline void AddInt64Initializer(ModelProto& m, const std::string& name,
                                const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}
// A 1-d int64 initializer (axes, pads, shapes).
inline void AddInt64Initializer(ModelProto& m, const std::string& name,
                                const std::vector<int64_t>& values) {
  AddInt64Initializer(m, name, {static_cast<int64_t>(values.size())}, values);
}

inline absl::StatusOr<std::unique_ptr<Graph>> Load(
    const ModelProto& m, GraphLoadOptions options = {}) {
  return LoadGraphFromBinary(m.SerializeAsString(), options);
}

// The graph's ATen targets in node order.
inline std::vector<std::string> Targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) {
    if (n.kind == NodeKind::kCallFunction) out.push_back(n.target);
  }
  return out;
}
inline bool HasTarget(const Graph& g, const std::string& target) {
  for (const Node& n : g.nodes()) {
    if (n.target == target) return true;
  }
  return false;
}

inline int CountTarget(const Graph& g, const std::string& target) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.target == target;
  return n;
}

// Output metadata of a loaded graph for `inputs`.
inline std::vector<TensorMeta> OutputMetas(
    const Graph& g, const std::vector<TensorMeta>& inputs) {
  auto metas = InferShapes(g, inputs);
  EXPECT_TRUE(metas.ok()) << metas.status();
  std::vector<TensorMeta> out;
  if (!metas.ok()) return out;
  for (const Arg& a : g.output_node().args) {
    out.push_back((*metas)[a.as_value().node][a.as_value().index]);
  }
  return out;
}
// The outputs' shapes for the graph's declared (static) inputs.
inline std::vector<Shape> OutputShapes(const Graph& g) {
  std::vector<TensorMeta> inputs;
  for (int i : g.inputs()) inputs.push_back(*g.node(i).meta);
  std::vector<Shape> out;
  for (const TensorMeta& meta : OutputMetas(g, inputs)) {
    out.push_back(meta.shape());
  }
  return out;
}

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_CORE_ONNX_ONNX_TEST_MODELS_H_
