// Dynamic ONNX models through the C API: torch.onnx's flatten of the batch
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) imports as size
// arithmetic, so one compiled entry with a symbolic batch runs every batch
// and matches the eager backend; a transformer block with a symbolic batch
// and sequence (split qkv, batched head matmuls, a causal mask sliced by
// the sequence length) does the same over (batch, seq).

#include <algorithm>
#include <cstdint>
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

// An input of `dims` (numbers, or dim_params where negative: -1 "batch",
// -2 "seq").
void AddInput(onnx::GraphProto* g, const std::string& name,
              std::vector<int64_t> dims) {
  auto* x = g->add_input();
  x->set_name(name);
  auto* type = x->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) {
    auto* dim = type->mutable_shape()->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      dim->set_dim_param(d == -1 ? "batch" : "seq");
    }
  }
}

void AddFloats(onnx::GraphProto* g, const std::string& name,
               std::vector<int64_t> dims, int seed) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(Weight(i * 3 + seed));
}

void SetIntAttr(onnx::GraphProto* g, const std::string& name, int64_t v) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetIntsAttr(onnx::GraphProto* g, const std::string& name,
                 std::vector<int64_t> v) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// A GPT-2-style block as torch.onnx exports it with dynamic_axes {0:
// "batch", 1: "seq"}: y = x + proj(attn(split(ln(x) @ w_qkv))) where attn
// is softmax(q @ k^T * 0.5 masked by tril[:seq, :seq]) @ v over 2 heads of
// 4, the head shapes Concat(Shape(x)[0], Shape(x)[1], 2, 4). `batch` and
// `seq` below 0 are dim_params, else static (the reference).
std::string TransformerBlockModel(int64_t batch, int64_t seq) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("block");
  AddInput(g, "x", {batch < 0 ? -1 : batch, seq < 0 ? -2 : seq, 8});
  AddFloats(g, "ln_w", {8}, 1);
  AddFloats(g, "ln_b", {8}, 2);
  AddFloats(g, "w_qkv", {8, 24}, 3);
  AddFloats(g, "b_qkv", {24}, 4);
  AddFloats(g, "w_o", {8, 8}, 5);
  onnx::TensorProto* tril = g->add_initializer();
  tril->set_name("tril");
  tril->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 1, 16, 16}) tril->add_dims(d);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) tril->add_float_data(j <= i ? 1.0f : 0.0f);
  }
  AddInt64(g, "i0", {}, {0});
  AddInt64(g, "i1", {}, {1});
  AddInt64(g, "ax0", {1}, {0});
  AddInt64(g, "z1", {1}, {0});
  AddInt64(g, "ax2", {1}, {2});
  AddInt64(g, "ax3", {1}, {3});
  AddInt64(g, "heads", {2}, {2, 4});
  AddInt64(g, "width", {1}, {8});
  AddInt64(g, "split", {3}, {8, 8, 8});
  onnx::TensorProto* half = g->add_initializer();
  half->set_name("half");
  half->set_data_type(onnx::TensorProto::FLOAT);
  half->add_float_data(0.5f);
  onnx::TensorProto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::FLOAT);
  zero->add_float_data(0.0f);
  onnx::TensorProto* ninf = g->add_initializer();
  ninf->set_name("ninf");
  ninf->set_data_type(onnx::TensorProto::FLOAT);
  ninf->add_float_data(-1e30f);

  AddNode(g, "Shape", {"x"}, "s");
  AddNode(g, "Gather", {"s", "i0"}, "b");
  AddNode(g, "Gather", {"s", "i1"}, "t");
  AddNode(g, "Unsqueeze", {"b", "ax0"}, "b1");
  AddNode(g, "Unsqueeze", {"t", "ax0"}, "t1");
  AddNode(g, "Concat", {"b1", "t1", "heads"}, "head_shape");
  SetIntAttr(g, "axis", 0);
  AddNode(g, "Concat", {"b1", "t1", "width"}, "out_shape");
  SetIntAttr(g, "axis", 0);
  AddNode(g, "LayerNormalization", {"x", "ln_w", "ln_b"}, "ln");
  AddNode(g, "MatMul", {"ln", "w_qkv"}, "qkv0");
  AddNode(g, "Add", {"b_qkv", "qkv0"}, "qkv");
  onnx::NodeProto* split = g->add_node();
  split->set_op_type("Split");
  split->set_name("split");
  split->add_input("qkv");
  split->add_input("split");
  for (const char* o : {"q", "k", "v"}) split->add_output(o);
  SetIntAttr(g, "axis", 2);
  AddNode(g, "Reshape", {"q", "head_shape"}, "q4");
  AddNode(g, "Transpose", {"q4"}, "qh");
  SetIntsAttr(g, "perm", {0, 2, 1, 3});
  AddNode(g, "Reshape", {"k", "head_shape"}, "k4");
  AddNode(g, "Transpose", {"k4"}, "kt");
  SetIntsAttr(g, "perm", {0, 2, 3, 1});
  AddNode(g, "Reshape", {"v", "head_shape"}, "v4");
  AddNode(g, "Transpose", {"v4"}, "vh");
  SetIntsAttr(g, "perm", {0, 2, 1, 3});
  AddNode(g, "MatMul", {"qh", "kt"}, "qk");
  AddNode(g, "Mul", {"qk", "half"}, "scores");
  AddNode(g, "Slice", {"tril", "z1", "t1", "ax2"}, "mask_rows");
  AddNode(g, "Slice", {"mask_rows", "z1", "t1", "ax3"}, "mask");
  AddNode(g, "Equal", {"mask", "zero"}, "masked");
  AddNode(g, "Where", {"masked", "ninf", "scores"}, "scores_m");
  AddNode(g, "Softmax", {"scores_m"}, "p");
  SetIntAttr(g, "axis", -1);
  AddNode(g, "MatMul", {"p", "vh"}, "att");
  AddNode(g, "Transpose", {"att"}, "att_t");
  SetIntsAttr(g, "perm", {0, 2, 1, 3});
  AddNode(g, "Reshape", {"att_t", "out_shape"}, "att_r");
  AddNode(g, "MatMul", {"att_r", "w_o"}, "proj");
  AddNode(g, "Add", {"x", "proj"}, "y");
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

