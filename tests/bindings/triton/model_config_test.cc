#include "bindings/triton/model_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {
namespace {

using ::testing::HasSubstr;

Json Parse(const std::string& text) {
  Json j;
  std::string error;
  EXPECT_TRUE(Json::Parse(text, &j, &error)) << error;
  return j;
}

class ModelConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(gj_context_create(nullptr, &context_), nullptr);
  }
  void TearDown() override {
    gj_graph_destroy(graph_);
    gj_context_destroy(context_);
  }
  void Load(const std::string& text) {
    gj_error* err = gj_graph_from_text(context_, text.data(), text.size(),
                                       nullptr, &graph_);
    ASSERT_EQ(err, nullptr) << gj_error_message(err);
  }

  gj_context* context_ = nullptr;
  gj_graph* graph_ = nullptr;
};

constexpr char kBatched[] = R"pb(
  placeholders {
    name: "x"
    meta {
      dtype: FLOAT32
      dims { symbol: "batch" }
      dims { size: 3 }
    }
  }
  nodes {
    name: "relu"
    target: "aten.relu.default"
    args { ref: "x" }
  }
  outputs { ref: "relu" }
  output_meta {
    dtype: FLOAT32
    dims { symbol: "batch" }
    dims { size: 3 }
  }
)pb";

