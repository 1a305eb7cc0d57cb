// What error messages tell a host (issue #19, item 5): size symbols with
// their sources, the function and node on errors found while running.

#include <cstdint>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

TEST(CapiMessagesTest, SymbolsInAShapeErrorNameTheirSource) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = gjtest::BuildGraph(
      context.get(), "adder", {"x", "y"},
      [](gj_graph_builder* b) {
        gj_arg add[] = {gj_arg_ref("x"), gj_arg_ref("y")};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "add", "aten.add.Tensor", add, 2)));
      },
      {"add"});
  gj_function_options options;
  gj_function_options_init(&options);
  options.dynamic = GJ_DYNAMIC_DYNAMIC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_create(context.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  HostTensor<float> x({7}, std::vector<float>(7));
  HostTensor<float> y({10}, std::vector<float>(10));
  const DLTensor* in[] = {x.dl(), y.dl()};
  DLManagedTensor* out[1] = {};
  gj_error* error = gj_function_call_alloc(f.get(), in, 2, nullptr, out, 1);
  ASSERT_NE(error, nullptr);
  const std::string message = gj_error_message(error);
  gj_error_destroy(error);
  EXPECT_NE(message.find("function 'adder'"), std::string::npos) << message;
  // Whatever symbols the message shows come with where they were read.
  for (const char* symbol : {"s0", "s1"}) {
    if (message.find(std::string(symbol) + "]") == std::string::npos &&
        message.find(std::string(symbol) + ",") == std::string::npos) {
      continue;
    }
    EXPECT_NE(message.find(std::string(symbol) + " = "), std::string::npos)
        << message;
  }
  EXPECT_NE(message.find(".size()[0]"), std::string::npos) << message;
}

TEST(CapiMessagesTest, AnIndexErrorFoundByAKernelNamesFunctionAndNode) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = gjtest::BuildGraph(
      context.get(), "lookup", {"table", "ids"},
      [](gj_graph_builder* b) {
        gj_arg embed[] = {gj_arg_ref("table"), gj_arg_ref("ids")};
        EXPECT_TRUE(Ok(gj_graph_builder_add_node(
            b, "rows", "aten.embedding.default", embed, 2)));
      },
      {"rows"});
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  HostTensor<float> table({10, 4}, std::vector<float>(40, 1));
  HostTensor<int64_t> ids({3}, {1, 10, 2});
  HostTensor<float> rows({3, 4}, std::vector<float>(12, -1));
  const DLTensor* in[] = {table.dl(), ids.dl()};
  const DLTensor* out[] = {rows.dl()};
  EXPECT_TRUE(IsError(
      gj_function_call(f.get(), in, 2, out, 1, nullptr), GJ_INVALID_ARGUMENT,
      {"gj_function_call: function 'lookup'", "node 'rows'", "out of range"}));
  for (float v : rows.buffer()) EXPECT_EQ(v, -1);
}

}  // namespace
