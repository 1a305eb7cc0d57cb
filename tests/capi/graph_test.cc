// Loading graphs from protobuf (binary, text, files) and inspecting them.

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "core/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::ContextPtr;
using gjtest::Floats;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::ManagedPtr;
using gjtest::Ok;

// Two inputs and a float32 [2] weight `w` = {1.5, -2}, all returned as is.
constexpr char kGraphText[] = R"pb(
  name: "passthrough"
  placeholders {
    name: "x"
    meta { dtype: FLOAT32 sizes: 2 }
  }
  placeholders { name: "y" }
  constants {
    name: "w"
    dtype: FLOAT32
    sizes: 2
    data: "\x00\x00\xc0\x3f\x00\x00\x00\xc0"
  }
  outputs { ref: "y" }
  outputs { ref: "w" }
)pb";

std::string ToBinary(const std::string& text) {
  guardjit::proto::Graph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph));
  return graph.SerializeAsString();
}

std::string WriteFile(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

class CapiGraphTest : public ::testing::Test {
 protected:
  void SetUp() override { context_ = gjtest::MakeContext(); }

  gj_error* FromText(const std::string& text, GraphPtr* graph,
                     const gj_graph_load_options* options = nullptr) {
    gj_graph* raw = nullptr;
    gj_error* error = gj_graph_from_text(context_.get(), text.data(),
                                         text.size(), options, &raw);
    graph->reset(raw);
    return error;
  }

  // Runs a graph shaped like kGraphText and checks its outputs.
  void ExpectPassthrough(const gj_graph* graph) {
    ASSERT_NE(graph, nullptr);
    EXPECT_EQ(gj_graph_num_inputs(graph), 2u);
    EXPECT_EQ(gj_graph_num_outputs(graph), 2u);
    EXPECT_STREQ(gj_graph_input_name(graph, 0), "x");
    EXPECT_STREQ(gj_graph_input_name(graph, 1), "y");
    FunctionPtr function = gjtest::MakeFunction(context_.get(), graph);
    HostTensor<float> x({2}, {0, 0});
    HostTensor<float> y({3}, {7, 8, 9});
    const DLTensor* inputs[] = {x.dl(), y.dl()};
    DLManagedTensor* out[2] = {};
    ASSERT_TRUE(
        Ok(gj_function_call_alloc(function.get(), inputs, 2, nullptr, out, 2)));
    ManagedPtr out0(out[0]), out1(out[1]);
    EXPECT_EQ(Floats(out[0]->dl_tensor), (std::vector<float>{7, 8, 9}));
    EXPECT_EQ(Floats(out[1]->dl_tensor), (std::vector<float>{1.5f, -2.0f}));
  }

  ContextPtr context_;
};

// An ONNX ModelProto (protoc --encode=onnx.ModelProto of Debian's
// onnx.proto): ir_version 8, opset 13, y = Relu(x) over float32 [2, 3].
const char kReluOnnx[] =
    "\x08\x08\x3a\x3e\x0a\x0f\x0a\x01\x78\x12\x01\x79\x1a\x01\x72\x22\x04\x52"
    "\x65\x6c\x75\x12\x01\x67\x5a\x13\x0a\x01\x78\x12\x0e\x0a\x0c\x08\x01\x12"
    "\x08\x0a\x02\x08\x02\x0a\x02\x08\x03\x62\x13\x0a\x01\x79\x12\x0e\x0a\x0c"
    "\x08\x01\x12\x08\x0a\x02\x08\x02\x0a\x02\x08\x03\x42\x02\x10\x0d";

// gj_graph_load_options.format: detected by content unless named; a named
// format that the bytes are not is an error of that format, never the other
// loader's result; an unknown value and ONNX through the text loader are
// INVALID_ARGUMENT naming the option.
TEST_F(CapiGraphTest, LoadOptionsNameTheFormat) {
  const std::string onnx(kReluOnnx, sizeof(kReluOnnx) - 1);
  const std::string guardjit = ToBinary(kGraphText);
  gj_graph_load_options options;
  gj_graph_load_options_init(&options);
  EXPECT_EQ(options.format, GJ_GRAPH_FORMAT_DETECT);
  // The raw value: a host may pass one outside the enum (7 below), which
  // C++ may not load through the enum type.
  const auto load = [&](const std::string& bytes, int format, GraphPtr* graph) {
    std::memcpy(&options.format, &format, sizeof format);
    gj_graph* raw = nullptr;
    gj_error* error = gj_graph_from_proto(context_.get(), bytes.data(),
                                          bytes.size(), &options, &raw);
    graph->reset(raw);
    return error;
  };
  for (gj_graph_format format :
       {GJ_GRAPH_FORMAT_DETECT, GJ_GRAPH_FORMAT_ONNX}) {
    GraphPtr graph;
    ASSERT_TRUE(Ok(load(onnx, format, &graph)));
    EXPECT_EQ(gj_graph_num_inputs(graph.get()), 1u);
    FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
    HostTensor<float> x({2, 3}, {-1, 2, -3, 4, -5, 6});
    const DLTensor* inputs[] = {x.dl()};
    DLManagedTensor* out[1] = {};
    ASSERT_TRUE(
        Ok(gj_function_call_alloc(function.get(), inputs, 1, nullptr, out, 1)));
    ManagedPtr out0(out[0]);
    EXPECT_EQ(Floats(out[0]->dl_tensor),
              (std::vector<float>{0, 2, 0, 4, 0, 6}));
  }
  for (gj_graph_format format :
       {GJ_GRAPH_FORMAT_DETECT, GJ_GRAPH_FORMAT_GUARDJIT}) {
    GraphPtr graph;
    ASSERT_TRUE(Ok(load(guardjit, format, &graph)));
    ExpectPassthrough(graph.get());
  }
  GraphPtr graph;
  // Read as a guardjit graph, ONNX's fields are unknown ones: no outputs.
  EXPECT_TRUE(IsError(load(onnx, GJ_GRAPH_FORMAT_GUARDJIT, &graph),
                      GJ_INVALID_ARGUMENT, {"gj_graph_from_proto"}));
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(IsError(load(guardjit, GJ_GRAPH_FORMAT_ONNX, &graph),
                      GJ_INVALID_ARGUMENT, {"ONNX"}));
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(IsError(load(onnx, 7, &graph), GJ_INVALID_ARGUMENT,
                      {"gj_graph_from_proto", "options->format is 7"}));
  options.format = GJ_GRAPH_FORMAT_ONNX;
  EXPECT_TRUE(IsError(FromText(kGraphText, &graph, &options),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_from_text", "GJ_GRAPH_FORMAT_ONNX"}));
}

TEST_F(CapiGraphTest, FromText) {
  GraphPtr graph;
  ASSERT_TRUE(Ok(FromText(kGraphText, &graph)));
  ExpectPassthrough(graph.get());
}

TEST_F(CapiGraphTest, FromProto) {
  const std::string bytes = ToBinary(kGraphText);
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_from_proto(context_.get(), bytes.data(), bytes.size(),
                                     nullptr, &raw)));
  GraphPtr graph(raw);
  ExpectPassthrough(graph.get());
}

TEST_F(CapiGraphTest, FromFileByExtension) {
  for (const char* name : {"g.pbtxt", "g.txt"}) {
    std::string path = WriteFile(name, kGraphText);
    gj_graph* raw = nullptr;
    ASSERT_TRUE(
        Ok(gj_graph_from_file(context_.get(), path.c_str(), nullptr, &raw)));
    GraphPtr graph(raw);
    ExpectPassthrough(graph.get());
  }
  std::string path = WriteFile("g.pb", ToBinary(kGraphText));
  gj_graph* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_graph_from_file(context_.get(), path.c_str(), nullptr, &raw)));
  GraphPtr graph(raw);
  ExpectPassthrough(graph.get());
  // Text under a binary name is not parsed as text.
  path = WriteFile("text_as.pb", kGraphText);
  EXPECT_TRUE(
      IsError(gj_graph_from_file(context_.get(), path.c_str(), nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"gj_graph_from_file", "text_as.pb"}));
}

