// C API 0.5 calls for server hosts: output names, log callback and topics,
// precompile.

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
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

gj_function_stats Stats(const gj_function* f) {
  gj_function_stats s;
  gj_function_stats_init(&s);
  EXPECT_TRUE(Ok(gj_function_get_stats(f, &s)));
  return s;
}

// y = relu(x) * 2, returned twice, and x itself.
GraphPtr ThreeOutputs(gj_context* context) {
  return gjtest::BuildGraph(context, "three", {"x"},
                            [](gj_graph_builder* b) {
                              gj_arg relu[] = {gj_arg_ref("x")};
                              EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                                  b, "act", "aten.relu.default", relu, 1)));
                              gj_arg mul[] = {gj_arg_ref("act"), gj_arg_int(2)};
                              EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                                  b, "y", "aten.mul.Tensor", mul, 2)));
                            },
                            {"y", "x", "y"});
}

TEST(CapiServerApiTest, OutputNames) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = ThreeOutputs(context.get());
  ASSERT_EQ(gj_graph_num_outputs(graph.get()), 3u);
  EXPECT_STREQ(gj_graph_output_name(graph.get(), 0), "y");
  EXPECT_STREQ(gj_graph_output_name(graph.get(), 1), "x");
  EXPECT_STREQ(gj_graph_output_name(graph.get(), 2), "y");
  EXPECT_EQ(gj_graph_output_name(graph.get(), 3), nullptr);
  EXPECT_EQ(gj_graph_output_name(nullptr, 0), nullptr);
  // An element of a multi-output node returned directly is "node[k]".
  const char* text = R"pb(
    placeholders { name: "x" }
    nodes {
      name: "parts"
      target: "aten.split_with_sizes.default"
      args { ref: "x" }
      args {
        list {
          items { i: 1 }
          items { i: 2 }
        }
      }
    }
    nodes {
      name: "second"
      target: "getitem"
      args { ref: "parts" }
      args { i: 1 }
    }
    outputs { ref: "second" }
  )pb";
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_text(context.get(), text,
                                    std::char_traits<char>::length(text),
                                    nullptr, &raw)));
  GraphPtr split(raw);
  EXPECT_STREQ(gj_graph_output_name(split.get(), 0), "second");
}

struct Captured {
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> lines;
};

void Capture(void* user_data, const char* topic, const char* message) {
  auto* c = static_cast<Captured*>(user_data);
  std::lock_guard<std::mutex> lock(c->mu);
  c->lines.emplace_back(topic, message);
}

TEST(CapiServerApiTest, LogCallbackReceivesTheTopicsAsked) {
  Captured captured;
  gj_set_log_callback(&Capture, &captured);
  gj_set_log_topics("recompiles,guards");
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = ThreeOutputs(context.get());
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  for (int64_t n : {3, 4}) {
    HostTensor<float> x({n}, std::vector<float>(n, 1));
    const DLTensor* in[] = {x.dl()};
    DLManagedTensor* out[3] = {};
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, out, 3)));
    for (DLManagedTensor* t : out) gj_tensor_release(t);
  }
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  bool guards = false, recompiles = false;
  for (const auto& [topic, message] : captured.lines) {
    EXPECT_EQ(message.find("[guardjit:"), std::string::npos);
    if (topic == "guards" &&
        message.find("TREE_GUARD_MANAGER") != std::string::npos) {
      guards = true;
    }
    if (topic == "recompiles" &&
        message.find("Recompiling function three") != std::string::npos) {
      recompiles = true;
    }
  }
  EXPECT_TRUE(guards);
  EXPECT_TRUE(recompiles);
}

TEST(CapiServerApiTest, PrecompileMakesTheFirstCallAHit) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = ThreeOutputs(context.get());
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  // Metadata only: no data pointer.
  int64_t shape[2] = {8, 16};
  DLTensor meta{};
  meta.data = nullptr;
  meta.device = {kDLCPU, 0};
  meta.ndim = 2;
  meta.dtype = {kDLFloat, 32, 1};
  meta.shape = shape;
  const DLTensor* in_meta[] = {&meta};
  ASSERT_TRUE(Ok(gj_function_precompile(f.get(), in_meta, 1, nullptr)));
  EXPECT_EQ(Stats(f.get()).compiles, 1);
  EXPECT_EQ(Stats(f.get()).calls, 0);
  // Again: already served, no second compile.
  ASSERT_TRUE(Ok(gj_function_precompile(f.get(), in_meta, 1, nullptr)));
  EXPECT_EQ(Stats(f.get()).compiles, 1);
  HostTensor<float> x({8, 16}, std::vector<float>(128, -1));
  const DLTensor* in[] = {x.dl()};
  DLManagedTensor* out[3] = {};
  ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, out, 3)));
  for (DLManagedTensor* t : out) gj_tensor_release(t);
  const gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.compiles, 1);
  char* explain = nullptr;
  ASSERT_TRUE(Ok(gj_function_explain(f.get(), &explain)));
  EXPECT_NE(std::string(explain).find("precompile"), std::string::npos);
  gj_string_destroy(explain);
  // Bad metadata is named like a call's.
  meta.ndim = -1;
  EXPECT_TRUE(IsError(gj_function_precompile(f.get(), in_meta, 1, nullptr),
                      GJ_INVALID_ARGUMENT,
                      {"gj_function_precompile", "input 0 ('x')", "ndim"}));
  EXPECT_TRUE(IsError(gj_function_precompile(nullptr, in_meta, 1, nullptr),
                      GJ_INVALID_ARGUMENT, {"function is NULL"}));
}

TEST(CapiServerApiTest, PrecompilePastTheRecompileLimitIsAnError) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = ThreeOutputs(context.get());
  gj_function_options options;
  gj_function_options_init(&options);
  options.recompile_limit = 1;
  options.dynamic = GJ_DYNAMIC_STATIC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_create(context.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  int64_t shape[1] = {4};
  DLTensor meta{};
  meta.device = {kDLCPU, 0};
  meta.ndim = 1;
  meta.dtype = {kDLFloat, 32, 1};
  meta.shape = shape;
  const DLTensor* in[] = {&meta};
  ASSERT_TRUE(Ok(gj_function_precompile(f.get(), in, 1, nullptr)));
  shape[0] = 5;
  EXPECT_TRUE(IsError(gj_function_precompile(f.get(), in, 1, nullptr),
                      GJ_FAILED_PRECONDITION, {"recompile limit"}));
}

}  // namespace