TEST_F(ModelConfigTest, ParsesParameters) {
  ModelConfig c;
  std::string error;
  ASSERT_TRUE(ParseModelConfig(
      Parse(R"({"name":"m","max_batch_size":4,"input":[{"name":"x",)"
            R"("data_type":"TYPE_INT64","dims":["-1","2"]}],"parameters":{)"
            R"("dynamic":{"string_value":"static"},)"
            R"("recompile_limit":{"string_value":"3"},)"
            R"("num_threads":{"string_value":"2"},)"
            R"("compile":{"string_value":"async"},)"
            R"("mode":{"string_value":"reduce-overhead"},)"
            R"("warmup":{"string_value":"1,8"}}})"),
      &c, &error))
      << error;
  EXPECT_EQ(c.max_batch_size, 4);
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].dtype->gj, GJ_DTYPE_INT64);
  EXPECT_EQ(c.inputs[0].dims, (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(c.dynamic, GJ_DYNAMIC_STATIC);
  EXPECT_EQ(c.recompile_limit, 3);
  EXPECT_EQ(c.num_threads, 2);
  EXPECT_EQ(c.compile, GJ_COMPILE_ASYNC);
  EXPECT_EQ(c.mode, GJ_MODE_REDUCE_OVERHEAD);
  EXPECT_EQ(c.warmup, (std::vector<int64_t>{1, 8}));
}

TEST_F(ModelConfigTest, ParsesCompileCacheParameters) {
  ModelConfig c;
  std::string error;
  ASSERT_TRUE(
      ParseModelConfig(Parse(R"({"parameters":{)"
                             R"("cache_dir":{"string_value":"/c"},)"
                             R"("remote_cache":{"string_value":""},)"
                             R"("cache_key_file":{"string_value":"k"},)"
                             R"("max_cache_bytes":{"string_value":"0"}}})"),
                       &c, &error))
      << error;
  EXPECT_EQ(c.cache_dir, "/c");
  EXPECT_EQ(c.remote_cache, "");  // set and empty: no Redis, whatever the env
  EXPECT_EQ(c.cache_key_file, "k");
  EXPECT_EQ(c.max_cache_bytes, 0);
  ModelConfig unset;
  ASSERT_TRUE(ParseModelConfig(Parse("{}"), &unset, &error)) << error;
  EXPECT_FALSE(unset.cache_dir.has_value());
  EXPECT_FALSE(unset.remote_cache.has_value());
  EXPECT_FALSE(unset.cache_key_file.has_value());
  EXPECT_EQ(unset.max_cache_bytes, -1);
}

TEST_F(ModelConfigTest, BadParametersNameThemselves) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"parameters":{"dynamic":{"string_value":"maybe"}}})",
       "parameter 'dynamic' = 'maybe': expected auto, static or dynamic"},
      {R"({"parameters":{"mode":{"string_value":"fast"}}})",
       "parameter 'mode' = 'fast': expected default or reduce-overhead"},
      {R"({"parameters":{"warmup":{"string_value":"2,x"}}})",
       "parameter 'warmup' = '2,x'"},
      {R"({"parameters":{"speed":{"string_value":"max"}}})",
       "unknown parameter 'speed'"},
      {R"({"parameters":{"remote_cache":{"string_value":"http://x"}}})",
       "parameter 'remote_cache' = 'http://x': expected a redis:// URL"},
      {R"({"parameters":{"max_cache_bytes":{"string_value":"-5"}}})",
       "parameter 'max_cache_bytes' = '-5': expected a byte count"},
      {R"({"input":[{"name":"x","data_type":"TYPE_STRING"}]})",
       "input 'x': data_type 'TYPE_STRING' is not one guardjit runs"},
      {R"({"max_batch_size":-1})", "max_batch_size is not a count"},
  };
  for (const Case& c : cases) {
    ModelConfig config;
    std::string error;
    EXPECT_FALSE(ParseModelConfig(Parse(c.json), &config, &error)) << c.json;
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

TEST_F(ModelConfigTest, AutoCompletesABatchedModel) {
  Load(kBatched);
  Json config = Parse(R"({"name":"m","backend":"guardjit"})");
  bool changed = false;
  std::string error;
  ASSERT_TRUE(AutoCompleteConfig(graph_, 8, &config, &changed, &error))
      << error;
  EXPECT_TRUE(changed);
  EXPECT_EQ(config.Serialize(),
            R"({"name":"m","backend":"guardjit","max_batch_size":8,)"
            R"("dynamic_batching":{},"input":[{"name":"x","data_type":)"
            R"("TYPE_FP32","dims":[3]}],"output":[{"name":"relu",)"
            R"("data_type":"TYPE_FP32","dims":[3]}]})");
  ModelConfig parsed;
  ASSERT_TRUE(ParseModelConfig(config, &parsed, &error)) << error;
  EXPECT_TRUE(CheckConfigAgainstGraph(parsed, graph_, &error)) << error;
  // A complete config stays as it is.
  ASSERT_TRUE(AutoCompleteConfig(graph_, 8, &config, &changed, &error));
  EXPECT_FALSE(changed);
}

TEST_F(ModelConfigTest, NoDefaultMaxBatchSizeKeepsTheBatchDimInDims) {
  Load(kBatched);
  Json config = Parse(R"({"name":"m"})");
  bool changed = false;
  std::string error;
  ASSERT_TRUE(AutoCompleteConfig(graph_, 0, &config, &changed, &error))
      << error;
  EXPECT_EQ(config.Find("max_batch_size"), nullptr);
  EXPECT_EQ((*config.Find("input"))[0].Find("dims")->Serialize(), "[-1,3]");
}

TEST_F(ModelConfigTest, AutoCompleteNeedsDeclaredMetadata) {
  Load(R"pb(placeholders { name: "x" }
            outputs { ref: "x" })pb");
  Json config = Parse(R"({"name":"m"})");
  bool changed = false;
  std::string error;
  EXPECT_FALSE(AutoCompleteConfig(graph_, 8, &config, &changed, &error));
  EXPECT_THAT(error, HasSubstr("input 'x': the graph declares no dtype"));
}

TEST_F(ModelConfigTest, ConfigMustAgreeWithTheGraph) {
  Load(kBatched);
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"max_batch_size":8,"input":[{"name":"y","data_type":"TYPE_FP32",)"
       R"("dims":[3]}]})",
       "config input 'y' is not one of the graph's (x)"},
      {R"({"max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP64",)"
       R"("dims":[3]}]})",
       "input 'x': config data_type TYPE_FP64, the graph declares TYPE_FP32"},
      {R"({"max_batch_size":0,"input":[{"name":"x","data_type":"TYPE_FP32",)"
       R"("dims":[3]}]})",
       "input 'x': config dims [3] have rank 1, the graph declares rank 2"},
      {R"({"max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP32",)"
       R"("dims":[4]}]})",
       "disagree with the graph's size 3 at dim 1"},
      {R"({"max_batch_size":8,"output":[{"name":"relu","data_type":)"
       R"("TYPE_FP32","dims":[3]}]})",
       "the config lists no input 'x'"},
  };
  for (const Case& c : cases) {
    ModelConfig config;
    std::string error;
    ASSERT_TRUE(ParseModelConfig(Parse(c.json), &config, &error)) << error;
    EXPECT_FALSE(CheckConfigAgainstGraph(config, graph_, &error)) << c.json;
    EXPECT_THAT(error, HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace guardjit_triton