TEST_F(CapiGraphTest, MissingFileIsNotFound) {
  gj_graph* raw = reinterpret_cast<gj_graph*>(0x1);
  EXPECT_TRUE(IsError(
      gj_graph_from_file(context_.get(), "/nonexistent/g.pbtxt", nullptr, &raw),
      GJ_NOT_FOUND, {"/nonexistent/g.pbtxt"}));
  EXPECT_EQ(raw, nullptr);
}

TEST_F(CapiGraphTest, ExternalDataResolvesAgainstFileDirOrOption) {
  const float w[] = {1.5f, -2.0f};
  WriteFile("w.bin", std::string("pad") +
                         std::string(reinterpret_cast<const char*>(w), 8));
  const std::string text = R"pb(
    name: "passthrough"
    placeholders { name: "x" }
    placeholders { name: "y" }
    constants {
      name: "w"
      dtype: FLOAT32
      sizes: 2
      external { path: "w.bin" offset: 3 length: 8 }
    }
    outputs { ref: "y" }
    outputs { ref: "w" }
  )pb";
  std::string path = WriteFile("ext.pbtxt", text);
  gj_graph* raw = nullptr;
  ASSERT_TRUE(
      Ok(gj_graph_from_file(context_.get(), path.c_str(), nullptr, &raw)));
  GraphPtr from_file(raw);
  ExpectPassthrough(from_file.get());

  gj_graph_load_options options;
  gj_graph_load_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_graph_load_options));
  EXPECT_EQ(options.external_data_dir, nullptr);
  const std::string dir = ::testing::TempDir();
  options.external_data_dir = dir.c_str();
  GraphPtr from_text;
  ASSERT_TRUE(Ok(FromText(text, &from_text, &options)));
  ExpectPassthrough(from_text.get());

  options.external_data_dir = "/nonexistent";
  EXPECT_TRUE(IsError(FromText(text, &from_text, &options), GJ_NOT_FOUND,
                      {"constant 'w'", "w.bin"}));
}

