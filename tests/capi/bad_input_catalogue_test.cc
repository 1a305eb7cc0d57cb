// A catalogue of bad inputs (issue #19): for the graph loaders, the builder,
// every options struct and the calls, each case gives the code the header
// promises and the parts of the message that name what is at fault (the
// argument, the input or output with its index and name, the node, the option
// field, the line of the text). For every case the message is also non-empty,
// bounded (4 KiB and the "(N more bytes)" tail), free of raw newlines, and
// nothing was written: out-parameters are NULL and caller-provided output
// buffers keep the sentinel they were filled with.
//
// KnownGapCases() holds what the catalogue found the library getting wrong
// when it was written, kept as the header says and fixed since; the test
// BadInputCatalogue.FormerGaps runs them.
//
// GJ_CATALOGUE_TRACE=1 prints each label before its case runs (to find the
// case of a crash) and the code and message it got.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "core/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::BuilderPtr;
using gjtest::CodeName;
using gjtest::ContextPtr;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::Ok;

constexpr size_t kMaxMessageBytes = 4096 + 40;
constexpr unsigned char kSentinel = 0xa5;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();

// What a case may write: caller-owned buffers that must keep the sentinel,
// and out-parameters that must be NULL after an error. Owns the tensors a
// case makes, so they live until the checks.
class Probe {
 public:
  Probe() = default;
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  ~Probe() {
    for (DLManagedTensor* t : tensors_) gj_tensor_release(t);
  }

  // A tensor over `values`, kept alive for the case.
  template <typename T>
  HostTensor<T>& Tensor(std::vector<int64_t> shape, std::vector<T> values,
                        std::vector<int64_t> strides = {}) {
    auto t = std::make_shared<HostTensor<T>>(
        std::move(shape), std::move(values), std::move(strides));
    keep_.push_back(t);
    return *t;
  }
  HostTensor<float>& Floats(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) + 1;
    return Tensor<float>(std::move(shape), std::move(values));
  }

  // A caller-provided output over `elements` items (0: the shape's), filled
  // with the sentinel and checked afterwards.
  template <typename T>
  HostTensor<T>& Output(std::vector<int64_t> shape,
                        std::vector<int64_t> strides = {},
                        size_t elements = 0) {
    if (elements == 0) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      elements = n > 0 ? static_cast<size_t>(n) : 1;
    }
    HostTensor<T>& t = Tensor<T>(std::move(shape), std::vector<T>(elements),
                                 std::move(strides));
    Watch(t.buffer().data(), elements * sizeof(T));
    return t;
  }

  void Watch(void* data, size_t bytes) {
    std::memset(data, kSentinel, bytes);
    watched_.push_back({static_cast<unsigned char*>(data), bytes});
  }

  // Out-parameters, filled with a non-NULL value the library must clear.
  gj_graph** OutGraph() { return Slot(&graph_); }
  gj_function** OutFunction() { return Slot(&function_); }
  gj_context** OutContext() { return Slot(&context_); }
  gj_graph_builder** OutBuilder() { return Slot(&builder_); }
  DLManagedTensor** OutTensors(size_t n) {
    tensors_.assign(n, Garbage<DLManagedTensor>());
    watches_out_ = true;
    return tensors_.data();
  }

  bool watches_outputs() const { return watches_out_ || !watched_.empty(); }

  // What was written though the call failed; releases whatever a case that
  // should have failed made.
  std::vector<std::string> Violations() {
    std::vector<std::string> found;
    for (const auto& [data, bytes] : watched_) {
      for (size_t i = 0; i < bytes; ++i) {
        if (data[i] != kSentinel) {
          found.push_back("an output buffer was written (byte " +
                          std::to_string(i) + " of " + std::to_string(bytes) +
                          ")");
          break;
        }
      }
    }
    CheckSlot(&graph_, "out_graph", gj_graph_destroy, found);
    CheckSlot(&function_, "out_function", gj_function_destroy, found);
    CheckSlot(&context_, "out_context", gj_context_destroy, found);
    CheckSlot(&builder_, "out_builder", gj_graph_builder_destroy, found);
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (tensors_[i] == nullptr) continue;
      found.push_back("out_outputs[" + std::to_string(i) + "] is not NULL");
      if (tensors_[i] != Garbage<DLManagedTensor>())
        gj_tensor_release(tensors_[i]);
      tensors_[i] = nullptr;
    }
    return found;
  }

 private:
  template <typename T>
  static T* Garbage() {
    return reinterpret_cast<T*>(uintptr_t{0x1});
  }
  template <typename T>
  T** Slot(std::pair<bool, T*>* slot) {
    *slot = {true, Garbage<T>()};
    return &slot->second;
  }
  template <typename T>
  static void CheckSlot(std::pair<bool, T*>* slot, const char* name,
                        void (*destroy)(T*), std::vector<std::string>& found) {
    if (!slot->first || slot->second == nullptr) return;
    if (slot->second == Garbage<T>()) {
      found.push_back(std::string(name) + " was not set to NULL");
    } else {
      found.push_back(std::string(name) + " was written");
      destroy(slot->second);
    }
    slot->second = nullptr;
  }

  std::vector<std::shared_ptr<void>> keep_;
  std::vector<std::pair<unsigned char*, size_t>> watched_;
  std::pair<bool, gj_graph*> graph_{false, nullptr};
  std::pair<bool, gj_function*> function_{false, nullptr};
  std::pair<bool, gj_context*> context_{false, nullptr};
  std::pair<bool, gj_graph_builder*> builder_{false, nullptr};
  std::vector<DLManagedTensor*> tensors_;
  bool watches_out_ = false;
};

FunctionPtr CreateFunction(gj_context* context, const gj_graph* graph,
                           const gj_function_options* options = nullptr) {
  gj_function* f = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(context, graph, options, &f)));
  return FunctionPtr(f);
}

// One graph node of a single op over the named inputs.
template <typename Build>
GraphPtr OpGraph(gj_context* context, const char* name,
                 std::initializer_list<const char*> inputs, const char* node,
                 Build build) {
  return gjtest::BuildGraph(context, name, inputs, build, {node});
}

std::string WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

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

