// Graph input/output metadata through the C API (capi/graph_io.cc and the
// builder's set_input_info/set_output_info).

#include <cstdint>
#include <string>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::BuilderPtr;
using gjtest::ContextPtr;
using gjtest::GraphPtr;
using gjtest::IsError;
using gjtest::Ok;

constexpr char kGraph[] = R"pb(
  name: "meta"
  placeholders {
    name: "x"
    meta {
      dtype: FLOAT32
      dims { symbol: "batch" }
      dims { size: 4 }
      dims {}
    }
  }
  placeholders { name: "y" }
  placeholders {
    name: "z"
    meta { dtype: INT64 unknown_rank: true }
  }
  nodes {
    name: "relu"
    target: "aten.relu.default"
    args { ref: "x" }
  }
  outputs { ref: "relu" }
  outputs { ref: "y" }
  output_meta {
    dtype: FLOAT32
    dims { symbol: "batch" }
    dims { size: 4 }
    dims {}
  }
  output_meta {}
)pb";

class CapiGraphIoTest : public ::testing::Test {
 protected:
  void SetUp() override { context_ = gjtest::MakeContext(); }

  BuilderPtr Builder() {
    gj_graph_builder* raw = nullptr;
    EXPECT_TRUE(Ok(gj_graph_builder_create(context_.get(), "b", &raw)));
    return BuilderPtr(raw);
  }

  ContextPtr context_;
};

TEST_F(CapiGraphIoTest, ReadsWhatTheFileDeclares) {
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_text(context_.get(), kGraph, sizeof(kGraph) - 1,
                                    nullptr, &raw)));
  GraphPtr graph(raw);
  EXPECT_EQ(gj_graph_input_dtype(raw, 0), GJ_DTYPE_FLOAT32);
  EXPECT_EQ(gj_graph_input_rank(raw, 0), 3);
  EXPECT_EQ(gj_graph_input_dim(raw, 0, 0), -1);
  EXPECT_STREQ(gj_graph_input_dim_symbol(raw, 0, 0), "batch");
  EXPECT_EQ(gj_graph_input_dim(raw, 0, 1), 4);
  EXPECT_EQ(gj_graph_input_dim_symbol(raw, 0, 1), nullptr);
  EXPECT_EQ(gj_graph_input_dim(raw, 0, 2), -1);
  EXPECT_STREQ(gj_graph_input_dim_symbol(raw, 0, 2), "");
  // Out of range dims, inputs and graphs read as unknown.
  EXPECT_EQ(gj_graph_input_dim(raw, 0, 3), -1);
  EXPECT_EQ(gj_graph_input_dim_symbol(raw, 0, 3), nullptr);
  EXPECT_EQ(gj_graph_input_dtype(raw, 3), GJ_DTYPE_UNKNOWN);
  EXPECT_EQ(gj_graph_input_rank(raw, 3), -1);
  EXPECT_EQ(gj_graph_input_rank(nullptr, 0), -1);
  EXPECT_EQ(gj_graph_output_dtype(nullptr, 0), GJ_DTYPE_UNKNOWN);
  // An input without metadata, one with a dtype and no rank.
  EXPECT_EQ(gj_graph_input_dtype(raw, 1), GJ_DTYPE_UNKNOWN);
  EXPECT_EQ(gj_graph_input_rank(raw, 1), -1);
  EXPECT_EQ(gj_graph_input_dtype(raw, 2), GJ_DTYPE_INT64);
  EXPECT_EQ(gj_graph_input_rank(raw, 2), -1);

  EXPECT_EQ(gj_graph_output_dtype(raw, 0), GJ_DTYPE_FLOAT32);
  EXPECT_EQ(gj_graph_output_rank(raw, 0), 3);
  EXPECT_STREQ(gj_graph_output_dim_symbol(raw, 0, 0), "batch");
  EXPECT_EQ(gj_graph_output_dim(raw, 0, 1), 4);
  EXPECT_EQ(gj_graph_output_rank(raw, 1), -1);
  EXPECT_EQ(gj_graph_output_rank(raw, 2), -1);
}

