#include "core/graph_loader.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"
#include "tests/sanitizers.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

GraphLoadOptions Toy() {
  GraphLoadOptions o;
  o.registry = &ToyOps();
  return o;
}

constexpr char kAddGraph[] = R"pb(
  name: "adder"
  placeholders {
    name: "x"
    meta {
      dtype: FLOAT32
      sizes: [ 2, 3 ]
    }
  }
  constants {
    name: "w"
    dtype: FLOAT32
    sizes: [ 2 ]
    data: "\000\000\200?\000\000\000@"
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "x" }
    args { ref: "w" }
    kwargs {
      key: "alpha"
      value { i: 2 }
    }
  }
  outputs { ref: "add" }
)pb";

TEST(GraphLoaderTest, LoadsTextFormat) {
  auto g = LoadGraphFromText(kAddGraph, Toy());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->name(), "adder");
  ASSERT_EQ((*g)->inputs().size(), 1u);
  const Node& w = (*g)->node((*g)->FindNode("w"));
  EXPECT_EQ(w.kind, NodeKind::kConstant);
  EXPECT_EQ(w.constant.data_as<float>()[0], 1.0f);
  EXPECT_EQ(w.constant.data_as<float>()[1], 2.0f);
  const Node& add = (*g)->node((*g)->FindNode("add"));
  EXPECT_EQ(add.args[2], Arg::Int(2));
  EXPECT_TRUE((*g)->node(0).meta.has_value());
}

TEST(GraphLoaderTest, BinaryRoundTrip) {
  proto::Graph p;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kAddGraph, &p));
  std::string bytes = p.SerializeAsString();
  auto g = LoadGraphFromBinary(bytes, Toy());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_ops(), 1);
}

TEST(GraphLoaderTest, MalformedInputsAreInvalidArgument) {
  auto bad_text = LoadGraphFromText("placeholders { name: ", Toy());
  EXPECT_EQ(bad_text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_text.status().message()), HasSubstr("line 1"));
  auto bad_bytes =
      LoadGraphFromBinary(std::string("\xff\xff\xff\xff\x0f", 5), Toy());
  EXPECT_EQ(bad_bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_bytes.status().message()),
              HasSubstr("malformed"));
}

// Runs `body` on a thread with a small stack, as hosts' worker threads often
// have (musl's default is 128 KiB); sanitizers' frames are several times
// larger, so they get more.
void OnSmallStack(const std::function<void()>& body) {
#if GJ_UNDER_SANITIZER
  constexpr size_t kStack = 2 << 20;
#else
  constexpr size_t kStack = 256 << 10;
#endif
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, kStack), 0);
  pthread_t thread;
  auto run = [](void* f) -> void* {
    (*static_cast<const std::function<void()>*>(f))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run,
                           const_cast<std::function<void()>*>(&body)),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

std::string NestedListGraph(int depth) {
  std::string text = R"(placeholders { name: "x" } nodes { name: "n" )"
                     R"(target: "aten.add.Tensor" args { ref: "x" } args )";
  for (int i = 0; i < depth; ++i) text += "{ list { items ";
  text += "{ i: 1 }";
  for (int i = 0; i < depth; ++i) text += " } }";
  return text + R"( } outputs { ref: "n" })";
}

// Subgraphs nested `depth` deep, each a graph returning its input.
std::string NestedSubgraphs(int depth) {
  constexpr char kIdentity[] =
      R"(placeholders { name: "x" } outputs { ref: "x" } )";
  std::string text;
  for (int i = 0; i < depth; ++i) text += R"(subgraphs { key: "g" value { )";
  text += kIdentity;
  for (int i = 0; i < depth; ++i) text += std::string("} } ") + kIdentity;
  return text;
}

TEST(GraphLoaderTest, DeeplyNestedInputsAreRejectedNotACrash) {
  // Thousands of levels used to overflow the stack in the text parser.
  for (const std::string& text : {NestedListGraph(4000), NestedSubgraphs(2500),
                                  NestedListGraph(40), NestedSubgraphs(40)}) {
    OnSmallStack([&] {
      auto g = LoadGraphFromText(text, Toy());
      EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(g.status().message()), HasSubstr("deep"));
    });
  }
  // The same nesting in binary (serialized here, on the main thread).
  proto::Graph deep;
  proto::Graph* g = &deep;
  for (int i = 0; i < 2500; ++i) g = &(*g->mutable_subgraphs())["g"];
  const std::string bytes = deep.SerializeAsString();
  OnSmallStack([&] {
    auto loaded = LoadGraphFromBinary(bytes, Toy());
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("64 levels"));
  });
}