// Everything the cases share: a context per backend, functions over small
// graphs, a directory for files.
struct Env {
  Env() {
    ctx = gjtest::MakeContext();
    eager = gjtest::MakeContext(GJ_BACKEND_EAGER);
    gj_context* c = ctx.get();
    // identity(a, b) -> (a, b)
    graphs.push_back(gjtest::IdentityGraph(c, {"a", "b"}));
    id = CreateFunction(c, graphs.back().get());
    // matmul(lhs, rhs) -> prod = mm(lhs, rhs)
    graphs.push_back(
        OpGraph(c, "matmul", {"lhs", "rhs"}, "prod", [](gj_graph_builder* b) {
          gj_arg a[] = {gj_arg_ref("lhs"), gj_arg_ref("rhs")};
          EXPECT_TRUE(Ok(
              gj_graph_builder_add_node(b, "prod", "aten.mm.default", a, 2)));
        }));
    mm = CreateFunction(c, graphs.back().get());
    // lookup(table, ids) -> rows = embedding(table, ids)
    auto lookup = [](gj_graph_builder* b) {
      gj_arg a[] = {gj_arg_ref("table"), gj_arg_ref("ids")};
      EXPECT_TRUE(Ok(gj_graph_builder_add_node(
          b, "rows", "aten.embedding.default", a, 2)));
    };
    graphs.push_back(OpGraph(c, "lookup", {"table", "ids"}, "rows", lookup));
    embed = CreateFunction(c, graphs.back().get());
    graphs.push_back(
        OpGraph(eager.get(), "lookup", {"table", "ids"}, "rows", lookup));
    embed_eager = CreateFunction(eager.get(), graphs.back().get());
    // adder(x, y) -> sum_xy = x + y
    graphs.push_back(
        OpGraph(c, "adder", {"x", "y"}, "sum_xy", [](gj_graph_builder* b) {
          gj_arg a[] = {gj_arg_ref("x"), gj_arg_ref("y")};
          EXPECT_TRUE(Ok(
              gj_graph_builder_add_node(b, "sum_xy", "aten.add.Tensor", a, 2)));
        }));
    add = CreateFunction(c, graphs.back().get());
    // joiner(p, q) -> joined = cat([p, q], 1)
    graphs.push_back(
        OpGraph(c, "joiner", {"p", "q"}, "joined", [](gj_graph_builder* b) {
          const char* parts[] = {"p", "q"};
          gj_arg a[] = {gj_arg_refs(parts, 2), gj_arg_int(1)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(b, "joined",
                                                   "aten.cat.default", a, 2)));
        }));
    cat = CreateFunction(c, graphs.back().get());
    // reshaper(v) -> reshaped = v.view(-1, 5)
    graphs.push_back(
        OpGraph(c, "reshaper", {"v"}, "reshaped", [](gj_graph_builder* b) {
          const int64_t size[] = {-1, 5};
          gj_arg a[] = {gj_arg_ref("v"), gj_arg_ints(size, 2)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(b, "reshaped",
                                                   "aten.view.default", a, 2)));
        }));
    view = CreateFunction(c, graphs.back().get());
    // reducer(s) -> total = s.sum(dim=[1])
    graphs.push_back(
        OpGraph(c, "reducer", {"s"}, "total", [](gj_graph_builder* b) {
          const int64_t dims[] = {1};
          gj_arg a[] = {gj_arg_ref("s"), gj_arg_ints(dims, 1)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "total", "aten.sum.dim_IntList", a, 2)));
        }));
    sum = CreateFunction(c, graphs.back().get());
    // activation(r) -> act = relu(r)
    graphs.push_back(OpGraph(c, "activation", {"r"}, "act", ReluNode));
    relu = CreateFunction(c, graphs.back().get());

    dir = ::testing::TempDir() + "/bad_input_catalogue_" +
          std::to_string(static_cast<long>(::getpid()));
    std::filesystem::create_directories(dir + "/a_directory.pb");
    // 8 bytes: float32 {1.5, -2}.
    WriteFile(dir + "/w.bin",
              std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0", 8));
  }
  ~Env() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  static void ReluNode(gj_graph_builder* b) {
    gj_arg a[] = {gj_arg_ref("r")};
    EXPECT_TRUE(
        Ok(gj_graph_builder_add_node(b, "act", "aten.relu.default", a, 1)));
  }

  // A fresh activation(r) function (its first call is a miss) with options.
  FunctionPtr FreshRelu(const gj_function_options* options = nullptr) {
    graphs.push_back(OpGraph(ctx.get(), "activation", {"r"}, "act", ReluNode));
    return CreateFunction(ctx.get(), graphs.back().get(), options);
  }

  // identity(a, b) with a float32[2] and b float32[3], the outputs watched.
  gj_error* CallId(Probe& p, const DLTensor* a, const DLTensor* b) {
    const DLTensor* in[] = {a, b};
    const DLTensor* out[] = {p.Output<float>({2}).dl(),
                             p.Output<float>({3}).dl()};
    return gj_function_call(id.get(), in, 2, out, 2, nullptr);
  }
  gj_error* CallIdWithA(Probe& p, const DLTensor* a) {
    return CallId(p, a, p.Floats({3}).dl());
  }
  gj_error* CallIdWithB(Probe& p, const DLTensor* b) {
    return CallId(p, p.Floats({2}).dl(), b);
  }
  // identity(a = float32[2], b = float32[3]) into these outputs; a watched
  // sentinel buffer stands for any output the case passes as NULL.
  gj_error* CallIdInto(Probe& p, const DLTensor* o0, const DLTensor* o1) {
    const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
    const DLTensor* out[] = {o0, o1};
    return gj_function_call(id.get(), in, 2, out, 2, nullptr);
  }
  gj_error* AllocId(Probe& p, const DLTensor* a, const DLTensor* b) {
    const DLTensor* in[] = {a, b};
    return gj_function_call_alloc(id.get(), in, 2, nullptr, p.OutTensors(2), 2);
  }
  // A one-output function called into `output` (a watched Probe::Output).
  gj_error* Call1(Probe& p, gj_function* f,
                  std::initializer_list<const DLTensor*> inputs,
                  const DLTensor* output,
                  const gj_call_options* options = nullptr) {
    std::vector<const DLTensor*> in(inputs);
    const DLTensor* out[] = {output};
    return gj_function_call(f, in.data(), in.size(), out, 1, options);
  }
  gj_error* Alloc1(Probe& p, gj_function* f,
                   std::initializer_list<const DLTensor*> inputs,
                   const gj_call_options* options = nullptr) {
    std::vector<const DLTensor*> in(inputs);
    return gj_function_call_alloc(f, in.data(), in.size(), options,
                                  p.OutTensors(1), 1);
  }

  gj_error* Text(Probe& p, const std::string& text,
                 const gj_graph_load_options* options = nullptr) {
    return gj_graph_from_text(ctx.get(), text.data(), text.size(), options,
                              p.OutGraph());
  }
  gj_error* Proto(Probe& p, const std::string& bytes,
                  const gj_graph_load_options* options = nullptr) {
    return gj_graph_from_proto(ctx.get(), bytes.data(), bytes.size(), options,
                               p.OutGraph());
  }
  gj_error* File(Probe& p, const std::string& name, const std::string& content,
                 const gj_graph_load_options* options = nullptr) {
    const std::string path = WriteFile(dir + "/" + name, content);
    return gj_graph_from_file(ctx.get(), path.c_str(), options, p.OutGraph());
  }

  // A builder named "g" with inputs x and y.
  BuilderPtr Builder() {
    gj_graph_builder* b = nullptr;
    EXPECT_TRUE(Ok(gj_graph_builder_create(ctx.get(), "g", &b)));
    EXPECT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
    EXPECT_TRUE(Ok(gj_graph_builder_add_input(b, "y")));
    return BuilderPtr(b);
  }
  // add_node on a fresh builder (inputs x, y).
  gj_error* Node(const char* name, const char* target,
                 std::vector<gj_arg> args) {
    BuilderPtr b = Builder();
    return gj_graph_builder_add_node(b.get(), name, target, args.data(),
                                     args.size());
  }
  gj_error* Constant(const char* name, const DLTensor* value) {
    BuilderPtr b = Builder();
    return gj_graph_builder_add_constant(b.get(), name, value);
  }
  gj_error* CreateWith(Probe& p, const gj_function_options& options) {
    return gj_function_create(ctx.get(), graphs.front().get(), &options,
                              p.OutFunction());
  }
  gj_error* ContextWith(Probe& p, const gj_context_options& options) {
    return gj_context_create(&options, p.OutContext());
  }

  ContextPtr ctx, eager;
  std::vector<GraphPtr> graphs;
  FunctionPtr id, mm, embed, embed_eager, add, cat, view, sum, relu;
  std::string dir;
};