Output CallBlock(gj_function* f, int64_t batch, int64_t seq) {
  std::vector<float> data(batch * seq * 8);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f;
  }
  HostTensor<float> x({batch, seq, 8}, data);
  const DLTensor* inputs[] = {x.dl()};
  DLManagedTensor* out[1] = {};
  Output run;
  if (!Ok(gj_function_call_alloc(f, inputs, 1, nullptr, out, 1))) {
    ADD_FAILURE() << "batch " << batch << ", seq " << seq;
    return run;
  }
  ManagedPtr out0(out[0]);
  run.shape = gjtest::Shape(out[0]->dl_tensor);
  run.values = gjtest::Floats(out[0]->dl_tensor);
  return run;
}

GraphPtr LoadModel(gj_context* context, const std::string& bytes) {
  gj_graph* raw = nullptr;
  EXPECT_TRUE(Ok(
      gj_graph_from_proto(context, bytes.data(), bytes.size(), nullptr, &raw)));
  return GraphPtr(raw);
}

TEST(CapiOnnxDynamicTest, TransformerBlockCompilesOnceForEveryBatchAndSeq) {
  gjtest::ContextPtr jit = gjtest::MakeContext(GJ_BACKEND_CPU_JIT);
  gjtest::ContextPtr eager = gjtest::MakeContext(GJ_BACKEND_EAGER);
  GraphPtr graph = LoadModel(jit.get(), TransformerBlockModel(-1, -1));
  ASSERT_NE(graph, nullptr);
  gj_dynamic_dim dims[] = {{0, 0, 2, INT64_MAX}, {0, 1, 2, 16}};
  gj_function_options options;
  gj_function_options_init(&options);
  options.mark_dynamic = dims;
  options.num_mark_dynamic = 2;
  gj_function* raw = nullptr;
  ASSERT_TRUE(Ok(gj_function_create(jit.get(), graph.get(), &options, &raw)));
  FunctionPtr compiled(raw);
  FunctionPtr reference = Make(eager.get(), graph.get());
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {2, 3}, {3, 5}, {2, 16}, {4, 7}};
  for (auto [batch, seq] : shapes) {
    const Output got = CallBlock(compiled.get(), batch, seq);
    const Output want = CallBlock(reference.get(), batch, seq);
    // The same model with these sizes static: the importer's static
    // mappings, on the eager backend.
    GraphPtr fixed = LoadModel(eager.get(), TransformerBlockModel(batch, seq));
    ASSERT_NE(fixed, nullptr);
    const Output exact = CallBlock(
        gjtest::MakeFunction(eager.get(), fixed.get()).get(), batch, seq);
    EXPECT_EQ(got.shape, (std::vector<int64_t>{batch, seq, 8}));
    ASSERT_EQ(got.values.size(), want.values.size());
    ASSERT_EQ(got.values.size(), exact.values.size());
    for (size_t i = 0; i < got.values.size(); ++i) {
      EXPECT_NEAR(got.values[i], want.values[i], 1e-4f)
          << "batch " << batch << ", seq " << seq << ", element " << i;
      EXPECT_NEAR(got.values[i], exact.values[i], 1e-4f)
          << "batch " << batch << ", seq " << seq << ", element " << i;
    }
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_TRUE(Ok(gj_function_get_stats(compiled.get(), &stats)));
  EXPECT_EQ(stats.calls, 4);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.cache_entries, 1);
  EXPECT_EQ(stats.fallback_calls, 0);
  char* text = nullptr;
  ASSERT_TRUE(Ok(gj_function_explain(compiled.get(), &text)));
  EXPECT_THAT(text, ::testing::HasSubstr("(jit: "));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("eager plan")));
  gj_string_destroy(text);
}