TEST_F(CapiGraphTest, LoadErrorsNameTheCulprit) {
  GraphPtr graph;
  EXPECT_TRUE(IsError(FromText("name: \"g\"\nbogus_field: 1\n", &graph),
                      GJ_INVALID_ARGUMENT, {"gj_graph_from_text", "line 2"}));
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(IsError(FromText(R"pb(
                                 placeholders { name: "x" }
                                 nodes {
                                   name: "n"
                                   target: "aten.no_such_op.default"
                                   args { ref: "x" }
                                 }
                                 outputs { ref: "n" })pb",
                               &graph),
                      GJ_UNIMPLEMENTED,
                      {"node 'n'", "aten.no_such_op.default"}));
  EXPECT_TRUE(IsError(FromText(R"pb(placeholders { name: "x" }
                                    outputs { ref: "z" })pb",
                               &graph),
                      GJ_INVALID_ARGUMENT, {"'z'", "not defined"}));
  EXPECT_TRUE(IsError(FromText(R"pb(placeholders { name: "x" })pb", &graph),
                      GJ_INVALID_ARGUMENT, {"no outputs"}));
  EXPECT_TRUE(IsError(
      FromText(R"pb(constants { name: "w" dtype: FLOAT32 sizes: 3 data: "abc" }
                    outputs { ref: "w" })pb",
               &graph),
      GJ_INVALID_ARGUMENT, {"constant 'w'", "3 bytes", "expected 12"}));
  const char garbage[] = "\xff\xff\xff\xff";
  gj_graph* raw = nullptr;
  EXPECT_TRUE(
      IsError(gj_graph_from_proto(context_.get(), garbage, 4, nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"gj_graph_from_proto", "malformed"}));
}

