#include "bad_input_catalogue.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gjtest::catalogue {
namespace {

std::string WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace

std::vector<std::string> Probe::Violations() {
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

FunctionPtr CreateFunction(gj_context* context, const gj_graph* graph,
                           const gj_function_options* options) {
  gj_function* f = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(context, graph, options, &f)));
  return FunctionPtr(f);
}

Env::Env() {
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
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "prod", "aten.mm.default", a, 2)));
      }));
  mm = CreateFunction(c, graphs.back().get());
  // lookup(table, ids) -> rows = embedding(table, ids)
  auto lookup = [](gj_graph_builder* b) {
    gj_arg a[] = {gj_arg_ref("table"), gj_arg_ref("ids")};
    EXPECT_TRUE(Ok(
        gj_graph_builder_add_node(b, "rows", "aten.embedding.default", a, 2)));
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
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(b, "joined", "aten.cat.default", a, 2)));
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
  WriteFile(dir + "/w.bin", std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0", 8));
}

Env::~Env() {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

void Env::ReluNode(gj_graph_builder* b) {
  gj_arg a[] = {gj_arg_ref("r")};
  EXPECT_TRUE(
      Ok(gj_graph_builder_add_node(b, "act", "aten.relu.default", a, 1)));
}

FunctionPtr Env::FreshRelu(const gj_function_options* options) {
  graphs.push_back(OpGraph(ctx.get(), "activation", {"r"}, "act", ReluNode));
  return CreateFunction(ctx.get(), graphs.back().get(), options);
}

gj_error* Env::CallId(Probe& p, const DLTensor* a, const DLTensor* b) {
  const DLTensor* in[] = {a, b};
  const DLTensor* out[] = {p.Output<float>({2}).dl(),
                           p.Output<float>({3}).dl()};
  return gj_function_call(id.get(), in, 2, out, 2, nullptr);
}

gj_error* Env::CallIdWithA(Probe& p, const DLTensor* a) {
  return CallId(p, a, p.Floats({3}).dl());
}

gj_error* Env::CallIdWithB(Probe& p, const DLTensor* b) {
  return CallId(p, p.Floats({2}).dl(), b);
}

gj_error* Env::CallIdInto(Probe& p, const DLTensor* o0, const DLTensor* o1) {
  const DLTensor* in[] = {p.Floats({2}).dl(), p.Floats({3}).dl()};
  const DLTensor* out[] = {o0, o1};
  return gj_function_call(id.get(), in, 2, out, 2, nullptr);
}

gj_error* Env::AllocId(Probe& p, const DLTensor* a, const DLTensor* b) {
  const DLTensor* in[] = {a, b};
  return gj_function_call_alloc(id.get(), in, 2, nullptr, p.OutTensors(2), 2);
}

gj_error* Env::Call1(Probe& p, gj_function* f,
                     std::initializer_list<const DLTensor*> inputs,
                     const DLTensor* output, const gj_call_options* options) {
  std::vector<const DLTensor*> in(inputs);
  const DLTensor* out[] = {output};
  return gj_function_call(f, in.data(), in.size(), out, 1, options);
}

gj_error* Env::Alloc1(Probe& p, gj_function* f,
                      std::initializer_list<const DLTensor*> inputs,
                      const gj_call_options* options) {
  std::vector<const DLTensor*> in(inputs);
  return gj_function_call_alloc(f, in.data(), in.size(), options,
                                p.OutTensors(1), 1);
}

gj_error* Env::Text(Probe& p, const std::string& text,
                    const gj_graph_load_options* options) {
  return gj_graph_from_text(ctx.get(), text.data(), text.size(), options,
                            p.OutGraph());
}

gj_error* Env::Proto(Probe& p, const std::string& bytes,
                     const gj_graph_load_options* options) {
  return gj_graph_from_proto(ctx.get(), bytes.data(), bytes.size(), options,
                             p.OutGraph());
}

gj_error* Env::File(Probe& p, const std::string& name,
                    const std::string& content,
                    const gj_graph_load_options* options) {
  const std::string path = WriteFile(dir + "/" + name, content);
  return gj_graph_from_file(ctx.get(), path.c_str(), options, p.OutGraph());
}

BuilderPtr Env::Builder() {
  gj_graph_builder* b = nullptr;
  EXPECT_TRUE(Ok(gj_graph_builder_create(ctx.get(), "g", &b)));
  EXPECT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  EXPECT_TRUE(Ok(gj_graph_builder_add_input(b, "y")));
  return BuilderPtr(b);
}

gj_error* Env::Node(const char* name, const char* target,
                    std::vector<gj_arg> args) {
  BuilderPtr b = Builder();
  return gj_graph_builder_add_node(b.get(), name, target, args.data(),
                                   args.size());
}

gj_error* Env::Constant(const char* name, const DLTensor* value) {
  BuilderPtr b = Builder();
  return gj_graph_builder_add_constant(b.get(), name, value);
}

gj_error* Env::CreateWith(Probe& p, const gj_function_options& options) {
  return gj_function_create(ctx.get(), graphs.front().get(), &options,
                            p.OutFunction());
}

gj_error* Env::ContextWith(Probe& p, const gj_context_options& options) {
  return gj_context_create(&options, p.OutContext());
}

}  // namespace gjtest::catalogue
