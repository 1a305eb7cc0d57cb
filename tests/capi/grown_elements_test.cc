// Array elements that can grow (API 0.9): gj_graph_builder_add_node_v takes
// the host's sizeof(gj_arg), gj_function_options.mark_dynamic_stride the
// host's sizeof(gj_dynamic_dim). A host built against a newer header passes
// larger elements; this library reads its fields and refuses a set field it
// does not know.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::ContextPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

// gj_arg as a newer header might define it: one more field at the end.
struct GrownArg {
  gj_arg arg;
  int64_t future;
};

// gj_dynamic_dim likewise.
struct GrownDim {
  gj_dynamic_dim dim;
  int64_t future;
};

struct BuilderDeleter {
  void operator()(gj_graph_builder* b) const { gj_graph_builder_destroy(b); }
};
using BuilderPtr = std::unique_ptr<gj_graph_builder, BuilderDeleter>;

BuilderPtr NewBuilder(gj_context* context) {
  gj_graph_builder* b = nullptr;
  EXPECT_TRUE(Ok(gj_graph_builder_create(context, "g", &b)));
  EXPECT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  return BuilderPtr(b);
}

TEST(GrownElementsTest, AddNodeVReadsLargerArgs) {
  ContextPtr context = gjtest::MakeContext();
  BuilderPtr b = NewBuilder(context.get());
  GrownArg args[2] = {{gj_arg_ref("x"), 0}, {gj_arg_int(2), 0}};
  ASSERT_TRUE(Ok(gj_graph_builder_add_node_v(
      b.get(), "y", "aten.mul.Tensor", &args[0].arg, 2, sizeof(GrownArg))));
  const char* outputs[] = {"y"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
  gj_graph* graph = nullptr;
  ASSERT_TRUE(Ok(gj_graph_builder_finish(b.get(), &graph)));
  gjtest::GraphPtr owned(graph);
  gjtest::FunctionPtr f = gjtest::MakeFunction(context.get(), graph);
  HostTensor<float> x({3}, {1, 2, 3});
  HostTensor<float> y({3}, {0, 0, 0});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 1, out, 1, nullptr)));
  EXPECT_EQ(y.buffer(), (std::vector<float>{2, 4, 6}));
}

TEST(GrownElementsTest, AddNodeVRefusesAFieldItDoesNotKnow) {
  ContextPtr context = gjtest::MakeContext();
  BuilderPtr b = NewBuilder(context.get());
  GrownArg args[2] = {{gj_arg_ref("x"), 0}, {gj_arg_int(2), 7}};
  gj_error* e = gj_graph_builder_add_node_v(b.get(), "y", "aten.mul.Tensor",
                                            &args[0].arg, 2, sizeof(GrownArg));
  EXPECT_TRUE(IsError(e, GJ_INVALID_ARGUMENT,
                      {"gj_graph_builder_add_node_v: node 'y': args[1]: byte " +
                       std::to_string(sizeof(gj_arg))}));
  // The builder is as it was: the node can be added again.
  args[1].future = 0;
  EXPECT_TRUE(Ok(gj_graph_builder_add_node_v(
      b.get(), "y", "aten.mul.Tensor", &args[0].arg, 2, sizeof(GrownArg))));
}

TEST(GrownElementsTest, AddNodeVRefusesSmallerOrZeroSizes) {
  ContextPtr context = gjtest::MakeContext();
  BuilderPtr b = NewBuilder(context.get());
  gj_arg args[] = {gj_arg_ref("x")};
  EXPECT_TRUE(
      IsError(gj_graph_builder_add_node_v(b.get(), "r", "aten.relu.default",
                                          args, 1, sizeof(gj_arg) - 8),
              GJ_INVALID_ARGUMENT, {"is below"}));
  EXPECT_TRUE(IsError(gj_graph_builder_add_node_v(
                          b.get(), "r", "aten.relu.default", args, 1, 0),
                      GJ_INVALID_ARGUMENT, {"arg_size is 0"}));
  EXPECT_TRUE(Ok(gj_graph_builder_add_node_v(b.get(), "r", "aten.relu.default",
                                             args, 1, sizeof(gj_arg))));
}

// A function over relu(x) with x's dim 0 marked dynamic through `dims`.
gj_error* CreateWithMarks(gj_context* context, gj_graph* graph,
                          const void* dims, size_t stride, gj_function** out) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.mark_dynamic = static_cast<const gj_dynamic_dim*>(dims);
  options.num_mark_dynamic = 1;
  options.mark_dynamic_stride = stride;
  return gj_function_create(context, graph, &options, out);
}

TEST(GrownElementsTest, MarkDynamicStrideReadsLargerElements) {
  ContextPtr context = gjtest::MakeContext();
  gjtest::GraphPtr graph =
      gjtest::BuildGraph(context.get(), "relu", {"x"},
                         [](gj_graph_builder* b) {
                           gj_arg args[] = {gj_arg_ref("x")};
                           EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                               b, "r", "aten.relu.default", args, 1)));
                         },
                         {"r"});
  GrownDim dims[1] = {{{0, 0, 2, 64}, 0}};
  gj_function* f = nullptr;
  ASSERT_TRUE(Ok(
      CreateWithMarks(context.get(), graph.get(), dims, sizeof(GrownDim), &f)));
  gjtest::FunctionPtr owned(f);
  HostTensor<float> x({5}, {-1, 2, -3, 4, -5});
  HostTensor<float> y({5}, std::vector<float>(5, 0));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f, in, 1, out, 1, nullptr)));
  char* guards = nullptr;
  ASSERT_TRUE(Ok(gj_function_dump_guards(f, &guards)));
  const std::string text = guards;
  gj_string_destroy(guards);
  // The mark reached the specializer: the size is a symbol bounded by it.
  EXPECT_NE(text.find("<= 64"), std::string::npos) << text;

  dims[0].future = 1;
  f = nullptr;
  EXPECT_TRUE(IsError(
      CreateWithMarks(context.get(), graph.get(), dims, sizeof(GrownDim), &f),
      GJ_INVALID_ARGUMENT,
      {"gj_function_create: options->mark_dynamic[0]: byte 24"}));
  EXPECT_EQ(f, nullptr);
  EXPECT_TRUE(IsError(CreateWithMarks(context.get(), graph.get(), dims, 16, &f),
                      GJ_INVALID_ARGUMENT, {"element size 16 is below 24"}));
}

}  // namespace
