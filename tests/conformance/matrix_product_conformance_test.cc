// Matrix products (mm, addmm, bmm, and linear as torch.export writes it:
// addmm(bias, x, permute(w))) with the epilogues that fuse into them, on
// every backend against eager. On the CUDA device (jit_cuda_device_tests)
// the products must run on cuBLASLt, the emulated one: no eager step in the
// plan, and one cublasLtMatmul per product per call.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::EagerSteps;
using testing::ExpectDynamicJitMatchesEager;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using testing::Ints;
using testing::PlanOfInputs;
using testing::RandomTensor;

bool OnDevice() {
  return absl::StartsWith(testing::SharedJitBackend(), "cuda:");
}

int64_t Matmuls() { return testing::CublasLtMatmuls(); }

// `memory` [rows, cols] viewed as its transpose [cols, rows].
Tensor Transposed(const Tensor& memory) {
  return memory.AsStrided({memory.size(1), memory.size(0)},
                          {1, memory.size(1)});
}

struct GemmCase {
  std::string name;
  std::shared_ptr<const Graph> graph;
  std::vector<Tensor> inputs;
  int products = 1;  // matrix products per call
};

// x0 @ x1, with `epilogue` (a unary op's target, or "") applied after.
std::shared_ptr<const Graph> ProductGraph(const std::string& name,
                                          const std::string& product,
                                          std::vector<Arg> args, int num_inputs,
                                          const std::string& epilogue = "",
                                          Kwargs product_kwargs = {},
                                          Kwargs epilogue_kwargs = {}) {
  GraphBuilder b(name);
  for (int i = 0; i < num_inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  AddNode(b, "p", product, std::move(args), std::move(product_kwargs));
  std::string out = "p";
  if (!epilogue.empty()) {
    AddNode(b, "e", epilogue, {Arg::Ref("p")}, std::move(epilogue_kwargs));
    out = "e";
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(out)}).ok());
  return Finish(b);
}