TEST(GraphLoaderTest, NestingWithinTheLimitLoadsOnASmallStack) {
  // 25 nested lists (52 message levels with the node and its argument) are
  // within the limit of 64.
  OnSmallStack([&] {
    auto g = LoadGraphFromText(NestedListGraph(25), Toy());
    // The toy add rejects a list argument, naming the node; what matters is
    // that parsing got that far.
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("node 'n'"));
    auto subgraphs = LoadGraphFromText(NestedSubgraphs(30), Toy());
    EXPECT_TRUE(subgraphs.ok()) << subgraphs.status();
  });
}

struct BadGraph {
  const char* text;
  absl::StatusCode code;
  const char* message;
};

TEST(GraphLoaderTest, RejectsBadGraphsNamingTheCulprit) {
  const BadGraph cases[] = {
      {R"pb(placeholders { name: "x" }
            nodes {
              name: "y"
              target: "aten.nope.default"
              args { ref: "x" }
            }
            outputs { ref: "y" })pb",
       absl::StatusCode::kUnimplemented,
       "node 'y' (aten.nope.default): unknown target"},
      {R"pb(placeholders { name: "x" }
            nodes {
              name: "y"
              target: "aten.add.Tensor"
              args { ref: "x" }
              args { ref: "z" }
            }
            nodes {
              name: "z"
              target: "aten.add.Tensor"
              args { ref: "x" }
              args { ref: "x" }
            }
            outputs { ref: "z" })pb",
       absl::StatusCode::kInvalidArgument,
       "node 'y' (aten.add.Tensor): argument 'other' refers to 'z'"},
      {R"pb(placeholders { name: "x" }
            placeholders { name: "x" }
            outputs { ref: "x" })pb",
       absl::StatusCode::kInvalidArgument, "duplicate node name 'x'"},
      {R"pb(placeholders { name: "x" })pb", absl::StatusCode::kInvalidArgument,
       "has no outputs"},
      {R"pb(placeholders { name: "x" }
            nodes {
              name: "y"
              target: "aten.add.Tensor"
              args { ref: "x" }
              args {}
            }
            outputs { ref: "y" })pb",
       absl::StatusCode::kInvalidArgument, "node 'y': argument 1 has no value"},
      {R"pb(constants {
              name: "w"
              dtype: FLOAT32
              sizes: [ 2, 2 ]
              data: "abc"
            }
            outputs { ref: "w" })pb",
       absl::StatusCode::kInvalidArgument,
       "constant 'w': 3 bytes of data, expected 16 for float32[2, 2]"},
      {R"pb(constants {
              name: "w"
              sizes: [ 1 ]
              data: "a"
            }
            outputs { ref: "w" })pb",
       absl::StatusCode::kInvalidArgument,
       "constant 'w': dtype is unspecified"},
      {R"pb(constants {
              name: "w"
              dtype: INT8
              sizes: [ -1 ]
              data: ""
            }
            outputs { ref: "w" })pb",
       absl::StatusCode::kInvalidArgument, "constant 'w': negative size"},
      {R"pb(constants {
              name: "w"
              dtype: INT64
              sizes: [ 4611686018427387904, 4 ]
              data: ""
            }
            outputs { ref: "w" })pb",
       absl::StatusCode::kOutOfRange, "constant 'w'"},
      {R"pb(constants {
              name: "w"
              dtype: FLOAT32
              sizes: [ 2 ]
              external { path: "/nonexistent/w.bin" length: 8 }
            }
            outputs { ref: "w" })pb",
       absl::StatusCode::kNotFound, "constant 'w': cannot open external data"},
      {R"pb(placeholders { name: "x" }
            nodes {
              name: "y"
              target: "aten.add.Tensor"
              args { ref: "x" }
              args { ref: "x" }
              kwargs {
                key: "alpha"
                value { device: "tpu" }
              }
            }
            outputs { ref: "y" })pb",
       absl::StatusCode::kInvalidArgument, "unknown device 'tpu'"},
      {R"pb(subgraphs {
              key: "branch"
              value { placeholders { name: "a" } }
            }
            placeholders { name: "x" }
            outputs { ref: "x" })pb",
       absl::StatusCode::kInvalidArgument,
       "subgraph 'branch': graph 'graph' has no outputs"},
  };
  for (const BadGraph& c : cases) {
    SCOPED_TRACE(c.text);
    auto g = LoadGraphFromText(c.text, Toy());
    EXPECT_EQ(g.status().code(), c.code) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
  }
}