// y = If(cond) then Relu(x) else Concat(x, x, axis 2), x [batch, 3, 4]:
// `cond` Shape(x)[0] > 4 (sizes), or ReduceMax(x) > 0 (values).
std::string IfModel(bool on_sizes) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("if_model");
  AddInput(g, "x", {-1, 3, 4});
  if (on_sizes) {
    AddInt64(g, "i0", {}, {0});
    AddInt64(g, "four", {}, {4});
    AddNode(g, "Shape", {"x"}, "s");
    AddNode(g, "Gather", {"s", "i0"}, "b");
    AddNode(g, "Greater", {"b", "four"}, "cond");
  } else {
    onnx::TensorProto* zero = g->add_initializer();
    zero->set_name("zero");
    zero->set_data_type(onnx::TensorProto::FLOAT);
    zero->add_float_data(0.0f);
    AddNode(g, "ReduceMax", {"x"}, "top");
    SetIntAttr(g, "keepdims", 0);
    AddNode(g, "Greater", {"top", "zero"}, "cond");
  }
  AddNode(g, "If", {"cond"}, "y");
  onnx::NodeProto* n = g->mutable_node(g->node_size() - 1);
  auto* then_attr = n->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  AddNode(then_attr->mutable_g(), "Relu", {"x"}, "then_y");
  then_attr->mutable_g()->add_output()->set_name("then_y");
  auto* else_attr = n->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  AddNode(else_attr->mutable_g(), "Concat", {"x", "x"}, "else_y");
  SetIntAttr(else_attr->mutable_g(), "axis", 2);
  else_attr->mutable_g()->add_output()->set_name("else_y");
  g->add_output()->set_name("y");
  return m.SerializeAsString();
}

// A function of IfModel(on_sizes) in `context`, its batch dynamic.
FunctionPtr MakeIf(gj_context* context, bool on_sizes) {
  const std::string bytes = IfModel(on_sizes);
  gj_graph* raw = nullptr;
  if (!Ok(gj_graph_from_proto(context, bytes.data(), bytes.size(), nullptr,
                              &raw))) {
    return nullptr;
  }
  GraphPtr graph(raw);
  return Make(context, graph.get());
}