std::vector<GemmCase> Cases(DType dtype) {
  uint64_t seed = 1;
  auto t = [&](IntSpan sizes) { return RandomTensor(dtype, sizes, seed++); };
  const Arg x0 = Arg::Ref("x0"), x1 = Arg::Ref("x1"), x2 = Arg::Ref("x2");
  const Kwargs tanh = {{"approximate", Arg::String("tanh")}};
  std::vector<GemmCase> cases;
  cases.push_back({"mm",
                   ProductGraph("mm", "aten.mm.default", {x0, x1}, 2),
                   {t({5, 7}), t({7, 3})}});
  cases.push_back({"mm_transposed_operands",
                   ProductGraph("mm_t", "aten.mm.default", {x0, x1}, 2),
                   {Transposed(t({7, 5})), Transposed(t({3, 7}))}});
  // Every other column: no unit stride, so a contiguous copy on the device.
  const Tensor wide = t({5, 14});
  cases.push_back({"mm_strided_operand",
                   ProductGraph("mm_s", "aten.mm.default", {x0, x1}, 2),
                   {wide.AsStrided({5, 7}, {14, 2}), t({7, 3})}});
  cases.push_back({"mm_relu",
                   ProductGraph("mm_relu", "aten.mm.default", {x0, x1}, 2,
                                "aten.relu.default"),
                   {t({6, 9}), t({9, 4})}});
  cases.push_back({"mm_gelu_tanh",
                   ProductGraph("mm_gelu", "aten.mm.default", {x0, x1}, 2,
                                "aten.gelu.default", {}, tanh),
                   {t({6, 9}), t({9, 4})}});
  // Exact gelu: cuBLASLt has only the tanh form, so the epilogue kernel.
  cases.push_back({"mm_gelu_erf",
                   ProductGraph("mm_erf", "aten.mm.default", {x0, x1}, 2,
                                "aten.gelu.default"),
                   {t({6, 9}), t({9, 4})}});
  cases.push_back({"addmm_row_bias",
                   ProductGraph("addmm", "aten.addmm.default", {x0, x1, x2}, 3),
                   {t({4}), t({5, 7}), t({7, 4})}});
  cases.push_back(
      {"addmm_matrix_bias_alpha_beta",
       ProductGraph("addmm_ab", "aten.addmm.default", {x0, x1, x2}, 3, "",
                    {{"beta", Arg::Float(0.5)}, {"alpha", Arg::Float(2)}}),
       {t({5, 4}), t({5, 7}), t({7, 4})}});
  cases.push_back(
      {"addmm_broadcast_column_bias",
       ProductGraph("addmm_col", "aten.addmm.default", {x0, x1, x2}, 3),
       {t({5, 1}), t({5, 7}), t({7, 4})}});
  {
    // linear + relu as torch.export writes nn.Linear: addmm(b, x, w^T).
    GraphBuilder b("linear_relu");
    for (const char* name : {"x", "w", "b"}) {
      EXPECT_TRUE(b.AddPlaceholder(name).ok());
    }
    AddNode(b, "wt", "aten.permute.default", {Arg::Ref("w"), Ints({1, 0})});
    AddNode(b, "lin", "aten.addmm.default",
            {Arg::Ref("b"), Arg::Ref("x"), Arg::Ref("wt")});
    AddNode(b, "act", "aten.relu.default", {Arg::Ref("lin")});
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("act")}).ok());
    cases.push_back(
        {"linear_relu", Finish(b), {t({8, 16}), t({12, 16}), t({12})}});
  }
  {
    GraphBuilder b("linear_gelu_residual");
    for (const char* name : {"x", "w", "b", "r"}) {
      EXPECT_TRUE(b.AddPlaceholder(name).ok());
    }
    AddNode(b, "wt", "aten.permute.default", {Arg::Ref("w"), Ints({1, 0})});
    AddNode(b, "lin", "aten.addmm.default",
            {Arg::Ref("b"), Arg::Ref("x"), Arg::Ref("wt")});
    AddNode(b, "act", "aten.gelu.default", {Arg::Ref("lin")}, tanh);
    AddNode(b, "res", "aten.add.Tensor", {Arg::Ref("act"), Arg::Ref("r")});
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("res")}).ok());
    cases.push_back({"linear_gelu_residual",
                     Finish(b),
                     {t({8, 16}), t({12, 16}), t({12}), t({8, 12})}});
  }
  // One row (a batch-1 linear layer: a matrix-vector product on the CPU),
  // the row contiguous or strided, the weight as it is or transposed.
  cases.push_back({"mm_one_row",
                   ProductGraph("mm1", "aten.mm.default", {x0, x1}, 2),
                   {t({1, 9}), t({9, 4})}});
  cases.push_back(
      {"mm_one_strided_row",
       ProductGraph("mm1s", "aten.mm.default", {x0, x1}, 2),
       {t({3, 9}).AsStrided({1, 9}, {27, 3}), Transposed(t({4, 9}))}});
  cases.push_back(
      {"addmm_one_row",
       ProductGraph("addmm1", "aten.addmm.default", {x0, x1, x2}, 3),
       {t({4}), t({1, 7}), Transposed(t({4, 7}))}});
  cases.push_back({"bmm",
                   ProductGraph("bmm", "aten.bmm.default", {x0, x1}, 2),
                   {t({3, 5, 7}), t({3, 7, 4})}});
  {
    const Tensor memory = t({3, 4, 7});
    cases.push_back({"bmm_transposed_relu",
                     ProductGraph("bmm_t", "aten.bmm.default", {x0, x1}, 2,
                                  "aten.relu.default"),
                     {t({3, 5, 7}), memory.AsStrided({3, 7, 4}, {28, 1, 7})}});
  }
  {
    // Two products in one program, the second reading the first's output.
    GraphBuilder b("mlp");
    for (const char* name : {"x", "w1", "b1", "w2"}) {
      EXPECT_TRUE(b.AddPlaceholder(name).ok());
    }
    AddNode(b, "h", "aten.addmm.default",
            {Arg::Ref("b1"), Arg::Ref("x"), Arg::Ref("w1")});
    AddNode(b, "r", "aten.relu.default", {Arg::Ref("h")});
    AddNode(b, "y", "aten.mm.default", {Arg::Ref("r"), Arg::Ref("w2")});
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
    cases.push_back({"two_layers",
                     Finish(b),
                     {t({6, 10}), t({10, 8}), t({8}), t({8, 3})},
                     /*products=*/2});
  }
  return cases;
}