TEST_F(CapiGraphTest, NullParameters) {
  gj_graph* raw = reinterpret_cast<gj_graph*>(0x1);
  const char* text = kGraphText;
  const size_t size = std::strlen(text);
  EXPECT_TRUE(IsError(gj_graph_from_text(nullptr, text, size, nullptr, &raw),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_from_text", "context is NULL"}));
  EXPECT_EQ(raw, nullptr);
  EXPECT_TRUE(
      IsError(gj_graph_from_text(context_.get(), text, size, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"out_graph is NULL"}));
  EXPECT_TRUE(
      IsError(gj_graph_from_text(context_.get(), nullptr, 5, nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"text is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_from_proto(nullptr, text, size, nullptr, &raw),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_from_proto", "context is NULL"}));
  EXPECT_TRUE(
      IsError(gj_graph_from_proto(context_.get(), nullptr, 5, nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"data is NULL"}));
  EXPECT_TRUE(
      IsError(gj_graph_from_proto(context_.get(), text, size, nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"out_graph is NULL"}));
  EXPECT_TRUE(IsError(gj_graph_from_file(nullptr, "g.pbtxt", nullptr, &raw),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_from_file", "context is NULL"}));
  EXPECT_TRUE(
      IsError(gj_graph_from_file(context_.get(), nullptr, nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"path is NULL"}));
  EXPECT_TRUE(
      IsError(gj_graph_from_file(context_.get(), "g.pbtxt", nullptr, nullptr),
              GJ_INVALID_ARGUMENT, {"out_graph is NULL"}));
  // Empty input is an empty (output-less) graph, not a NULL-pointer error.
  EXPECT_TRUE(
      IsError(gj_graph_from_proto(context_.get(), nullptr, 0, nullptr, &raw),
              GJ_INVALID_ARGUMENT, {"no outputs"}));
  gj_graph_load_options_init(nullptr);
  gj_graph_destroy(nullptr);
  EXPECT_EQ(gj_graph_num_inputs(nullptr), 0u);
  EXPECT_EQ(gj_graph_num_outputs(nullptr), 0u);
  EXPECT_EQ(gj_graph_input_name(nullptr, 0), nullptr);
}

TEST_F(CapiGraphTest, LoadOptionsStructSize) {
  gj_graph_load_options options;
  gj_graph_load_options_init(&options);
  options.struct_size = 0;
  GraphPtr graph;
  EXPECT_TRUE(IsError(FromText(kGraphText, &graph, &options),
                      GJ_INVALID_ARGUMENT,
                      {"struct_size", "gj_graph_load_options_init"}));
  // A host whose struct ends before external_data_dir: the garbage there is
  // never read.
  options.struct_size = sizeof(size_t);
  options.external_data_dir = reinterpret_cast<const char*>(0x1);
  ASSERT_TRUE(Ok(FromText(kGraphText, &graph, &options)));
  ExpectPassthrough(graph.get());
}

TEST_F(CapiGraphTest, Tabular) {
  GraphPtr graph;
  ASSERT_TRUE(Ok(FromText(kGraphText, &graph)));
  char* text = reinterpret_cast<char*>(0x1);
  ASSERT_TRUE(Ok(gj_graph_to_tabular(graph.get(), &text)));
  ASSERT_NE(text, nullptr);
  const std::string table = text;
  gj_string_destroy(text);
  for (const char* part :
       {"opcode", "placeholder", "get_attr", "output", "x", "w"}) {
    EXPECT_NE(table.find(part), std::string::npos) << part << " in\n" << table;
  }
  EXPECT_TRUE(IsError(gj_graph_to_tabular(graph.get(), nullptr),
                      GJ_INVALID_ARGUMENT,
                      {"gj_graph_to_tabular", "out_text is NULL"}));
  text = reinterpret_cast<char*>(0x1);
  EXPECT_TRUE(IsError(gj_graph_to_tabular(nullptr, &text), GJ_INVALID_ARGUMENT,
                      {"graph is NULL"}));
  EXPECT_EQ(text, nullptr);
}

}  // namespace
