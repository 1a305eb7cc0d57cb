#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::ContextPtr;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

class CapiFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = gjtest::MakeContext();
    graph_ = gjtest::IdentityGraph(context_.get(), {"a", "b"});
    ASSERT_NE(graph_, nullptr);
  }

  ContextPtr context_;
  GraphPtr graph_;
};

TEST_F(CapiFunctionTest, OptionsInitFillsDefaults) {
  gj_function_options options;
  std::memset(&options, 0xff, sizeof(options));
  gj_function_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_function_options));
  EXPECT_EQ(options.name, nullptr);
  EXPECT_EQ(options.recompile_limit, 8);
  EXPECT_EQ(options.dynamic, GJ_DYNAMIC_AUTO);
  gj_function_options_init(nullptr);
}

TEST_F(CapiFunctionTest, CreateNullParameters) {
  gj_function* function = reinterpret_cast<gj_function*>(0x1);
  EXPECT_TRUE(
      IsError(gj_function_create(nullptr, graph_.get(), nullptr, &function),
              GJ_INVALID_ARGUMENT, {"gj_function_create", "context is NULL"}));
  EXPECT_EQ(function, nullptr);
  EXPECT_TRUE(
      IsError(gj_function_create(context_.get(), nullptr, nullptr, &function),
              GJ_INVALID_ARGUMENT, {"graph is NULL"}));
  EXPECT_TRUE(IsError(
      gj_function_create(context_.get(), graph_.get(), nullptr, nullptr),
      GJ_INVALID_ARGUMENT, {"out_function is NULL"}));
  gj_function_destroy(nullptr);
  EXPECT_EQ(gj_function_num_inputs(nullptr), 0u);
  EXPECT_EQ(gj_function_num_outputs(nullptr), 0u);
}

TEST_F(CapiFunctionTest, CountsFollowTheGraph) {
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph_.get());
  EXPECT_EQ(gj_function_num_inputs(function.get()), 2u);
  EXPECT_EQ(gj_function_num_outputs(function.get()), 2u);
}

TEST_F(CapiFunctionTest, InvalidOptionsRejected) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.recompile_limit = -1;
  gj_function* function = nullptr;
  EXPECT_TRUE(IsError(
      gj_function_create(context_.get(), graph_.get(), &options, &function),
      GJ_INVALID_ARGUMENT, {"recompile_limit", "-1"}));
  gj_function_options_init(&options);
  int raw_mode = 7;
  std::memcpy(&options.dynamic, &raw_mode, sizeof(raw_mode));
  EXPECT_TRUE(IsError(
      gj_function_create(context_.get(), graph_.get(), &options, &function),
      GJ_INVALID_ARGUMENT, {"dynamic", "7"}));
  gj_function_options_init(&options);
  options.struct_size = 3;
  EXPECT_TRUE(IsError(
      gj_function_create(context_.get(), graph_.get(), &options, &function),
      GJ_INVALID_ARGUMENT, {"struct_size", "gj_function_options_init"}));
  EXPECT_EQ(function, nullptr);
}

// The function's name appears in call errors: the option when given, else
// the graph's name.
TEST_F(CapiFunctionTest, NameFromOptionsOrGraph) {
  FunctionPtr unnamed = gjtest::MakeFunction(context_.get(), graph_.get());
  EXPECT_TRUE(
      IsError(gj_function_call(unnamed.get(), nullptr, 0, nullptr, 0, nullptr),
              GJ_INVALID_ARGUMENT, {"function 'identity'", "takes 2 inputs"}));

  gj_function_options options;
  gj_function_options_init(&options);
  std::string name = "my_fn";
  options.name = name.c_str();
  gj_function* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_create(context_.get(), graph_.get(), &options, &raw)));
  FunctionPtr named(raw);
  name = "overwritten";  // the option was copied
  EXPECT_TRUE(
      IsError(gj_function_call(named.get(), nullptr, 0, nullptr, 0, nullptr),
              GJ_INVALID_ARGUMENT, {"function 'my_fn'"}));
}

// A host built against a header where gj_function_options ended after
// `name` passes that smaller struct_size: the fields past it keep their
// defaults even though its memory holds something else.
TEST_F(CapiFunctionTest, OlderHostStructReadsOnlyItsFields) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.struct_size = offsetof(gj_function_options, recompile_limit);
  options.name = "old_host";
  options.recompile_limit = -100;
  int raw_mode = 55;
  std::memcpy(&options.dynamic, &raw_mode, sizeof(raw_mode));
  gj_function* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_create(context_.get(), graph_.get(), &options, &raw)));
  FunctionPtr function(raw);
  EXPECT_TRUE(
      IsError(gj_function_call(function.get(), nullptr, 0, nullptr, 0, nullptr),
              GJ_INVALID_ARGUMENT, {"function 'old_host'"}));
}

TEST_F(CapiFunctionTest, OutlivesItsGraphHandle) {
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph_.get());
  graph_.reset();
  HostTensor<float> a({2}, {1, 2});
  HostTensor<float> b({1}, {3});
  const DLTensor* inputs[] = {a.dl(), b.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function.get(), inputs, 2, nullptr, out, 2)));
  gjtest::ManagedPtr out0(out[0]), out1(out[1]);
  EXPECT_EQ(gjtest::Floats(out[0]->dl_tensor), (std::vector<float>{1, 2}));
  EXPECT_EQ(gjtest::Floats(out[1]->dl_tensor), (std::vector<float>{3}));
}

}  // namespace