enum class Kind { kLoad, kBuild, kOptions, kCall, kPrecompile };

struct Case {
  const char* label;
  Kind kind;
  std::function<gj_error*(Env&, Probe&)> run;
  gj_error_code code;
  std::vector<std::string> parts;
};

gj_context_options ContextOptions() {
  gj_context_options o;
  gj_context_options_init(&o);
  return o;
}
gj_function_options FunctionOptions() {
  gj_function_options o;
  gj_function_options_init(&o);
  return o;
}
gj_call_options CallOptions() {
  gj_call_options o;
  gj_call_options_init(&o);
  return o;
}
gj_graph_load_options LoadOptions() {
  gj_graph_load_options o;
  gj_graph_load_options_init(&o);
  return o;
}

// A CPU DLTensor of `shape` and `type` with no data (for precompile, and for
// shapes too large to allocate).
struct Meta {
  explicit Meta(std::vector<int64_t> s, DLDataType type = {kDLFloat, 32, 1})
      : shape(std::move(s)) {
    dl.data = nullptr;
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = type;
    dl.shape = shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
  }
  std::vector<int64_t> shape;
  DLTensor dl;
};

gj_arg WithKind(gj_arg a, gj_arg_kind kind) {
  a.kind = kind;
  return a;
}

// x split into parts of 1 and 2 elements; cases append nodes and outputs.
const char kSplitText[] = R"pb(
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
)pb";

// ---------------------------------------------------------------------------
// Graph loaders: text, binary, file.

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

// ---------------------------------------------------------------------------
// Graph builder.