constexpr char kDynamicAddGraph[] = R"pb(
  name: "dyn"
  placeholders {
    name: "x"
    meta {
      dtype: FLOAT32
      dims { symbol: "batch" }
      dims { size: 3 }
    }
  }
  placeholders { name: "y" }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "x" }
    args { ref: "x" }
  }
  outputs { ref: "add" }
  outputs { ref: "y" }
  output_meta {
    dtype: FLOAT32
    dims { symbol: "batch" }
    dims { size: 3 }
  }
  output_meta {}
)pb";

TEST(GraphLoaderTest, KeepsInputAndOutputMetadata) {
  auto g = LoadGraphFromText(kDynamicAddGraph, Toy());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->input_spec(0).ToString(), "float32[batch, 3]");
  EXPECT_EQ((*g)->input_spec(1), IoSpec());
  EXPECT_EQ((*g)->output_spec(0).ToString(), "float32[batch, 3]");
  EXPECT_EQ((*g)->output_spec(1), IoSpec());
  // A dynamic dim leaves the placeholder without inference metadata.
  EXPECT_FALSE((*g)->node(0).meta.has_value());

  // Old files: `sizes` is a static declaration.
  auto old = LoadGraphFromText(kAddGraph, Toy());
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ((*old)->input_spec(0).ToString(), "float32[2, 3]");
  EXPECT_EQ((*old)->output_spec(0), IoSpec());
}

TEST(GraphLoaderTest, RejectsBadMetadataNamingTheValue) {
  const BadGraph cases[] = {
      {R"pb(placeholders {
              name: "x"
              meta { dims { symbol: "2batch" } }
            }
            outputs { ref: "x" })pb",
       absl::StatusCode::kInvalidArgument,
       "placeholder 'x': dim 0: symbol '2batch' is not an identifier"},
      {R"pb(placeholders {
              name: "x"
              meta {
                dtype: FLOAT32
                sizes: 2
                dims { size: 2 }
              }
            }
            outputs { ref: "x" })pb",
       absl::StatusCode::kInvalidArgument,
       "placeholder 'x': meta has both sizes"},
      {R"pb(placeholders { name: "x" }
            outputs { ref: "x" }
            output_meta { dtype: FLOAT32 }
            output_meta { dtype: FLOAT32 })pb",
       absl::StatusCode::kInvalidArgument, "2 output_meta for 1 outputs"},
      {R"pb(placeholders { name: "x" }
            outputs { ref: "x" }
            output_meta { dims { size: -3 } })pb",
       absl::StatusCode::kInvalidArgument,
       "output_meta 0: meta size -3 at dim 0 is negative"},
      // Declared outputs must agree with what inference computes when every
      // input is static: rank, then a static size, then the dtype.
      {R"pb(placeholders {
              name: "x"
              meta {
                dtype: FLOAT32
                sizes: [ 2, 3 ]
              }
            }
            nodes {
              name: "add"
              target: "aten.add.Tensor"
              args { ref: "x" }
              args { ref: "x" }
            }
            outputs { ref: "add" }
            output_meta {
              dtype: FLOAT32
              dims { symbol: "n" }
            })pb",
       absl::StatusCode::kInvalidArgument,
       "output 0 ('add') is declared float32[n] but the graph computes "
       "float32[2, 3]"},
      {R"pb(placeholders {
              name: "x"
              meta {
                dtype: FLOAT32
                sizes: [ 2, 3 ]
              }
            }
            outputs { ref: "x" }
            output_meta {
              dtype: FLOAT32
              sizes: [ 2, 4 ]
            })pb",
       absl::StatusCode::kInvalidArgument, "is declared float32[2, 4]"},
      {R"pb(placeholders {
              name: "x"
              meta {
                dtype: FLOAT32
                sizes: [ 2 ]
              }
            }
            outputs { ref: "x" }
            output_meta {
              dtype: INT64
              dims { symbol: "n" }
            })pb",
       absl::StatusCode::kInvalidArgument,
       "is declared int64[n] but the graph computes float32[2]"},
  };
  for (const BadGraph& c : cases) {
    SCOPED_TRACE(c.text);
    auto g = LoadGraphFromText(c.text, Toy());
    EXPECT_EQ(g.status().code(), c.code) << g.status();
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
  }
}

