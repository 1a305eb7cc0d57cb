// Calls of builder-made graphs that use real ops (add, mul, relu, cat, sum,
// mm): values, argument binding errors, op errors, layouts and threads.

#include <cstdint>
#include <thread>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::BuilderPtr;
using gjtest::ContextPtr;
using gjtest::Floats;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::ManagedPtr;
using gjtest::Ok;

class CapiOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { context_ = gjtest::MakeContext(); }

  // relu(a + 2 * b) * 3
  GraphPtr AddReluMul() {
    return gjtest::BuildGraph(
        context_.get(), "add_relu_mul", {"a", "b"},
        [](gj_graph_builder* b) {
          gj_arg add[] = {gj_arg_ref("a"), gj_arg_ref("b"),
                          gj_kwarg("alpha", gj_arg_int(2))};
          EXPECT_TRUE(Ok(
              gj_graph_builder_add_node(b, "add", "aten.add.Tensor", add, 3)));
          gj_arg relu[] = {gj_arg_ref("add")};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "relu", "aten.relu.default", relu, 1)));
          gj_arg mul[] = {gj_arg_ref("relu"), gj_arg_int(3)};
          EXPECT_TRUE(Ok(
              gj_graph_builder_add_node(b, "mul", "aten.mul.Tensor", mul, 2)));
        },
        {"mul"});
  }

  // Runs a one-output function on float inputs and returns the values.
  std::vector<float> Run1(gj_function* function, std::vector<DLTensor*> inputs,
                          std::vector<int64_t>* shape = nullptr) {
    std::vector<const DLTensor*> in(inputs.begin(), inputs.end());
    DLManagedTensor* out = nullptr;
    EXPECT_TRUE(Ok(gj_function_call_alloc(function, in.data(), in.size(),
                                          nullptr, &out, 1)));
    if (out == nullptr) return {};
    ManagedPtr owned(out);
    if (shape != nullptr) *shape = gjtest::Shape(out->dl_tensor);
    return Floats(out->dl_tensor);
  }

  ContextPtr context_;
};

TEST_F(CapiOpsTest, AddReluMulWithKeywordArgument) {
  GraphPtr graph = AddReluMul();
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  HostTensor<float> a({2, 2}, {1, -5, 3, 0});
  HostTensor<float> b({2}, {1, 1});  // broadcast over rows
  std::vector<int64_t> shape;
  EXPECT_EQ(Run1(function.get(), {a.dl(), b.dl()}, &shape),
            (std::vector<float>{9, 0, 15, 6}));
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2}));
}

TEST_F(CapiOpsTest, StridedInputsAndStridedOutput) {
  GraphPtr graph = AddReluMul();
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  // a = [[1, -5], [3, 0]] column-major; b = [1, 1] with stride 2.
  HostTensor<float> a({2, 2}, {1, 3, -5, 0}, {1, 2});
  HostTensor<float> b({2}, {1, 99, 1}, {2});
  HostTensor<float> out({2, 2}, std::vector<float>(6, -1),
                        {3, 1});  // padded rows
  const DLTensor* inputs[] = {a.dl(), b.dl()};
  const DLTensor* outputs[] = {out.dl()};
  ASSERT_TRUE(
      Ok(gj_function_call(function.get(), inputs, 2, outputs, 1, nullptr)));
  EXPECT_EQ(out.buffer(), (std::vector<float>{9, 0, -1, 15, 6, -1}));
}

TEST_F(CapiOpsTest, CatSumAndMm) {
  GraphPtr graph = gjtest::BuildGraph(
      context_.get(), "cat_sum_mm", {"x", "y", "m"},
      [](gj_graph_builder* b) {
        const char* parts[] = {"x", "y"};
        gj_arg cat[] = {gj_arg_refs(parts, 2), gj_arg_int(0)};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(b, "cat", "aten.cat.default", cat, 2)));
        gj_arg sum[] = {gj_arg_ref("cat")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(b, "sum", "aten.sum.default", sum, 1)));
        gj_arg mm[] = {gj_arg_ref("cat"), gj_arg_ref("m")};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "mm", "aten.mm.default", mm, 2)));
      },
      {"cat", "sum", "mm"});
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  HostTensor<float> x({1, 2}, {1, 2});
  HostTensor<float> y({2, 2}, {3, 4, 5, 6});
  HostTensor<float> m({2, 1}, {1, -1});
  const DLTensor* inputs[] = {x.dl(), y.dl(), m.dl()};
  DLManagedTensor* out[3] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function.get(), inputs, 3, nullptr, out, 3)));
  ManagedPtr cat(out[0]), sum(out[1]), mm(out[2]);
  EXPECT_EQ(gjtest::Shape(out[0]->dl_tensor), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Floats(out[0]->dl_tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[1]->dl_tensor.ndim, 0);
  EXPECT_EQ(Floats(out[1]->dl_tensor), (std::vector<float>{21}));
  EXPECT_EQ(Floats(out[2]->dl_tensor), (std::vector<float>{-1, -1, -1}));
}