TEST(MatrixProductConformanceTest, ProductsAndEpiloguesMatchEager) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const GemmCase& c : Cases(dtype)) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", DTypeName(dtype)));
      const int64_t before = Matmuls();
      ExpectJitMatchesEager(c.graph, c.inputs,
                            dtype == DType::kFloat32 ? 1e-4 : 1e-10);
      if (OnDevice()) {
        EXPECT_EQ(EagerSteps(c.graph, c.inputs), 0)
            << PlanOfInputs(*c.graph, c.inputs).ToString();
        EXPECT_EQ(Matmuls() - before, c.products);
      }
    }
  }
}

// Which epilogues cuBLASLt computes itself on the device (the plan says
// so), and which need the epilogue kernel.
TEST(MatrixProductConformanceTest,
     DevicePlansUseCublasLtEpiloguesWhereTheyApply) {
  if (!OnDevice()) GTEST_SKIP() << "device plans only";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"mm", "with cuBLASLt's epilogue none"},
      {"mm_relu", "with cuBLASLt's epilogue relu"},
      {"mm_gelu_tanh", "with cuBLASLt's epilogue gelu_tanh"},
      {"addmm_row_bias", "with cuBLASLt's epilogue bias"},
      {"linear_relu", "with cuBLASLt's epilogue relu+bias"},
      {"mm_gelu_erf", ""},
      // A full bias at beta 0.5 is cuBLASLt's C; a column bias is neither
      // C nor the bias vector.
      {"addmm_matrix_bias_alpha_beta",
       "with cuBLASLt's epilogue none and C * 0.5"},
      {"addmm_broadcast_column_bias", ""},
      {"linear_gelu_residual", ""},
  };
  const std::vector<GemmCase> cases = Cases(DType::kFloat32);
  for (const auto& [name, text] : expected) {
    SCOPED_TRACE(name);
    const GemmCase* c = nullptr;
    for (const GemmCase& candidate : cases) {
      if (candidate.name == name) c = &candidate;
    }
    ASSERT_NE(c, nullptr);
    const std::string plan = PlanOfInputs(*c->graph, c->inputs).ToString();
    EXPECT_TRUE(absl::StrContains(plan, "gemm aten.")) << plan;
    if (text.empty()) {
      EXPECT_FALSE(absl::StrContains(plan, "cuBLASLt's epilogue")) << plan;
    } else {
      EXPECT_TRUE(absl::StrContains(plan, text)) << plan;
    }
  }
}

// A dynamic entry's products: the batch (bmm) and the rows (linear) are
// symbols, one entry serves every size.
TEST(MatrixProductConformanceTest, DynamicBatchAndRows) {
  {
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 40;
    for (int64_t batch : {2, 3, 5, 8, 13}) {
      calls.push_back({RandomTensor(DType::kFloat32, {batch, 4, 6}, seed++),
                       RandomTensor(DType::kFloat32, {batch, 6, 5}, seed++)});
    }
    const int64_t before = Matmuls();
    ExpectDynamicJitMatchesEager(
        ProductGraph("bmm_dyn", "aten.bmm.default",
                     {Arg::Ref("x0"), Arg::Ref("x1")}, 2, "aten.relu.default"),
        {{0, 0}, {1, 0}}, calls, 1e-4);
    if (OnDevice()) {
      EXPECT_EQ(Matmuls() - before, 5);
    }
  }
  {
    GraphBuilder b("linear_dyn");
    for (const char* name : {"x", "w", "b"}) {
      EXPECT_TRUE(b.AddPlaceholder(name).ok());
    }
    AddNode(b, "wt", "aten.permute.default", {Arg::Ref("w"), Ints({1, 0})});
    AddNode(b, "lin", "aten.addmm.default",
            {Arg::Ref("b"), Arg::Ref("x"), Arg::Ref("wt")});
    AddNode(b, "act", "aten.relu.default", {Arg::Ref("lin")});
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("act")}).ok());
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 60;
    for (int64_t rows : {2, 3, 7, 16, 33}) {
      calls.push_back({RandomTensor(DType::kFloat32, {rows, 16}, seed++),
                       RandomTensor(DType::kFloat32, {12, 16}, seed++),
                       RandomTensor(DType::kFloat32, {12}, seed++)});
    }
    const int64_t before = Matmuls();
    ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}}, calls, 1e-4);
    if (OnDevice()) {
      EXPECT_EQ(Matmuls() - before, 5);
    }
  }
}

}  // namespace
}  // namespace guardjit
