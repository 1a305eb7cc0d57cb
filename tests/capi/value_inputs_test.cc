// Value-specialized inputs through the C API: an ONNX model whose Reshape
// takes its shape as a graph input (as ONNX's node tests and torch's
// exporter write it) loads, and each call's shape values get their own
// cache entry, guarded on the values.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "onnx/onnx_pb.h"
#include "tests/capi/capi_test_util.h"

namespace {

using ::gjtest::FunctionPtr;
using ::gjtest::GraphPtr;
using ::gjtest::HostTensor;
using ::gjtest::IsError;
using ::gjtest::ManagedPtr;
using ::gjtest::Ok;
using ::testing::HasSubstr;

void AddInput(onnx::ModelProto& m, const std::string& name,
              std::vector<int64_t> dims, int elem_type) {
  auto* t = m.mutable_graph()->add_input();
  t->set_name(name);
  auto* type = t->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  for (int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
}

// y = Reshape(x, shape): x float32 [2, 3], shape int64 [2].
std::string ReshapeModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("reshape");
  AddInput(m, "x", {2, 3}, onnx::TensorProto::FLOAT);
  AddInput(m, "shape", {2}, onnx::TensorProto::INT64);
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Reshape");
  n->add_input("x");
  n->add_input("shape");
  n->add_output("y");
  m.mutable_graph()->add_output()->set_name("y");
  return m.SerializeAsString();
}

std::string Text(gj_error* (*get)(const gj_function*, char**),
                 const gj_function* f) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(get(f, &text)));
  std::string out = text != nullptr ? text : "";
  gj_string_destroy(text);
  return out;
}

TEST(CapiValueInputsTest, ShapeInputSpecializesAndGuardsItsValues) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  const std::string bytes = ReshapeModel();
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_proto(context.get(), bytes.data(), bytes.size(),
                                     nullptr, &raw)));
  GraphPtr graph(raw);
  EXPECT_EQ(gj_graph_num_inputs(graph.get()), 2u);
  FunctionPtr function = gjtest::MakeFunction(context.get(), graph.get());
  HostTensor<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  auto call = [&](std::vector<int64_t> values, std::vector<int64_t>* shape) {
    HostTensor<int64_t> s({2}, values);
    const DLTensor* inputs[] = {x.dl(), s.dl()};
    DLManagedTensor* out[1] = {};
    gj_error* error =
        gj_function_call_alloc(function.get(), inputs, 2, nullptr, out, 1);
    if (error != nullptr) return error;
    ManagedPtr out0(out[0]);
    *shape = gjtest::Shape(out[0]->dl_tensor);
    EXPECT_EQ(gjtest::Floats(out[0]->dl_tensor),
              (std::vector<float>{1, 2, 3, 4, 5, 6}));
    return error;
  };
  std::vector<int64_t> shape;
  ASSERT_TRUE(Ok(call({3, 2}, &shape)));
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 2}));
  ASSERT_TRUE(Ok(call({3, 2}, &shape)));
  ASSERT_TRUE(Ok(call({1, -1}, &shape)));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 6}));
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_TRUE(Ok(gj_function_get_stats(function.get(), &stats)));
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.hits, 1);
  EXPECT_THAT(Text(gj_function_dump_guards, function.get()),
              HasSubstr("VALUE_MATCH: shape.tolist() == [3, 2]"));
  EXPECT_THAT(Text(gj_function_explain, function.get()),
              HasSubstr("tensor 'shape' value mismatch (value-specialized). "
                        "expected [3, 2], actual [1, -1]"));
  // A shape the model cannot take is the call's error, naming the values.
  EXPECT_TRUE(IsError(call({4, 4}, &shape), GJ_INVALID_ARGUMENT,
                      {"Reshape", "shape = [4, 4]"}));
  // A float shape cannot be specialized on.
  HostTensor<float> fs({2}, {3, 2});
  const DLTensor* inputs[] = {x.dl(), fs.dl()};
  DLManagedTensor* out[1] = {};
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function.get(), inputs, 2, nullptr, out, 1),
      GJ_INVALID_ARGUMENT, {"'shape'"}));
}

}  // namespace