std::vector<Case> BuilderCases() {
  return {
      {"builder: empty target",
       Kind::kBuild,
       [](Env& e, Probe&) { return e.Node("n", "", {gj_arg_ref("x")}); },
       GJ_UNIMPLEMENTED,
       {"gj_graph_builder_add_node", "node 'n'", "unknown target ''"}},
      {"builder: getitem on a node with one value",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         gj_arg relu[] = {gj_arg_ref("x")};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "act", "aten.relu.default", relu, 1)));
         gj_arg item[] = {gj_arg_ref("act"), gj_arg_int(0)};
         return gj_graph_builder_add_node(b.get(), "first", "getitem", item, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"node 'first' (getitem)", "index 0 out of range for 'act'"}},
      {"builder: getitem -1 of a list",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const int64_t sizes[] = {1, 2};
         gj_arg split[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "parts", "aten.split_with_sizes.default", split, 2)));
         gj_arg item[] = {gj_arg_ref("parts"), gj_arg_int(-1)};
         return gj_graph_builder_add_node(b.get(), "last", "getitem", item, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"node 'last'", "index -1", "'parts'"}},
      {"builder: getitem with three arguments",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("item", "getitem",
                       {gj_arg_ref("x"), gj_arg_int(0), gj_arg_int(1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'item'", "expects (value, index: int)"}},
      {"builder: a positional and a keyword value for one argument",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("add", "aten.add.Tensor",
                       {gj_arg_ref("x"), gj_arg_ref("y"),
                        gj_kwarg("other", gj_arg_ref("y"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'add'", "multiple values for argument 'other'"}},
      {"builder: GJ_ARG_DEVICE with str NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("moved", "aten._to_copy.default",
                       {gj_arg_ref("x"),
                        gj_kwarg("device", WithKind(gj_arg_string(nullptr),
                                                    GJ_ARG_DEVICE))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'moved'", "args[1] ('device')", "GJ_ARG_DEVICE", "str NULL"}},
      {"builder: GJ_ARG_SUBGRAPH with str NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("branch", "higher_order.cond",
                       {gj_arg_bool(1),
                        WithKind(gj_arg_string(nullptr), GJ_ARG_SUBGRAPH)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'branch'", "args[1]", "GJ_ARG_SUBGRAPH", "str NULL"}},
      {"builder: a subgraph the graph lacks",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const char* operands[] = {"x"};
         return e.Node(
             "branch", "higher_order.cond",
             {gj_arg_bool(1), WithKind(gj_arg_string("yes"), GJ_ARG_SUBGRAPH),
              WithKind(gj_arg_string("no"), GJ_ARG_SUBGRAPH),
              gj_arg_refs(operands, 1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'branch'", "subgraph 'yes'"}},
      {"builder: floats where dims are ints",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const double dims[] = {0.5};
         gj_arg list = gj_arg_none();
         list.kind = GJ_ARG_FLOAT_LIST;
         list.floats = dims;
         list.len = 1;
         return e.Node("total", "aten.sum.dim_IntList",
                       {gj_arg_ref("x"), list});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'total'", "argument 'dim'", "float"}},
      {"builder: an unknown dtype name",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node(
             "cast", "aten._to_copy.default",
             {gj_arg_ref("x"), gj_kwarg("dtype", gj_arg_string("float99"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'cast'", "argument 'dtype'", "unknown dtype 'float99'"}},
      {"builder: a str for a Scalar",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("add", "aten.add.Tensor",
                       {gj_arg_ref("x"), gj_arg_ref("y"),
                        gj_kwarg("alpha", gj_arg_string("two"))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'add'", "argument 'alpha'", "expected Scalar", "str"}},
      {"builder: an int for a bool",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("probs", "aten._softmax.default",
                       {gj_arg_ref("x"), gj_arg_int(1), gj_arg_int(1)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'probs'", "argument 'half_to_float'", "expected bool", "int"}},
      {"builder: None for a required Tensor",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("prod", "aten.mm.default",
                       {gj_arg_ref("x"), gj_arg_none()});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "argument 'mat2'", "None"}},
      {"builder: ints where cat wants tensors",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const int64_t ints[] = {1, 2};
         return e.Node("joined", "aten.cat.default", {gj_arg_ints(ints, 2)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'joined'", "argument 'tensors'", "Tensor[]"}},
      {"builder: GJ_ARG_REF_LIST with refs NULL",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("joined", "aten.cat.default", {gj_arg_refs(nullptr, 2)});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'joined'", "args[0]", "GJ_ARG_REF_LIST", "refs NULL"}},
      {"builder: a keyword argument named ''",
       Kind::kBuild,
       [](Env& e, Probe&) {
         return e.Node("act", "aten.relu.default",
                       {gj_arg_ref("x"), gj_kwarg("", gj_arg_int(1))});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'act'", "unexpected keyword argument ''"}},
      {"builder: add_node after the outputs",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const char* outputs[] = {"x"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         gj_arg relu[] = {gj_arg_ref("x")};
         return gj_graph_builder_add_node(b.get(), "late", "aten.relu.default",
                                          relu, 1);
       },
       GJ_FAILED_PRECONDITION,
       {"gj_graph_builder_add_node", "'late'", "after the outputs"}},
      {"builder: add_constant after the outputs",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         BuilderPtr b = e.Builder();
         const char* outputs[] = {"y"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         return gj_graph_builder_add_constant(b.get(), "late_w",
                                              p.Floats({2}).dl());
       },
       GJ_FAILED_PRECONDITION,
       {"gj_graph_builder_add_constant", "'late_w'", "after the outputs"}},
      {"builder: an output that returns several values",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         const int64_t sizes[] = {1, 2};
         gj_arg split[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
         EXPECT_TRUE(Ok(gj_graph_builder_add_node(
             b.get(), "parts", "aten.split_with_sizes.default", split, 2)));
         const char* outputs[] = {"x", "parts"};
         return gj_graph_builder_set_outputs(b.get(), outputs, 2);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_set_outputs", "output 1", "'parts'", "getitem"}},
      {"builder: finish finds constants mm cannot multiply",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         gj_graph_builder* raw = nullptr;
         EXPECT_TRUE(Ok(gj_graph_builder_create(e.ctx.get(), "consts", &raw)));
         BuilderPtr b(raw);
         EXPECT_TRUE(Ok(gj_graph_builder_add_constant(b.get(), "w",
                                                      p.Floats({2, 3}).dl())));
         EXPECT_TRUE(Ok(gj_graph_builder_add_constant(b.get(), "v",
                                                      p.Floats({4, 5}).dl())));
         gj_arg mm[] = {gj_arg_ref("w"), gj_arg_ref("v")};
         gj_error* add = gj_graph_builder_add_node(b.get(), "prod",
                                                   "aten.mm.default", mm, 2);
         if (add != nullptr) return add;  // checked at once: also fine
         const char* outputs[] = {"prod"};
         EXPECT_TRUE(Ok(gj_graph_builder_set_outputs(b.get(), outputs, 1)));
         return gj_graph_builder_finish(b.get(), p.OutGraph());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "cannot be multiplied", "2x3"}},
      {"builder: a 10,000-byte node name is cut in the message",
       Kind::kBuild,
       [](Env& e, Probe&) {
         const std::string name(10000, 'n');
         return e.Node(name.c_str(), "aten.not_an_op.default",
                       {gj_arg_ref("x")});
       },
       GJ_UNIMPLEMENTED,
       {"gj_graph_builder_add_node", "node 'nnnn", "more bytes)"}},
      {"builder: a duplicate name with a newline is escaped",
       Kind::kBuild,
       [](Env& e, Probe&) {
         BuilderPtr b = e.Builder();
         EXPECT_TRUE(Ok(gj_graph_builder_add_input(b.get(), "two\nlines")));
         return gj_graph_builder_add_input(b.get(), "two\nlines");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_add_input", "duplicate", "'two\\nlines'"}},
      {"builder: constant ndim -1",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->ndim = -1;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "ndim is -1"}},
      {"builder: constant data NULL",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({3});
         w.dl()->data = nullptr;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "data is NULL", "3 elements"}},
      {"builder: constant of more than 2^63 elements",
       Kind::kBuild,
       [](Env& e, Probe&) {
         Meta w({int64_t{1} << 62, 4});
         return e.Constant("w", &w.dl);
       },
       GJ_OUT_OF_RANGE,
       {"constant 'w'"}},
      {"builder: constant data misaligned",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<double>& w = p.Tensor<double>({2}, {1, 2, 3});
         w.dl()->byte_offset = 4;
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "not aligned", "8-byte"}},
      {"builder: constant on CPU device_id 3",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->device = {kDLCPU, 3};
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "device_id 3"}},
      {"builder: constant float32 with 4 lanes",
       Kind::kBuild,
       [](Env& e, Probe& p) {
         HostTensor<float>& w = p.Floats({2});
         w.dl()->dtype = {kDLFloat, 32, 4};
         return e.Constant("w", w.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"constant 'w'", "unsupported dtype", "lanes 4"}},
      {"builder: constant with an empty name",
       Kind::kBuild,
       [](Env& e, Probe& p) { return e.Constant("", p.Floats({2}).dl()); },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_builder_add_constant", "empty name"}},
  };
}

// ---------------------------------------------------------------------------
// Options structs.

std::vector<Case> OptionCases() {
  return {
      {"context: max_cached_bytes -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.max_cached_bytes = -1;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->max_cached_bytes is -1"}},
      {"context: struct_size 7",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.struct_size = 7;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->struct_size is 7",
        "gj_context_options_init"}},
      {"context: num_threads INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.num_threads = kInt32Min;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->num_threads is -2147483648"}},
      {"context: max_cached_kernels INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         o.max_cached_kernels = kInt32Min;
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->max_cached_kernels is -2147483648"}},
      {"function: mark_dynamic NULL with a count",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.num_mark_dynamic = 2;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic is NULL", "num_mark_dynamic is 2"}},
      {"function: mark_dynamic input past the inputs",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, 2, 100}, {2, 0, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 2;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 2, dim 0",
        "the graph has 2 inputs"}},
      {"function: mark_dynamic input -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{-1, 0, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input -1"}},
      {"function: mark_dynamic dim -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{1, -1, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 1, dim -1"}},
      {"function: mark_dynamic min above max",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, 50, 10}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "mark_dynamic(input 0, dim 0, min 50, max 10)",
        "min <= max"}},
      {"function: mark_dynamic min -5",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 0, -5, 10}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "min -5"}},
      {"function: recompile_limit INT32_MIN",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.recompile_limit = kInt32Min;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->recompile_limit is -2147483648"}},
      {"function: struct_size 0",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         o.struct_size = 0;
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->struct_size is 0",
        "gj_function_options_init"}},
      {"function stats: struct_size 0",
       Kind::kOptions,
       [](Env& e, Probe&) {
         gj_function_stats s;
         gj_function_stats_init(&s);
         s.struct_size = 0;
         return gj_function_get_stats(e.id.get(), &s);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_get_stats", "stats->struct_size is 0",
        "gj_function_stats_init"}},
      {"memory stats: struct_size 3",
       Kind::kOptions,
       [](Env& e, Probe&) {
         gj_memory_stats s;
         gj_memory_stats_init(&s);
         s.struct_size = 3;
         return gj_context_get_memory_stats(e.ctx.get(), &s);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_get_memory_stats", "stats->struct_size is 3",
        "gj_memory_stats_init"}},
      {"call options: struct_size 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_call_options o = CallOptions();
         o.struct_size = 0;
         return e.Call1(p, e.relu.get(), {p.Floats({4}).dl()},
                        p.Output<float>({4}).dl(), &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "options->struct_size is 0",
        "gj_call_options_init"}},
      {"call options: timeout_us INT64_MIN",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_call_options o = CallOptions();
         o.timeout_us = kInt64Min;
         return e.Alloc1(p, e.relu.get(), {p.Floats({4}).dl()}, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc",
        "options->timeout_us is -9223372036854775808"}},
      {"call options: cancel set before call_alloc",
       Kind::kCall,
       [](Env& e, Probe& p) {
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Alloc1(p, e.relu.get(), {p.Floats({4}).dl()}, &o);
       },
       GJ_CANCELLED,
       {"gj_function_call_alloc", "function 'activation'",
        "cancelled by the host"}},
      {"call options: a 1 us timeout passes while compiling",
       Kind::kCall,
       [](Env& e, Probe& p) {
         FunctionPtr f = e.FreshRelu();
         gj_call_options o = CallOptions();
         o.timeout_us = 1;
         return e.Call1(p, f.get(), {p.Floats({64}).dl()},
                        p.Output<float>({64}).dl(), &o);
       },
       GJ_DEADLINE_EXCEEDED,
       {"gj_function_call", "function 'activation'", "timeout"}},
      {"call options: cancel set, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.eager.get(), "activation", {"r"}, "act", Env::ReluNode));
         FunctionPtr f = CreateFunction(e.eager.get(), e.graphs.back().get());
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Call1(p, f.get(), {p.Floats({8}).dl()},
                        p.Output<float>({8}).dl(), &o);
       },
       GJ_CANCELLED,
       {"gj_function_call", "function 'activation'", "cancelled by the host"}},
      {"call options: 1 us timeout, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.eager.get(), "activation", {"r"}, "act", Env::ReluNode));
         FunctionPtr f = CreateFunction(e.eager.get(), e.graphs.back().get());
         gj_call_options o = CallOptions();
         o.timeout_us = 1;
         return e.Alloc1(p, f.get(), {p.Floats({8}).dl()}, &o);
       },
       GJ_DEADLINE_EXCEEDED,
       {"gj_function_call_alloc", "function 'activation'", "timeout"}},
      {"call options: cancel set past the recompile limit",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_function_options fo = FunctionOptions();
         fo.recompile_limit = 0;
         FunctionPtr f = e.FreshRelu(&fo);
         static const int32_t cancel = 1;
         gj_call_options o = CallOptions();
         o.cancel = &cancel;
         return e.Call1(p, f.get(), {p.Floats({8}).dl()},
                        p.Output<float>({8}).dl(), &o);
       },
       GJ_CANCELLED,
       {"gj_function_call", "function 'activation'", "cancelled by the host"}},
      {"call options: mark_dynamic dim past the input's rank",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const gj_dynamic_dim dims[] = {{0, 3, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         FunctionPtr f = e.FreshRelu(&o);
         return e.Call1(p, f.get(), {p.Floats({4}).dl()},
                        p.Output<float>({4}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "mark_dynamic", "dim 3", "input 'r'", "rank 1"}},
      {"precompile options: struct_size 5",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_call_options o = CallOptions();
         o.struct_size = 5;
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "options->struct_size is 5"}},
      {"precompile options: timeout_us -1",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_call_options o = CallOptions();
         o.timeout_us = -1;
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, &o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "timeout_us is -1"}},
  };
}

// ---------------------------------------------------------------------------
// Calls: gj_function_call, gj_function_call_alloc, gj_function_precompile.

std::vector<Case> CallCases() {
  return {
      // Counts and NULL pointers.
      {"call: inputs NULL with num_inputs 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), nullptr, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "inputs is NULL with num_inputs 2"}},
      {"call: three inputs for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl(),
                                 p.Floats({1}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), in, 3, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'identity'",
        "takes 2 inputs (a, b), got 3"}},
      {"call: input 0 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) { return e.CallIdWithA(p, nullptr); },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "input 0 ('a') is NULL"}},
      {"call: output 0 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, nullptr, p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "output 0 is NULL"}},
      {"call: num_outputs 0 for two outputs",
       Kind::kCall,
       [](Env& e, Probe& p) {
         p.Output<float>({2});  // stands for the outputs not passed
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         return gj_function_call(e.id.get(), in, 2, nullptr, 0, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "'identity' returns 2 outputs, got num_outputs 0"}},
      {"call: three outputs for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3}).dl(),
                                  p.Output<float>({3}).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 3, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"returns 2 outputs, got num_outputs 3"}},
      {"call_alloc: num_outputs 1 for two",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
         return gj_function_call_alloc(e.id.get(), in, 2, nullptr,
                                       p.OutTensors(1), 1);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "returns 2 outputs, got num_outputs 1"}},
      {"call_alloc: input 1 NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.AllocId(p, p.Floats({2}).dl(), nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "input 1 ('b') is NULL"}},
      // Ranks and shapes.
      {"call: input ndim 65",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->ndim = 65;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "ndim is 65", "0 to 64"}},
      {"call: output shape NULL with ndim 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->ndim = 2;
         o1.dl()->shape = nullptr;
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "output 1", "shape is NULL"}},
      {"call: output negative size",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         o0.dl()->shape[0] = -1;
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "negative size -1 at dim 0"}},
      {"call: input INT64_MIN size at dim 1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta b({3, kInt64Min});
         return e.CallIdWithB(p, &b.dl);
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "negative size", "at dim 1"}},
      // dtypes.
      {"call: input int32 with 0 lanes",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int32_t>& a = p.Tensor<int32_t>({2}, {1, 2});
         a.dl()->dtype.lanes = 0;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "unsupported dtype", "lanes 0"}},
      {"call: input bool of 16 bits",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int16_t>& b = p.Tensor<int16_t>({3}, {1, 0, 1});
         b.dl()->dtype = {GJ_DL_BOOL, 16, 1};
         return e.CallIdWithB(p, b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "unsupported dtype", "bits 16"}},
      {"call: input float of 0 bits",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->dtype.bits = 0;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "unsupported dtype", "bits 0"}},
      {"call: output uint32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->dtype = {kDLUInt, 32, 1};
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "unsupported dtype", "code 1, bits 32"}},
      {"call_alloc: input bfloat16 with 2 lanes",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<int16_t>& b = p.Tensor<int16_t>({3}, {1, 2, 3});
         b.dl()->dtype = {kDLBfloat, 16, 2};
         return e.AllocId(p, p.Floats({2}).dl(), b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "input 1 ('b')", "unsupported dtype",
        "lanes 2"}},
      // Sizes, strides and offsets past int64 or the address space.
      {"call: input of 2^62 x 4 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({int64_t{1} << 62, 4});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "more than 2^63 elements"}},
      {"call: output of 2^40 x 2^40 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta o1({int64_t{1} << 40, int64_t{1} << 40});
         return e.CallIdInto(p, p.Output<float>({2}).dl(), &o1.dl);
       },
       GJ_OUT_OF_RANGE,
       {"gj_function_call", "output 1"}},
      {"call: input [2^40, 2^40, 0] overflows before the 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({int64_t{1} << 40, int64_t{1} << 40, 0});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "2^63"}},
      {"call: byte_offset near 2^63",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Floats({3});
         b.dl()->byte_offset = static_cast<uint64_t>(kInt64Max) - 4;
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "byte_offset", "2^63 bytes"}},
      {"call: negative strides reaching past -2^63",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b =
             p.Tensor<float>({3}, {1, 2, 3}, {-(int64_t{1} << 62)});
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "strides", "2^63"}},
      {"call: data at the top of the address space",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->data = reinterpret_cast<void*>(~uintptr_t{0} - 3);
         return e.CallIdWithA(p, a.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "address space"}},
      {"call: negative stride reaching below address 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Tensor<float>({3}, {1, 2, 3}, {-1024});
         b.dl()->data = reinterpret_cast<void*>(uintptr_t{64});
         return e.CallIdWithB(p, b.dl());
       },
       GJ_OUT_OF_RANGE,
       {"input 1 ('b')", "address space"}},
      // Alignment and data.
      {"call: float64 input at data + 4",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<double>& a = p.Tensor<double>({2}, {1, 2, 3});
         a.dl()->byte_offset = 4;
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "not aligned", "8-byte item size of float64"}},
      {"call: int16 output at an odd address",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3}, {}, 4);
         DLTensor shifted = *o1.dl();
         shifted.dtype = {kDLInt, 16, 1};
         shifted.data = reinterpret_cast<char*>(o1.buffer().data()) + 1;
         HostTensor<float>& o0 = p.Output<float>({2});
         const DLTensor* in[] = {p.Floats({2}).dl(),
                                 p.Tensor<int16_t>({3}, {1, 2, 3}).dl()};
         const DLTensor* out[] = {o0.dl(), &shifted};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "not aligned", "2-byte"}},
      {"call: output data NULL",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         DLTensor null_data = *o0.dl();
         null_data.data = nullptr;
         return e.CallIdInto(p, &null_data, p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "data is NULL", "2 elements"}},
      // Devices.
      {"call: output on CUDA",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o1 = p.Output<float>({3});
         o1.dl()->device = {kDLCUDA, 0};
         return e.CallIdInto(p, p.Output<float>({2}).dl(), o1.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 1 is on cuda:0", "the inputs are on cpu"}},
      {"call: input on Metal",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLMetal, 0};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "Metal"}},
      {"call: input on ROCm",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& b = p.Floats({3});
         b.dl()->device = {kDLROCM, 2};
         return e.CallIdWithB(p, b.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 1 ('b')", "ROCM", "id 2"}},
      {"call: input on CUDA beside a CPU input",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDA, 0};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a') is on cuda:0", "input 1 ('b') on cpu", "one device"}},
      {"call: input in CUDA host memory with device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDAHost, -1};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "CUDAHost", "device_id -1"}},
      {"call: input on CUDA device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         a.dl()->device = {kDLCUDA, -1};
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "device_id -1", "CUDA device ordinal"}},
      {"call: input on device type 999",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& a = p.Floats({2});
         int raw = 999;
         std::memcpy(&a.dl()->device.device_type, &raw, sizeof(raw));
         return e.CallIdWithA(p, a.dl());
       },
       GJ_INVALID_ARGUMENT,
       {"input 0 ('a')", "type 999"}},
      {"call: output CPU device_id -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 = p.Output<float>({2});
         o0.dl()->device = {kDLCPU, -1};
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "device_id -1"}},
      // Outputs that do not fit the results.
      {"call: output int32 for float32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, p.Output<int32_t>({2}).dl(),
                             p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2]", "got int32[2]"}},
      {"call: output [2, 1] for [2]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.CallIdInto(p, p.Output<float>({2, 1}).dl(),
                             p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2]", "got float32[2, 1]"}},
      {"call: 0-d output for [1]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({1}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({}).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "expected float32[1]", "got float32[]"}},
      {"call: mm output transposed shape",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({3, 5}).dl()},
                        p.Output<float>({5, 2}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2, 5]", "got float32[5, 2]"}},
      {"call: embedding output int64 for float32",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(
             p, e.embed.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int64_t>({2}, {1, 2}).dl()},
             p.Output<int64_t>({2, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "expected float32[2, 3]", "got int64[2, 3]"}},
      // Outputs that overlap.
      {"call: one DLTensor passed as both outputs",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({3}).dl(), p.Floats({3}).dl()};
         HostTensor<float>& o = p.Output<float>({3});
         const DLTensor* out[] = {o.dl(), o.dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"outputs 0 and 1 overlap"}},
      {"call: output 1 starts at output 0's last element",
       Kind::kCall,
       [](Env& e, Probe& p) {
         // o0 = elements 0..2 of a buffer, o1 = elements 2..4.
         HostTensor<float>& o0 = p.Output<float>({3}, {}, 5);
         DLTensor o1 = *o0.dl();
         o1.byte_offset = 2 * sizeof(float);
         const DLTensor* in[] = {p.Floats({3}).dl(), p.Floats({3}).dl()};
         const DLTensor* out[] = {o0.dl(), &o1};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"outputs 0 and 1 overlap"}},
      {"call: output with strides [1, 1]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3, 3}).dl()};
         const DLTensor* out[] = {p.Output<float>({2}).dl(),
                                  p.Output<float>({3, 3}, {1, 1}, 5).dl()};
         return gj_function_call(e.id.get(), in, 2, out, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"output 1", "strides [1, 1]", "share memory"}},
      {"call: interleaved output strides past 2^20 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         HostTensor<float>& o0 =
             p.Output<float>({2048, 1024}, {2, 1}, 2 * 2047 + 1024);
         return e.CallIdInto(p, o0.dl(), p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"output 0", "strides [2, 1]", "sizes [2048, 1024]", "share memory"}},
      // Shapes an op rejects (found at the call: inputs carry no metadata).
      {"call: mm inner dims differ",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({4, 5}).dl()},
                        p.Output<float>({2, 5}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'matmul'", "node 'prod'",
        "argument 'mat2'", "cannot be multiplied (2x3 and ", "x5)"}},
      {"call: mm of a 3-D tensor",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.mm.get(),
                        {p.Floats({2, 3, 1}).dl(), p.Floats({3, 5}).dl()},
                        p.Output<float>({2, 5}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "argument 'self'", "expected a 2-D tensor, got a 3-D"}},
      {"call_alloc: mm of float32 and float64",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(
             p, e.mm.get(),
             {p.Floats({2, 3}).dl(), p.Tensor<double>({3, 1}, {1, 2, 3}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "node 'prod'", "argument 'mat2'",
        "float32 != float64"}},
      {"call: add of [2] and [3]",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.add.get(),
                        {p.Floats({2}).dl(), p.Floats({3}).dl()},
                        p.Output<float>({3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'adder'", "node 'sum_xy'", "broadcast"}},
      {"call: cat of [2, 2] and [3, 2] along dim 1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.cat.get(),
                        {p.Floats({2, 2}).dl(), p.Floats({3, 2}).dl()},
                        p.Output<float>({2, 4}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"function 'joiner'", "node 'joined'"}},
      {"call_alloc: view(-1, 5) of 7 elements",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(p, e.view.get(), {p.Floats({7}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"function 'reshaper'", "node 'reshaped'", "7"}},
      {"call: sum over dim 1 of a 1-D input",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.sum.get(), {p.Floats({4}).dl()},
                        p.Output<float>({}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"function 'reducer'", "node 'total'", "dim"}},
      {"call: embedding with float32 indices",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(p, e.embed.get(),
                        {p.Floats({4, 3}).dl(), p.Floats({2}).dl()},
                        p.Output<float>({2, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'rows'", "argument 'indices'", "int64 or int32", "float32"}},
      {"call_alloc: embedding index -1",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Alloc1(
             p, e.embed.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int64_t>({2}, {1, -1}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call_alloc", "function 'lookup'", "node 'rows'",
        "out of range"}},
      {"call: embedding index 4 of 4 rows, eager backend",
       Kind::kCall,
       [](Env& e, Probe& p) {
         return e.Call1(
             p, e.embed_eager.get(),
             {p.Floats({4, 3}).dl(), p.Tensor<int32_t>({3}, {0, 4, 1}).dl()},
             p.Output<float>({3, 3}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_call", "function 'lookup'", "node 'rows'",
        "out of range"}},
      {"call_alloc: getitem 5 of a split into 2",
       Kind::kCall,
       [](Env& e, Probe& p) {
         gj_graph* raw = nullptr;
         const std::string text = std::string(kSplitText) +
                                  R"pb(nodes {
                                         name: "sixth"
                                         target: "getitem"
                                         args { ref: "parts" }
                                         args { i: 5 }
                                       }
                                       outputs { ref: "sixth" })pb";
         gj_error* load = gj_graph_from_text(e.ctx.get(), text.data(),
                                             text.size(), nullptr, &raw);
         if (load != nullptr) return load;  // found at load: also fine
         GraphPtr graph(raw);
         FunctionPtr f = CreateFunction(e.ctx.get(), graph.get());
         return e.Alloc1(p, f.get(), {p.Floats({3}).dl()});
       },
       GJ_INVALID_ARGUMENT,
       {"node 'sixth'", "5"}},
      // Precompile: metadata only.
      {"precompile: inputs NULL with num_inputs 1",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         return gj_function_precompile(e.relu.get(), nullptr, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "inputs is NULL with num_inputs 1"}},
      {"precompile: one input for two",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta a({2});
         const DLTensor* in[] = {&a.dl};
         return gj_function_precompile(e.id.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "takes 2 inputs (a, b), got 1"}},
      {"precompile: input 1 NULL",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta a({2});
         const DLTensor* in[] = {&a.dl, nullptr};
         return gj_function_precompile(e.id.get(), in, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 1 ('b') is NULL"}},
      {"precompile: complex128 input",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4}, {kDLComplex, 128, 1});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')", "unsupported dtype"}},
      {"precompile: input on CUDA device_id -2",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4});
         r.dl.device = {kDLCUDA, -2};
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')", "device_id -2"}},
      {"precompile: negative size",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta r({4, -2});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(e.relu.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "input 0 ('r')",
        "negative size -2 at dim 1"}},
      {"precompile: shapes mm rejects",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         Meta lhs({2, 3}), rhs({4, 5});
         const DLTensor* in[] = {&lhs.dl, &rhs.dl};
         return gj_function_precompile(e.mm.get(), in, 2, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "function 'matmul'", "node 'prod'",
        "cannot be multiplied"}},
      {"precompile: recompile_limit 0",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         gj_function_options o = FunctionOptions();
         o.recompile_limit = 0;
         FunctionPtr f = e.FreshRelu(&o);
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(f.get(), in, 1, nullptr);
       },
       GJ_FAILED_PRECONDITION,
       {"gj_function_precompile", "'activation'", "recompile limit (0)"}},
      {"precompile: mark_dynamic dim past the rank",
       Kind::kPrecompile,
       [](Env& e, Probe&) {
         const gj_dynamic_dim dims[] = {{0, 1, 2, 100}};
         gj_function_options o = FunctionOptions();
         o.mark_dynamic = dims;
         o.num_mark_dynamic = 1;
         FunctionPtr f = e.FreshRelu(&o);
         Meta r({4});
         const DLTensor* in[] = {&r.dl};
         return gj_function_precompile(f.get(), in, 1, nullptr);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_precompile", "mark_dynamic", "dim 1", "input 'r'"}},
  };
}

// Cases where the library contradicted its header (or issue #19's message
// rules) when this catalogue was written, fixed since (FormerGaps). Were:
// - placeholder meta sizes: -3 is accepted (the graph loads).
// - node with an empty name: "a node has an empty name" names nothing of it
//   (neither its target nor its position).
// - external data shorter than its length: DATA_LOSS, a code the loaders'
//   error list in the header does not have.
// - constant of more than 2^63 elements: OUT_OF_RANGE, likewise.
// - context backend -1, function dynamic -1: the message says 4294967295.
// - input [0, 2^40, 2^40]: accepted (the product overflows only after the 0).
// - mm rejected after two compiles: "(2x3 and s0xs1) (s0 = rhs.size()[0], 4
//   in this call)" leaves s1 without its source.
std::vector<Case> KnownGapCases() {
  return {
      {"text: a placeholder meta with a negative size",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders {
                                 name: "x"
                                 meta { dtype: FLOAT32 sizes: -3 }
                               }
                               nodes {
                                 name: "act"
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "act" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"placeholder 'x'", "-3"}},
      {"text: a node with an empty name",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(placeholders { name: "x" }
                               nodes {
                                 name: ""
                                 target: "aten.relu.default"
                                 args { ref: "x" }
                               }
                               outputs { ref: "x" })pb");
       },
       GJ_INVALID_ARGUMENT,
       {"gj_graph_from_text", "empty name", "aten.relu.default"}},
      {"text: external data shorter than its length",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         gj_graph_load_options o = LoadOptions();
         o.external_data_dir = e.dir.c_str();
         return e.Text(p,
                       R"pb(constants {
                              name: "w"
                              dtype: FLOAT32
                              sizes: 2
                              external { path: "w.bin" offset: 4 length: 8 }
                            }
                            outputs { ref: "w" })pb",
                       &o);
       },
       GJ_DATA_LOSS,
       {"constant 'w'", "w.bin"}},
      {"text: a constant of more than 2^63 elements",
       Kind::kLoad,
       [](Env& e, Probe& p) {
         return e.Text(p, R"pb(constants {
                                 name: "w"
                                 dtype: FLOAT32
                                 sizes: 4611686018427387904
                                 sizes: 4
                                 data: ""
                               }
                               outputs { ref: "w" })pb");
       },
       GJ_OUT_OF_RANGE,
       {"constant 'w'", "2^63"}},
      {"context: backend -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_context_options o = ContextOptions();
         int raw = -1;
         std::memcpy(&o.backend, &raw, sizeof(raw));
         return e.ContextWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_context_create", "options->backend is -1"}},
      {"function: dynamic -1",
       Kind::kOptions,
       [](Env& e, Probe& p) {
         gj_function_options o = FunctionOptions();
         int raw = -1;
         std::memcpy(&o.dynamic, &raw, sizeof(raw));
         return e.CreateWith(p, o);
       },
       GJ_INVALID_ARGUMENT,
       {"gj_function_create", "options->dynamic is -1"}},
      {"call: input [0, 2^40, 2^40] overflows after the 0",
       Kind::kCall,
       [](Env& e, Probe& p) {
         Meta a({0, int64_t{1} << 40, int64_t{1} << 40});
         return e.CallIdWithA(p, &a.dl);
       },
       GJ_OUT_OF_RANGE,
       {"input 0 ('a')", "2^63"}},
      {"call: every size symbol in an mm message has its source",
       Kind::kCall,
       [](Env& e, Probe& p) {
         e.graphs.push_back(
             OpGraph(e.ctx.get(), "matmul", {"lhs", "rhs"}, "prod",
                     [](gj_graph_builder* b) {
                       gj_arg a[] = {gj_arg_ref("lhs"), gj_arg_ref("rhs")};
                       EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                           b, "prod", "aten.mm.default", a, 2)));
                     }));
         FunctionPtr f = CreateFunction(e.ctx.get(), e.graphs.back().get());
         for (int64_t n : {5, 7}) {  // the second call makes rhs's dim 1 s1
           DLManagedTensor* out = nullptr;
           const DLTensor* in[] = {p.Floats({2, 3}).dl(),
                                   p.Floats({3, n}).dl()};
           EXPECT_TRUE(
               Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, &out, 1)));
           gj_tensor_release(out);
         }
         return e.Call1(p, f.get(),
                        {p.Floats({2, 3}).dl(), p.Floats({4, 6}).dl()},
                        p.Output<float>({2, 6}).dl());
       },
       GJ_INVALID_ARGUMENT,
       {"node 'prod'", "cannot be multiplied", "s0 = rhs.size()[0]",
        "s1 = rhs.size()[1]"}},
  };
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (auto part : {LoaderCases(), BuilderCases(), OptionCases(), CallCases()})
    for (Case& c : part) all.push_back(std::move(c));
  return all;
}

// Runs a case and checks the error, its message and that nothing was written.
void RunCase(Env& env, const Case& c) {
  SCOPED_TRACE(c.label);
  if (std::getenv("GJ_CATALOGUE_TRACE") != nullptr)
    std::fprintf(stderr, "case: %s\n", c.label);
  Probe probe;
  gj_error* error = c.run(env, probe);
  std::string message;
  gj_error_code code = GJ_OK;
  if (error != nullptr) {
    code = gj_error_get_code(error);
    message = gj_error_message(error);
    gj_error_destroy(error);
  }
  if (std::getenv("GJ_CATALOGUE_TRACE") != nullptr)
    std::fprintf(stderr, "  %s: %s\n", CodeName(code), message.c_str());
  for (const std::string& v : probe.Violations()) ADD_FAILURE() << v;
  if (c.kind == Kind::kCall) {
    EXPECT_TRUE(probe.watches_outputs())
        << "a call case must give watched outputs";
  }
  if (error == nullptr) {
    ADD_FAILURE() << "succeeded; expected " << CodeName(c.code);
    return;
  }
  EXPECT_STREQ(CodeName(code), CodeName(c.code)) << message;
  EXPECT_FALSE(message.empty());
  EXPECT_LE(message.size(), kMaxMessageBytes);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  for (const std::string& part : c.parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message lacks \"" << part << "\": " << message;
  }
}

TEST(BadInputCatalogue, EveryCaseFailsWithACodeAndAMessageNamingTheCulprit) {
  Env env;
  const std::vector<Case> cases = AllCases();
  EXPECT_GE(cases.size(), 80u);
  std::set<std::string> labels;
  for (const Case& c : cases) {
    EXPECT_TRUE(labels.insert(c.label).second) << "duplicate label " << c.label;
    EXPECT_FALSE(c.parts.empty()) << c.label;
    RunCase(env, c);
  }
}

// The cases the first version of this catalogue found the library getting
// wrong (fixed since; the header now lists DATA_LOSS and OUT_OF_RANGE for
// the loaders).
TEST(BadInputCatalogue, FormerGaps) {
  Env env;
  for (const Case& c : KnownGapCases()) RunCase(env, c);
}

}  // namespace