TEST(GraphLoaderTest, ExternalDataRelativeToTheFile) {
  auto dir = std::filesystem::temp_directory_path() / "gj_loader_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream bin(dir / "w.bin", std::ios::binary);
    const float values[] = {7.0f, 1.0f, 2.0f};  // offset 4 skips the 7
    bin.write(reinterpret_cast<const char*>(values), sizeof(values));
    std::ofstream txt(dir / "g.pbtxt");
    txt << R"pb(constants {
                  name: "w"
                  dtype: FLOAT32
                  sizes: [ 2 ]
                  external { path: "w.bin" offset: 4 length: 8 }
                }
                outputs { ref: "w" })pb";
  }
  auto g = LoadGraphFromFile((dir / "g.pbtxt").string(), Toy());
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor& w = (*g)->node(0).constant;
  EXPECT_EQ(w.data_as<float>()[0], 1.0f);
  EXPECT_EQ(w.data_as<float>()[1], 2.0f);

  {
    std::ofstream txt(dir / "short.pbtxt");
    txt << R"pb(constants {
                  name: "w"
                  dtype: FLOAT32
                  sizes: [ 4 ]
                  external { path: "w.bin" offset: 4 length: 16 }
                }
                outputs { ref: "w" })pb";
  }
  auto short_read = LoadGraphFromFile((dir / "short.pbtxt").string(), Toy());
  EXPECT_EQ(short_read.status().code(), absl::StatusCode::kDataLoss)
      << short_read.status();
  EXPECT_THAT(std::string(short_read.status().message()),
              HasSubstr("short.pbtxt"));

  auto missing = LoadGraphFromFile((dir / "missing.pbtxt").string(), Toy());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

// Constants are cut from one block (core/constant_arena.h) but each is a
// tensor of its own, as if allocated alone: its own storage, starting at it
// and holding its bytes (aten.as_strided and storage offsets see nothing of
// its neighbours), 64-byte aligned, with the values of the file and the text.
TEST(GraphLoaderTest, ConstantsHaveStoragesOfTheirOwn) {
  auto dir = std::filesystem::temp_directory_path() /
             ("gj_loader_arena_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream bin(dir / "w.bin", std::ios::binary);
    std::vector<float> values(1000);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * i;
    bin.write(reinterpret_cast<const char*>(values.data()),
              values.size() * sizeof(float));
    std::ofstream txt(dir / "g.pbtxt");
    txt << R"pb(constants {
                  name: "a"
                  dtype: FLOAT32
                  sizes: [ 3 ]
                  external { path: "w.bin" offset: 4 length: 12 }
                }
                constants {
                  name: "b"
                  dtype: INT8
                  sizes: [ 5 ]
                  data: "\001\002\003\004\005"
                }
                constants {
                  name: "e"
                  dtype: FLOAT32
                  sizes: [ 0 ]
                }
                constants {
                  name: "c"
                  dtype: FLOAT32
                  sizes: [ 10, 99 ]
                  external { path: "w.bin" offset: 40 length: 3960 }
                }
                outputs { ref: "a" })pb";
  }
  auto g = LoadGraphFromFile((dir / "g.pbtxt").string(), Toy());
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<const Tensor*> constants;
  for (int i = 0; i < 4; ++i) constants.push_back(&(*g)->node(i).constant);
  testing::ExpectStoragesOfTheirOwn(constants);
  const Tensor& a = (*g)->node(0).constant;
  const Tensor& b = (*g)->node(1).constant;
  const Tensor& c = (*g)->node(3).constant;
  EXPECT_EQ(a.data_as<float>()[0], 0.5f);
  EXPECT_EQ(a.data_as<float>()[2], 1.5f);
  EXPECT_EQ(b.data_as<int8_t>()[4], 5);
  EXPECT_EQ(c.data_as<float>()[0], 5.0f);
  EXPECT_EQ(c.data_as<float>()[989], 0.5f * 999);
  std::filesystem::remove_all(dir);
}

