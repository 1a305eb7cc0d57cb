// The bad-input catalogue's cases for the graph loaders: text, binary, file
// (run by bad_input_catalogue_test.cc).

#include <string>
#include <vector>

#include "bad_input_catalogue.h"
#include "core/graph.pb.h"
#include "google/protobuf/text_format.h"

namespace gjtest::catalogue {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

// A length-delimited protobuf field.
std::string Field(int number, const std::string& payload) {
  return Varint((static_cast<uint64_t>(number) << 3) | 2) +
         Varint(payload.size()) + payload;
}

std::string Binary(const std::string& text) {
  guardjit::proto::Graph graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &graph))
      << text;
  return graph.SerializeAsString();
}

}  // namespace

std::vector<Case> LoaderCases() {
  return {
      // Text syntax: the message gives the line.
      {"text: unterminated string on line 3",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p,
                       "name: \"g\"\nplaceholders { name: \"x\" }\n"
                       "outputs { ref: \"x }\n");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "malformed graph text", "line 3"}},
      {"text: a number where a string belongs, line 2",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p,
                       "name: \"g\"\nplaceholders { name: 12 }\n"
                       "outputs { ref: \"x\" }\n");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 2", "string"}},
      {"text: unknown enum value on line 2",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p,
                       "placeholders { name: \"x\" }\n"
                       "constants { name: \"w\" dtype: FLOAT33 }\n"
                       "outputs { ref: \"x\" }\n");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 2", "FLOAT33"}},
      {"text: a missing close brace is found on line 4",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p,
                       "placeholders { name: \"x\" }\n"
                       "nodes { name: \"n\" target: \"aten.relu.default\"\n"
                       "  args { ref: \"x\" }\n"
                       "outputs { ref: \"n\" }\n");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 4", "outputs"}},
      {"text: size cuts the text inside line 2",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         const std::string text =
             "placeholders { name: \"x\" }\noutputs { ref: \"x\" }\n";
         return gj_graph_from_text(e.ctx.get(), text.data(), text.size() - 6,
                                   nullptr, p.OutGraph());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 2"}},
      {"text: a NUL byte inside the given size, line 2",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(
             p, std::string("name: \"g\"\n\0outputs { ref: \"x\" }", 32));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 2"}},
      {"text: lists nested past the depth limit",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         std::string text = "outputs { ";
         for (int i = 0; i < 100; ++i) text += "list { items { ";
         for (int i = 0; i < 100; ++i) text += "} } ";
         text += "}";
         return e.Text(p, text);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "line 1"}},
      // Text semantics: the message names the node, constant or output.
      {"text: duplicate node name",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "x"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "x" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "duplicate", "'x'"}},
      {"text: a node refers to a later node",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "first"
                                 target: "aten.relu.default"
                                 args { ref: "second" }
                               }
                               nodes {
                                 name: "second"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "first" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'first'", "argument 'self'", "'second'", "not defined"}},
      {"text: an argument with no value",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "n"
                                 target: "aten.relu.default"
                                 args {}
                               }
                               outputs { ref: "n" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'n'", "argument 0", "no value"}},
      {"text: a str where mm wants a Tensor",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "prod"
                                 target: "aten.mm.default"
                                 args { ref: "x" }
                                 args { s: "x" }
                               }
                               outputs { ref: "prod" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "argument 'mat2'", "expected Tensor", "str"}},
      {"text: an unspecified dtype argument",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "cast"
                                 target: "aten._to_copy.default"
                                 args { ref: "x" }
                                 kwargs {
                                   key: "dtype"
                                   value { dtype: DTYPE_UNSPECIFIED }
                                 }
                               }
                               outputs { ref: "cast" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'cast'", "'dtype'", "unspecified"}},
      {"text: an unknown device argument",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "moved"
                                 target: "aten._to_copy.default"
                                 args { ref: "x" }
                                 kwargs {
                                   key: "device"
                                   value { device: "tpu:0" }
                                 }
                               }
                               outputs { ref: "moved" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'moved'", "'device'", "unknown device 'tpu:0'"}},
      {"text: an unexpected keyword argument",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "act"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                                 kwargs {
                                   key: "beta"
                                   value { i: 1 }
                                 }
                               }
                               outputs { ref: "act" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'act'", "unexpected keyword argument 'beta'"}},
      {"text: too many positional arguments",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "act"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                                 args { ref: "x" }
                               }
                               outputs { ref: "act" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'act'", "positional", "2 were given"}},
      {"text: an empty target",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "n"
                                 target: ""
                                 args { ref: "x" }
                               }
                               outputs { ref: "n" })pb");
       },
       GJ_UNIMPLEMENTED,
       {"gj_graph_from_text", "node 'n'", "unknown target ''"}},
      {"text: getitem on a node with one value",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "act"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               nodes {
                                 name: "first"
                                 target: "getitem"
                                 args { ref: "act" }
                                 args { i: 0 }
                               }
                               outputs { ref: "first" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'first'", "index 0 out of range", "'act'"}},
      {"text: an output that returns several values",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p,
                       std::string(kSplitText) + "outputs { ref: \"parts\" }");
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "'parts'", "getitem"}},
      {"text: an output that is not a value",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(name: "g"
                               placeholders { name: "x" }
                               outputs { i: 3 })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"graph 'g'", "output 0", "must refer to a value"}},
      {"text: cond names a subgraph the graph lacks",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "branch"
                                 target: "higher_order.cond"
                                 args { b: true }
                                 args { subgraph: "yes" }
                                 args { subgraph: "no" }
                                 args { list { items { ref: "x" } } }
                               }
                               outputs { ref: "x" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'branch'", "subgraph 'yes'"}},
      {"text: the error inside a subgraph names it",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               subgraphs {
                                 key: "body"
                                 value {
                                   placeholders { name: "y" }
                                   outputs { ref: "missing" }
                                 }
                               }
                               outputs { ref: "x" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"subgraph 'body'", "'missing'"}},
      {"text: placeholder metas mm cannot multiply",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders {
                                 name: "lhs"
                                 meta { dtype: FLOAT32 sizes: 2 sizes: 3 }
                               }
                               placeholders {
                                 name: "rhs"
                                 meta { dtype: FLOAT32 sizes: 4 sizes: 5 }
                               }
                               nodes {
                                 name: "prod"
                                 target: "aten.mm.default"
                                 args { ref: "lhs" }
                                 args { ref: "rhs" }
                               }
                               outputs { ref: "prod" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "cannot be multiplied", "2x3"}},
      {"text: a constant without a dtype",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(constants { name: "w" sizes: 1 data: "abcd" }
                               outputs { ref: "w" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "dtype is unspecified"}},
      {"text: a constant with a negative size",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(
             p, R"pb(constants { name: "w" dtype: FLOAT32 sizes: -2 data: "" }
                     outputs { ref: "w" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "negative size -2"}},
      {"text: external data length is not dtype x shape",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.external_data_dir = e.dir.c_str();
         return e.Text(p,
                       R"pb(constants {
                              name: "w"
                              dtype: FLOAT32
                              sizes: 2
                              external { path: "w.bin" length: 4 }
                            }
                            outputs { ref: "w" })pb",
                       &o);
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "external data length 4", "8 bytes"}},
      {"text: external data at a negative offset",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.external_data_dir = e.dir.c_str();
         return e.Text(p,
                       R"pb(constants {
                              name: "w"
                              dtype: FLOAT32
                              sizes: 2
                              external { path: "w.bin" offset: -4 length: 8 }
                            }
                            outputs { ref: "w" })pb",
                       &o);
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "negative external data offset"}},
      {"text: a keyword argument with no value",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "add"
                                 target: "aten.add.Tensor"
                                 args { ref: "x" }
                                 args { ref: "x" }
                                 kwargs {
                                   key: "alpha"
                                   value {}
                                 }
                               }
                               outputs { ref: "add" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'add'", "argument 'alpha'", "no value"}},
      {"text: a list item with no value",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: "total"
                                 target: "aten.sum.dim_IntList"
                                 args { ref: "x" }
                                 args {
                                   list {
                                     items { i: 0 }
                                     items {}
                                   }
                                 }
                               }
                               outputs { ref: "total" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"node 'total'", "argument 1[1]", "no value"}},
      // Binary.
      {"proto: truncated inside a field",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         const std::string whole = Binary(R"pb(name: "g"
                                               placeholders { name: "x" })pb");
         return e.Proto(p, whole.substr(0, whole.size() - 3));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "malformed"}},
      {"proto: field number 0",
       Kind::kLoad,
       [](Env& e, Probe& p) { return e.Proto(p, std::string("\x02\x00", 2)); },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "malformed", "2 bytes"}},
      {"proto: an overlong varint",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Proto(p, "\x10" + std::string(11, '\xff'));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "malformed"}},
      {"proto: messages nested past the depth limit",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         std::string arg;
         for (int i = 0; i < 100; ++i) arg = Field(6, Field(1, arg));
         return e.Proto(p, Field(5, arg));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "malformed", "64"}},
      {"proto: invalid UTF-8 in a string field",
       Kind::kLoad,
       [](Env& e, Probe& p) { return e.Proto(p, Field(1, "\xff\xfe")); },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "malformed", "UTF-8", "Graph.name"}},
      {"proto: a constant dtype past the enum",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Proto(
             p, Field(3, Field(1, "k") + "\x10\x63") + Field(5, Field(1, "k")));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "constant 'k'", "99"}},
      {"proto: unknown target",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Proto(p, Binary(R"pb(placeholders { name: "x" }
                                       nodes {
                                         name: "mystery"
                                         target: "aten.nope.default"
                                         args { ref: "x" }
                                       }
                                       outputs { ref: "mystery" })pb"));
       },
       GJ_UNIMPLEMENTED,
       {"gj_graph_from_proto", "node 'mystery'", "aten.nope.default"}},
      {"proto: constant bytes do not match dtype x shape",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Proto(p, Binary(R"pb(constants {
                                         name: "w"
                                         dtype: INT64
                                         sizes: 2
                                         data: "12345678"
                                       }
                                       outputs { ref: "w" })pb"));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "constant 'w'", "8 bytes", "expected 16"}},
      {"proto: external data dir does not exist",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.external_data_dir = "/nonexistent-gj-catalogue";
         return e.Proto(p, Binary(R"pb(constants {
                                         name: "w"
                                         dtype: FLOAT32
                                         sizes: 2
                                         external { path: "w.bin" length: 8 }
                                       }
                                       outputs { ref: "w" })pb"),
                        &o);
       },
       GJ_NOT_FOUND,
       {"gj_graph_from_proto", "constant 'w'", "/nonexistent-gj-catalogue"}},
      {"proto: load options struct_size 0",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.struct_size = 0;
         return e.Proto(p, Binary(R"pb(placeholders { name: "x" }
                                       outputs { ref: "x" })pb"),
                        &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_proto", "options->struct_size is 0",
        "gj_graph_load_options_init"}},
      // Files.
      {"file: empty path",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return gj_graph_from_file(e.ctx.get(), "", nullptr, p.OutGraph());
       },
       GJ_NOT_FOUND,
       {"gj_graph_from_file", "''"}},
      {"file: a directory",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         const std::string path = e.dir + "/a_directory.pb";
         return gj_graph_from_file(e.ctx.get(), path.c_str(), nullptr,
                                   p.OutGraph());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_file", "a_directory.pb"}},
      {"file: .pbtxt with an error on line 2",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.File(p, "bad_line.pbtxt",
                       "placeholders { name: \"x\" }\noutputs { ref: x }\n");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_file", "bad_line.pbtxt", "line 2"}},
      {"file: .txt holding binary bytes",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.File(p, "binary.txt", Binary(R"pb(placeholders { name: "x" }
                                                    outputs { ref: "x" })pb"));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_file", "binary.txt", "line 1"}},
      {"file: .pb holding garbage",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.File(p, "garbage.pb", std::string("\x0a\xff\xff\xff\x0f", 5));
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_file", "garbage.pb", "malformed"}},
      {"file: external data missing beside the file",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.File(p, "needs_missing.pbtxt",
                       R"pb(constants {
                              name: "w"
                              dtype: FLOAT32
                              sizes: 2
                              external { path: "missing.bin" length: 8 }
                            }
                            outputs { ref: "w" })pb");
       },
       GJ_NOT_FOUND,
       {"gj_graph_from_file", "needs_missing.pbtxt", "constant 'w'",
        "missing.bin"}},
      {"file: load options struct_size 1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.struct_size = 1;
         return e.File(p, "fine.pbtxt",
                       "placeholders { name: \"x\" } outputs { ref: \"x\" }",
                       &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_file", "options->struct_size is 1",
        "gj_graph_load_options_init"}},
  };
}

}  // namespace gjtest::catalogue