// relu(x) where `relu`, else concat(x, x) along the last dim, x as Call
// fills it (scaled by `scale`).
std::vector<float> IfExpected(int64_t batch, bool relu, float scale) {
  std::vector<float> out;
  for (int64_t r = 0; r < batch * 3; ++r) {
    for (int copy = 0; copy < (relu ? 1 : 2); ++copy) {
      for (int64_t c = 0; c < 4; ++c) {
        const int64_t i = r * 4 + c;
        const float x =
            static_cast<float>(static_cast<int>(i % 11) - 5) * 0.5f * scale;
        out.push_back(relu ? std::max(x, 0.0f) : x);
      }
    }
  }
  return out;
}

// A condition over the batch size is a predicate each specialization
// decides and guards: one compiled entry per branch, each batch running
// the branch its size takes.
TEST(CapiOnnxDynamicTest, IfOverTheBatchSizeRunsTheBranchItsSizeTakes) {
  gjtest::ContextPtr jit = gjtest::MakeContext(GJ_BACKEND_CPU_JIT);
  FunctionPtr f = MakeIf(jit.get(), /*on_sizes=*/true);
  ASSERT_NE(f, nullptr);
  for (int64_t batch : {6, 2, 7, 3}) {
    const bool relu = batch > 4;
    const Output got = Call(f.get(), batch);
    EXPECT_EQ(got.shape, (std::vector<int64_t>{batch, 3, relu ? 4 : 8}))
        << "batch " << batch;
    EXPECT_EQ(got.values, IfExpected(batch, relu, 1.0f)) << "batch " << batch;
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_TRUE(Ok(gj_function_get_stats(f.get(), &stats)));
  EXPECT_EQ(stats.calls, 4);
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.cache_entries, 2);
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.fallback_calls, 0);
}

// A condition over tensor values breaks the graph at the If: the host reads
// it and each call runs the branch its values pick.
TEST(CapiOnnxDynamicTest, IfOverTensorValuesBreaksTheGraphThere) {
  gjtest::ContextPtr jit = gjtest::MakeContext(GJ_BACKEND_CPU_JIT);
  FunctionPtr f = MakeIf(jit.get(), /*on_sizes=*/false);
  ASSERT_NE(f, nullptr);
  // Values with a positive maximum take then_branch; all negative (or
  // zero: 0 > 0 is false), else_branch; then the first again.
  for (float shift : {0.0f, -3.0f, -2.5f, 0.0f}) {
    std::vector<float> data(2 * 12);
    float top = -1e30f;
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.5f + shift;
      top = std::max(top, data[i]);
    }
    const bool relu = top > 0;
    std::vector<float> want;
    for (int64_t r = 0; r < 6; ++r) {
      for (int copy = 0; copy < (relu ? 1 : 2); ++copy) {
        for (int64_t c = 0; c < 4; ++c) {
          const float v = data[r * 4 + c];
          want.push_back(relu ? std::max(v, 0.0f) : v);
        }
      }
    }
    HostTensor<float> x({2, 3, 4}, data);
    const DLTensor* inputs[] = {x.dl()};
    DLManagedTensor* out[1] = {};
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), inputs, 1, nullptr, out, 1)))
        << "shift " << shift;
    ManagedPtr out0(out[0]);
    EXPECT_EQ(gjtest::Shape(out[0]->dl_tensor),
              (std::vector<int64_t>{2, 3, relu ? 4 : 8}))
        << "shift " << shift;
    EXPECT_EQ(gjtest::Floats(out[0]->dl_tensor), want) << "shift " << shift;
  }
  char* text = nullptr;
  ASSERT_TRUE(Ok(gj_function_explain(f.get(), &text)));
  EXPECT_THAT(text, ::testing::HasSubstr("data-dependent predicate"));
  gj_string_destroy(text);
}

}  // namespace