TEST_F(CapiOpsTest, IntegerSumKeepsInt64) {
  GraphPtr graph =
      gjtest::BuildGraph(context_.get(), "isum", {"x"},
                         [](gj_graph_builder* b) {
                           gj_arg sum[] = {gj_arg_ref("x")};
                           EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                               b, "sum", "aten.sum.default", sum, 1)));
                         },
                         {"sum"});
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  HostTensor<int32_t> x({3}, {1, 2, 3});
  const DLTensor* inputs[] = {x.dl()};
  DLManagedTensor* out = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function.get(), inputs, 1, nullptr, &out, 1)));
  ManagedPtr owned(out);
  EXPECT_EQ(out->dl_tensor.dtype.code, kDLInt);
  EXPECT_EQ(out->dl_tensor.dtype.bits, 64);
  EXPECT_EQ(*static_cast<int64_t*>(out->dl_tensor.data), 6);
}

TEST_F(CapiOpsTest, BindingErrorsNameNodeAndArgument) {
  gj_graph_builder* raw = nullptr;
  ASSERT_TRUE(Ok(gj_graph_builder_create(context_.get(), "g", &raw)));
  BuilderPtr builder(raw);
  gj_graph_builder* b = builder.get();
  ASSERT_TRUE(Ok(gj_graph_builder_add_input(b, "x")));
  gj_arg undefined[] = {gj_arg_ref("x"), gj_arg_ref("nope")};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "add", "aten.add.Tensor", undefined, 2),
      GJ_INVALID_ARGUMENT, {"node 'add'", "'nope'", "not defined"}));
  gj_arg wrong_kind[] = {gj_arg_ref("x"), gj_arg_string("two")};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "add", "aten.add.Tensor", wrong_kind, 2),
      GJ_INVALID_ARGUMENT, {"node 'add'", "argument 'other'", "str"}));
  gj_arg missing[] = {gj_arg_ref("x")};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "add", "aten.add.Tensor", missing, 1),
      GJ_INVALID_ARGUMENT, {"node 'add'", "missing", "'other'"}));
  gj_arg bad_kwarg[] = {gj_arg_ref("x"), gj_arg_ref("x"),
                        gj_kwarg("beta", gj_arg_int(1))};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "add", "aten.add.Tensor", bad_kwarg, 3),
      GJ_INVALID_ARGUMENT, {"node 'add'", "'beta'"}));
  gj_arg too_many[] = {gj_arg_ref("x"), gj_arg_ref("x"), gj_arg_ref("x"),
                       gj_arg_ref("x")};
  EXPECT_TRUE(IsError(
      gj_graph_builder_add_node(b, "add", "aten.add.Tensor", too_many, 4),
      GJ_INVALID_ARGUMENT, {"node 'add'", "positional"}));
  // The failures left no trace: the same name is still free.
  gj_arg good[] = {gj_arg_ref("x"), gj_arg_ref("x")};
  EXPECT_TRUE(
      Ok(gj_graph_builder_add_node(b, "add", "aten.add.Tensor", good, 2)));
  EXPECT_TRUE(
      IsError(gj_graph_builder_add_node(b, "add", "aten.add.Tensor", good, 2),
              GJ_INVALID_ARGUMENT, {"duplicate", "'add'"}));
}

TEST_F(CapiOpsTest, OpShapeErrorNamesTheNode) {
  GraphPtr graph = AddReluMul();
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  HostTensor<float> a({2}, {1, 2});
  HostTensor<float> b({3}, {1, 2, 3});
  const DLTensor* inputs[] = {a.dl(), b.dl()};
  DLManagedTensor* out = reinterpret_cast<DLManagedTensor*>(0x1);
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function.get(), inputs, 2, nullptr, &out, 1),
      GJ_INVALID_ARGUMENT,
      {"gj_function_call_alloc", "'add_relu_mul'", "node 'add'"}));
  EXPECT_EQ(out, nullptr);
}

TEST_F(CapiOpsTest, EightThreadsOnOneFunction) {
  GraphPtr graph = AddReluMul();
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  constexpr int kThreads = 8;
  constexpr int kCalls = 200;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const int n = 1 + (t + c) % 17;  // shapes differ across threads
        std::vector<float> av(n), bv(n), want(n);
        for (int i = 0; i < n; ++i) {
          av[i] = static_cast<float>(t - i);
          bv[i] = static_cast<float>(c % 5 - 2);
          float s = av[i] + 2 * bv[i];
          want[i] = 3 * (s > 0 ? s : 0);
        }
        HostTensor<float> a({n}, av);
        HostTensor<float> b({n}, bv);
        HostTensor<float> out({n}, std::vector<float>(n));
        const DLTensor* inputs[] = {a.dl(), b.dl()};
        const DLTensor* outputs[] = {out.dl()};
        gj_error* error =
            gj_function_call(function.get(), inputs, 2, outputs, 1, nullptr);
        if (error != nullptr || out.buffer() != want) ++wrong[t];
        gj_error_destroy(error);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
