#include <cstdint>
#include <cstring>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::BuilderPtr;
using gjtest::ContextPtr;
using gjtest::Floats;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::ManagedPtr;
using gjtest::Ok;

class CapiGraphBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = gjtest::MakeContext();
    gj_graph_builder* builder = nullptr;
    ASSERT_TRUE(Ok(gj_graph_builder_create(context_.get(), "g", &builder)));
    builder_.reset(builder);
  }

  gj_error* Finish(GraphPtr* graph) {
    gj_graph* raw = nullptr;
    gj_error* error = gj_graph_builder_finish(builder_.get(), &raw);
    graph->reset(raw);
    return error;
  }

  ContextPtr context_;
  BuilderPtr builder_;
};

TEST_F(CapiGraphBuilderTest, CreateNullParameters) {
  gj_graph_builder* builder = reinterpret_cast<gj_graph_builder*>(0x1);
  EXPECT_TRUE(IsError(gj_graph_builder_create(nullptr, "g", &builder),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_create", "context"}));
  EXPECT_EQ(builder, nullptr);
  EXPECT_TRUE(
      IsError(gj_graph_builder_create(context_.get(), nullptr, &builder),
              GJ_INVALID_ARGUMENT, {"name"}));
  EXPECT_TRUE(IsError(gj_graph_builder_create(context_.get(), "g", nullptr),
                      GJ_INVALID_ARGUMENT, {"out_builder"}));
  gj_graph_builder_destroy(nullptr);
}

TEST_F(CapiGraphBuilderTest, NullBuilderEverywhere) {
  DLTensor t{};
  gj_arg arg = gj_arg_int(1);
  const char* name = "x";
  gj_graph* graph = nullptr;
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(nullptr, "x"),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_add_input", "builder is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_constant(nullptr, "w", &t),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_add_constant", "builder"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_node(nullptr, "n", "t", &arg, 1),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_add_node", "builder"}));
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(nullptr, &name, 1),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_set_outputs", "builder"}));
  EXPECT_TRUE(IsError(gj_graph_builder_finish(nullptr, &graph),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_finish", "builder"}));
}

TEST_F(CapiGraphBuilderTest, NullNamesAndArrays) {
  gj_graph_builder* b = builder_.get();
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(b, nullptr),
                      GJ_INVALID_ARGUMENT, {"name is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_constant(b, nullptr, nullptr),
                      GJ_INVALID_ARGUMENT, {"name is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_constant(b, "w", nullptr),
                      GJ_INVALID_ARGUMENT, {"value is NULL"}));
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, nullptr, "aten.relu.default", nullptr, 0),
      GJ_INVALID_ARGUMENT, {"name is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_node(b, "n", nullptr, nullptr, 0),
                      GJ_INVALID_ARGUMENT, {"target is NULL"}));
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "n", "aten.relu.default", nullptr, 2),
      GJ_INVALID_ARGUMENT, {"args is NULL", "node 'n'"}));
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, nullptr, 1),
                      GJ_INVALID_ARGUMENT, {"names is NULL"}));
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  const char* names[] = {"x", nullptr};
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, names, 2),
                      GJ_INVALID_ARGUMENT, {"names[1] is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_builder_finish(b, nullptr), GJ_INVALID_ARGUMENT,
                      {"out_graph is NULL"}));
}

TEST_F(CapiGraphBuilderTest, DuplicateAndEmptyNames) {
  gj_graph_builder* b = builder_.get();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(b, "x"), GJ_INVALID_ARGUMENT,
                      {"duplicate", "'x'"}));
  HostTensor<float> w({2}, {1, 2});
  EXPECT_TRUE(IsError(gj_graph_builder_add_constant(b, "x", w.dl()),
                      GJ_INVALID_ARGUMENT, {"duplicate", "'x'"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(b, ""), GJ_INVALID_ARGUMENT,
                      {"empty name"}));
}