TEST_F(CapiGraphIoTest, BuilderDeclaresInputsAndOutputs) {
  BuilderPtr builder = Builder();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(builder.get(), "x")));
  const int64_t dims[] = {-1, 8};
  const char* symbols[] = {"n", nullptr};
  ASSERT_TRUE(Ok(gj_graph_builder_set_input_info(
      builder.get(), "x", GJ_DTYPE_FLOAT16, 2, dims, symbols)));
  const char* outputs[] = {"x"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(builder.get(), outputs, 1)));
  const int64_t out_dims[] = {-1, -1};
  ASSERT_TRUE(Ok(gj_graph_builder_set_output_info(
      builder.get(), 0, GJ_DTYPE_FLOAT16, 2, out_dims, nullptr)));
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_builder_finish(builder.get(), &raw)));
  GraphPtr graph(raw);
  EXPECT_EQ(gj_graph_input_dtype(raw, 0), GJ_DTYPE_FLOAT16);
  EXPECT_STREQ(gj_graph_input_dim_symbol(raw, 0, 0), "n");
  EXPECT_EQ(gj_graph_input_dim(raw, 0, 1), 8);
  EXPECT_EQ(gj_graph_output_rank(raw, 0), 2);
  EXPECT_STREQ(gj_graph_output_dim_symbol(raw, 0, 1), "");
}

TEST_F(CapiGraphIoTest, BuilderErrorsNameTheInputOrOutput) {
  BuilderPtr builder = Builder();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(builder.get(), "x")));
  const int64_t dims[] = {2, -1};
  const char* bad_symbol[] = {nullptr, "not a name"};
  const char* static_symbol[] = {"m", nullptr};
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_input_info(
                  builder.get(), "q", GJ_DTYPE_FLOAT32, 2, dims, nullptr),
              GJ_INVALID_ARGUMENT,
              {"gj_graph_builder_set_input_info", "no input named 'q'"}));
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_input_info(
                  builder.get(), "x", GJ_DTYPE_FLOAT32, 2, dims, bad_symbol),
              GJ_INVALID_ARGUMENT, {"input 'x'", "dim 1", "'not a name'"}));
  EXPECT_TRUE(IsError(
      gj_graph_builder_set_input_info(builder.get(), "x", GJ_DTYPE_FLOAT32, 2,
                                      dims, static_symbol),
      GJ_INVALID_ARGUMENT, {"input 'x'", "static size 2 and the symbol 'm'"}));
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_input_info(
                  builder.get(), "x", GJ_DTYPE_FLOAT32, 2, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"dims is NULL with rank 2"}));
  EXPECT_TRUE(IsError(
      gj_graph_builder_set_input_info(
          builder.get(), "x", static_cast<gj_dtype>(99), -1, nullptr, nullptr),
      GJ_INVALID_ARGUMENT, {"dtype 99 is not a gj_dtype"}));
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_input_info(
                  builder.get(), "x", GJ_DTYPE_FLOAT32, -2, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"rank -2"}));
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_output_info(
                  builder.get(), 0, GJ_DTYPE_FLOAT32, -1, nullptr, nullptr),
              GJ_FAILED_PRECONDITION, {"after the outputs"}));
  const char* outputs[] = {"x"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(builder.get(), outputs, 1)));
  EXPECT_TRUE(
      IsError(gj_graph_builder_set_output_info(
                  builder.get(), 1, GJ_DTYPE_FLOAT32, -1, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"output 1 is out of range"}));
  // A failed call declared nothing.
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_builder_finish(builder.get(), &raw)));
  GraphPtr graph(raw);
  EXPECT_EQ(gj_graph_input_rank(raw, 0), -1);
  EXPECT_EQ(gj_graph_input_dtype(raw, 0), GJ_DTYPE_UNKNOWN);
}

TEST_F(CapiGraphIoTest, FinishChecksDeclaredOutputsAgainstStaticInputs) {
  BuilderPtr builder = Builder();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(builder.get(), "x")));
  const int64_t dims[] = {2, 3};
  ASSERT_TRUE(Ok(gj_graph_builder_set_input_info(
      builder.get(), "x", GJ_DTYPE_FLOAT32, 2, dims, nullptr)));
  const char* outputs[] = {"x"};
  ASSERT_TRUE(Ok(gj_graph_builder_set_outputs(builder.get(), outputs, 1)));
  const int64_t wrong[] = {3};
  ASSERT_TRUE(Ok(gj_graph_builder_set_output_info(
      builder.get(), 0, GJ_DTYPE_FLOAT32, 1, wrong, nullptr)));
  gj_graph* raw = nullptr;
  EXPECT_TRUE(IsError(gj_graph_builder_finish(builder.get(), &raw),
                      GJ_INVALID_ARGUMENT,
                      {"output 0 ('x') is declared float32[3] but the graph "
                       "computes float32[2, 3]"}));
  EXPECT_EQ(raw, nullptr);
}

}  // namespace
