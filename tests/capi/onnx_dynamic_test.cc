// A dynamic-batch ONNX model through the C API: torch.onnx's flatten of the
// batch (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) imports as size
// arithmetic, so one compiled entry with a symbolic batch runs every batch
// and matches the eager backend.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "onnx/onnx_pb.h"
#include "tests/capi/capi_test_util.h"

namespace {

using ::gjtest::FunctionPtr;
using ::gjtest::GraphPtr;
using ::gjtest::HostTensor;
using ::gjtest::ManagedPtr;
using ::gjtest::Ok;

void AddInt64(onnx::GraphProto* g, const std::string& name,
              std::vector<int64_t> dims, std::vector<int64_t> values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

void AddNode(onnx::GraphProto* g, const std::string& op,
             std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const std::string& i : inputs) n->add_input(i);
  n->add_output(output);
}

float Weight(int i) { return 0.125f * static_cast<float>(i % 7) - 0.375f; }

// y = Relu(Gemm(Reshape(x, [Shape(x)[0], -1]), w, bias)), x [batch, 3, 4].
std::string FlattenGemmModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("flatten_gemm");
  auto* x = g->add_input();
  x->set_name("x");
  auto* type = x->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_param("batch");
  type->mutable_shape()->add_dim()->set_dim_value(3);
  type->mutable_shape()->add_dim()->set_dim_value(4);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(12);
  w->add_dims(2);
  for (int i = 0; i < 24; ++i) w->add_float_data(Weight(i));
  onnx::TensorProto* bias = g->add_initializer();
  bias->set_name("bias");
  bias->set_data_type(onnx::TensorProto::FLOAT);
  bias->add_dims(2);
  bias->add_float_data(0.5f);
  bias->add_float_data(-0.25f);
  AddInt64(g, "zero", {}, {0});
  AddInt64(g, "axes", {1}, {0});
  AddInt64(g, "rest", {1}, {-1});
  AddNode(g, "Shape", {"x"}, "s");
  AddNode(g, "Gather", {"s", "zero"}, "b");
  AddNode(g, "Unsqueeze", {"b", "axes"}, "b1");
  AddNode(g, "Concat", {"b1", "rest"}, "shape");
  auto* axis = g->mutable_node(3)->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  AddNode(g, "Reshape", {"x", "shape"}, "r");
  AddNode(g, "Gemm", {"r", "w", "bias"}, "h");
  AddNode(g, "Relu", {"h"}, "y");
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

struct Output {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

Output Call(gj_function* f, int64_t batch) {
  std::vector<float> data(batch * 12);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.5f;
  }
  HostTensor<float> x({batch, 3, 4}, data);
  const DLTensor* inputs[] = {x.dl()};
  DLManagedTensor* out[1] = {};
  Output run;
  if (!Ok(gj_function_call_alloc(f, inputs, 1, nullptr, out, 1))) {
    ADD_FAILURE() << "batch " << batch;
    return run;
  }
  ManagedPtr out0(out[0]);
  run.shape = gjtest::Shape(out[0]->dl_tensor);
  run.values = gjtest::Floats(out[0]->dl_tensor);
  return run;
}

FunctionPtr Make(gj_context* context, const gj_graph* graph) {
  gj_dynamic_dim batch = {0, 0, 2, INT64_MAX};
  gj_function_options options;
  gj_function_options_init(&options);
  options.mark_dynamic = &batch;
  options.num_mark_dynamic = 1;
  gj_function* f = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(context, graph, &options, &f)));
  return FunctionPtr(f);
}

TEST(CapiOnnxDynamicTest, OneEntryRunsEveryBatchAndMatchesEager) {
  const std::string bytes = FlattenGemmModel();
  gjtest::ContextPtr jit = gjtest::MakeContext(GJ_BACKEND_CPU_JIT);
  gjtest::ContextPtr eager = gjtest::MakeContext(GJ_BACKEND_EAGER);
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_proto(jit.get(), bytes.data(), bytes.size(),
                                     nullptr, &raw)));
  GraphPtr graph(raw);
  FunctionPtr compiled = Make(jit.get(), graph.get());
  FunctionPtr reference = Make(eager.get(), graph.get());
  for (int64_t batch : {2, 3, 5}) {
    const Output got = Call(compiled.get(), batch);
    const Output want = Call(reference.get(), batch);
    EXPECT_EQ(got.shape, (std::vector<int64_t>{batch, 2}));
    ASSERT_EQ(got.values.size(), want.values.size());
    for (size_t i = 0; i < got.values.size(); ++i) {
      EXPECT_NEAR(got.values[i], want.values[i], 1e-5f) << "batch " << batch;
    }
    // Row 0 by hand: relu(x[0] . w[:, j] + bias[j]).
    for (int j = 0; j < 2; ++j) {
      float acc = j == 0 ? 0.5f : -0.25f;
      for (int k = 0; k < 12; ++k) {
        acc += static_cast<float>(k % 11 - 5) * 0.5f * Weight(k * 2 + j);
      }
      EXPECT_NEAR(got.values[j], acc > 0 ? acc : 0, 1e-5f);
    }
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_TRUE(Ok(gj_function_get_stats(compiled.get(), &stats)));
  EXPECT_EQ(stats.calls, 3);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.cache_entries, 1);
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.fallback_calls, 0);
}

}  // namespace