TEST_F(CapiGraphBuilderTest, UnknownTargetIsUnimplementedNamingTheNode) {
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(builder_.get(), "x")));
  gj_arg args[] = {gj_arg_ref("x")};
  EXPECT_TRUE(
      IsError(gj_graph_builder_add_node(builder_.get(), "mystery",
                                        "aten.not_an_op.default", args, 1),
              GJ_UNIMPLEMENTED, {"node 'mystery'", "aten.not_an_op.default"}));
}

TEST_F(CapiGraphBuilderTest, MalformedArgumentsNameNodeAndIndex) {
  gj_graph_builder* b = builder_.get();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  const char* t = "aten.add.Tensor";
  auto add = [&](gj_arg bad) {
    gj_arg args[] = {gj_arg_ref("x"), bad};
    return gj_graph_builder_add_node(b, "n", t, args, 2);
  };
  EXPECT_TRUE(IsError(add(gj_arg_ref(nullptr)), GJ_INVALID_ARGUMENT,
                      {"node 'n'", "args[1]", "GJ_ARG_REF", "str NULL"}));
  EXPECT_TRUE(IsError(add(gj_arg_string(nullptr)), GJ_INVALID_ARGUMENT,
                      {"args[1]", "GJ_ARG_STRING"}));
  gj_arg bad_kind = gj_arg_int(0);
  int raw_kind = 42;
  std::memcpy(&bad_kind.kind, &raw_kind, sizeof(raw_kind));
  EXPECT_TRUE(IsError(add(bad_kind), GJ_INVALID_ARGUMENT,
                      {"args[1]", "unknown kind 42"}));
  gj_arg bad_bool = gj_arg_bool(1);
  bad_bool.i = 2;
  EXPECT_TRUE(
      IsError(add(bad_bool), GJ_INVALID_ARGUMENT, {"GJ_ARG_BOOL", "0 or 1"}));
  gj_arg bad_dtype = gj_arg_dtype(GJ_DTYPE_FLOAT32);
  int raw_dtype = 99;
  std::memcpy(&bad_dtype.dtype, &raw_dtype, sizeof(raw_dtype));
  EXPECT_TRUE(
      IsError(add(bad_dtype), GJ_INVALID_ARGUMENT, {"unknown dtype 99"}));
  gj_arg device = gj_arg_string("tpu:3");
  device.kind = GJ_ARG_DEVICE;
  EXPECT_TRUE(
      IsError(add(device), GJ_INVALID_ARGUMENT, {"unknown device 'tpu:3'"}));
  EXPECT_TRUE(IsError(add(gj_arg_ints(nullptr, 3)), GJ_INVALID_ARGUMENT,
                      {"GJ_ARG_INT_LIST", "ints NULL"}));
  gj_arg floats = gj_arg_none();
  floats.kind = GJ_ARG_FLOAT_LIST;
  floats.len = 2;
  EXPECT_TRUE(IsError(add(floats), GJ_INVALID_ARGUMENT, {"floats NULL"}));
  const char* refs[] = {"x", nullptr};
  EXPECT_TRUE(IsError(add(gj_arg_refs(refs, 2)), GJ_INVALID_ARGUMENT,
                      {"GJ_ARG_REF_LIST", "refs[1] NULL"}));
  EXPECT_TRUE(IsError(add(gj_kwarg("alpha", gj_arg_ref(nullptr))),
                      GJ_INVALID_ARGUMENT, {"args[1] ('alpha')"}));
}