// External data in a pipe is read once, as the loader first locates it: a
// second open would wait for a writer that is gone. A pipe shorter than its
// constant declares is DATA_LOSS, not a wait.
TEST(GraphLoaderTest, ExternalDataFromAPipeIsReadOnce) {
  auto dir = std::filesystem::temp_directory_path() /
             ("gj_loader_pipe_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "w.fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  {
    std::ofstream txt(dir / "g.pbtxt");
    txt << R"pb(constants {
                  name: "b"
                  dtype: INT8
                  sizes: [ 2 ]
                  data: "ab"
                }
                constants {
                  name: "w"
                  dtype: FLOAT32
                  sizes: [ 2 ]
                  external { path: "w.fifo" offset: 4 length: 8 }
                }
                outputs { ref: "w" })pb";
  }
  const float values[] = {7.0f, 1.0f, 2.0f};
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  });
  auto g = LoadGraphFromFile((dir / "g.pbtxt").string(), Toy());
  writer.join();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->node(1).constant.data_as<float>()[0], 1.0f);
  EXPECT_EQ((*g)->node(1).constant.data_as<float>()[1], 2.0f);

  std::thread short_writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values), 8);
  });
  auto short_read = LoadGraphFromFile((dir / "g.pbtxt").string(), Toy());
  short_writer.join();
  EXPECT_EQ(short_read.status().code(), absl::StatusCode::kDataLoss)
      << short_read.status();
  EXPECT_THAT(std::string(short_read.status().message()),
              HasSubstr("constant 'w'"));
  std::filesystem::remove_all(dir);
}

// F9 (#19): the declared length is only checked against dtype x shape, so a
// few bytes of graph can declare 2^46 bytes of external data; the loader must
// compare it with the file before allocating (it used to allocate the
// declared length first: std::bad_alloc, or an ASan abort).
TEST(GraphLoaderTest, ExternalDataFarLongerThanTheFileFailsBeforeAllocating) {
  auto dir = std::filesystem::temp_directory_path() /
             ("gj_loader_huge_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream bin(dir / "tiny.bin", std::ios::binary);
    bin.write("0123456789ab", 12);
  }
  GraphLoadOptions options = Toy();
  options.external_data_dir = dir.string();
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      // 2^40 x 16 float32: 2^46 bytes (64 TiB) declared, 12 in the file.
      {R"pb(constants {
              name: "w"
              dtype: FLOAT32
              sizes: [ 1099511627776, 16 ]
              external { path: "tiny.bin" length: 70368744177664 }
            }
            outputs { ref: "w" })pb",
       "has 12 bytes at offset 0, expected 70368744177664"},
      // int8 [2^63 - 1]: the largest length dtype x shape allows.
      {R"pb(constants {
              name: "w"
              dtype: INT8
              sizes: [ 9223372036854775807 ]
              external {
                path: "tiny.bin"
                offset: 4
                length: 9223372036854775807
              }
            }
            outputs { ref: "w" })pb",
       "has 8 bytes at offset 4, expected 9223372036854775807"},
      // An offset past the end leaves nothing, whatever the length.
      {R"pb(constants {
              name: "w"
              dtype: FLOAT64
              sizes: [ 1073741824 ]
              external {
                path: "tiny.bin"
                offset: 4611686018427387904
                length: 8589934592
              }
            }
            outputs { ref: "w" })pb",
       "has 0 bytes at offset 4611686018427387904, expected 8589934592"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto g = LoadGraphFromText(c.text, options);
    EXPECT_EQ(g.status().code(), absl::StatusCode::kDataLoss) << g.status();
    EXPECT_THAT(std::string(g.status().message()),
                HasSubstr("constant 'w': external data '"));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr("tiny.bin"));
    EXPECT_THAT(std::string(g.status().message()), HasSubstr(c.message));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace guardjit