TEST_F(CapiGraphBuilderTest, OutputsMustBeSetAndDefined) {
  gj_graph_builder* b = builder_.get();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  GraphPtr graph;
  EXPECT_TRUE(
      IsError(Finish(&graph), GJ_INVALID_ARGUMENT, {"'g'", "no outputs"}));
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, nullptr, 0),
                      GJ_INVALID_ARGUMENT, {"no outputs"}));
  const char* undefined[] = {"nowhere"};
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, undefined, 1),
                      GJ_INVALID_ARGUMENT, {"'nowhere'", "not defined"}));
  // Every failure above left the builder usable.
  const char* outputs[] = {"x"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(b, outputs, 1)));
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, outputs, 1),
                      GJ_FAILED_PRECONDITION, {"already set"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(b, "late"),
                      GJ_FAILED_PRECONDITION, {"'late'", "after the outputs"}));
  ASSERT_TRUE(Ok(Finish(&graph)));
  EXPECT_EQ(gj_graph_num_inputs(graph.get()), 1u);
  EXPECT_EQ(gj_graph_num_outputs(graph.get()), 1u);
  EXPECT_STREQ(gj_graph_input_name(graph.get(), 0), "x");
  EXPECT_EQ(gj_graph_input_name(graph.get(), 1), nullptr);
}

TEST_F(CapiGraphBuilderTest, FinishedBuilderOnlyAcceptsDestroy) {
  gj_graph_builder* b = builder_.get();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  const char* outputs[] = {"x"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(b, outputs, 1)));
  GraphPtr graph;
  ASSERT_TRUE(Ok(Finish(&graph)));
  GraphPtr again;
  EXPECT_TRUE(IsError(Finish(&again), GJ_FAILED_PRECONDITION, {"finished"}));
  EXPECT_EQ(again, nullptr);
  EXPECT_TRUE(IsError(gj_graph_builder_add_input(b, "y"),
                      GJ_FAILED_PRECONDITION, {"finished"}));
  gj_arg args[] = {gj_arg_ref("x")};
  EXPECT_TRUE(
      IsError(gj_graph_builder_add_node(b, "r", "aten.relu.default", args, 1),
              GJ_FAILED_PRECONDITION, {"finished"}));
  EXPECT_TRUE(IsError(gj_graph_builder_set_outputs(b, outputs, 1),
                      GJ_FAILED_PRECONDITION, {"finished"}));
  HostTensor<float> w({1}, {1});
  EXPECT_TRUE(IsError(gj_graph_builder_add_constant(b, "w", w.dl()),
                      GJ_FAILED_PRECONDITION, {"finished"}));
}

TEST_F(CapiGraphBuilderTest, ConstantIsValidatedAndNamed) {
  HostTensor<float> w({2}, {1, 2});
  w.dl()->dtype = {kDLComplex, 64, 1};
  EXPECT_TRUE(
      IsError(gj_graph_builder_add_constant(builder_.get(), "w", w.dl()),
              GJ_INVALID_ARGUMENT, {"constant 'w'", "unsupported dtype"}));
  w.dl()->dtype = {kDLFloat, 32, 1};
  w.dl()->device = {kDLCUDA, 0};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_constant(builder_.get(), "w", w.dl()),
      GJ_INVALID_ARGUMENT, {"constant 'w' is on cuda:0", "host memory"}));
}

// A strided constant is copied in row-major order when added; the host's
// buffer may change or die afterwards.
TEST_F(CapiGraphBuilderTest, ConstantIsCopiedFromAnyStrides) {
  // Logical [[1, 2, 3], [4, 5, 6]] stored transposed.
  HostTensor<float> w({2, 3}, {1, 4, 2, 5, 3, 6}, {1, 2});
  ASSERT_TRUE(Ok(gj_graph_builder_add_constant(builder_.get(), "w", w.dl())));
  w.buffer().assign(6, -1.0f);
  const char* outputs[] = {"w"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(builder_.get(), outputs, 1)));
  GraphPtr graph;
  ASSERT_TRUE(Ok(Finish(&graph)));
  EXPECT_EQ(gj_graph_num_inputs(graph.get()), 0u);
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  for (int call = 0; call < 2; ++call) {
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(
        gj_function_call_alloc(function.get(), nullptr, 0, nullptr, &out, 1)));
    ManagedPtr owned(out);
    EXPECT_EQ(gjtest::Shape(out->dl_tensor), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(Floats(out->dl_tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    // The host owns this buffer; writing it must not reach the graph's weight.
    static_cast<float*>(out->dl_tensor.data)[0] = 100.0f;
  }
}

}  // namespace
