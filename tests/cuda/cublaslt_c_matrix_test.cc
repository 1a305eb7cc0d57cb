// addmm's bias as cuBLASLt's C matrix (jit/steps/gemm_step.h's
// DeviceEpilogue::c) through gj_function_call on the emulated device, against
// the eager backend on CPU copies: a full [M, N] bias at any beta and alpha
// runs as D = act(alpha * A @ B + beta * C) in the one cublasLtMatmul (no
// epilogue kernel launched), and a bias C cannot express (a row vector at beta
// != 1, a transposed matrix) keeps the epilogue kernel.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

// addmm(bias, x [5, 7], w [7, 6], beta, alpha), optionally relu of it; the
// bias is node `bias_node` ("bias") over placeholder b of shape `bias_shape`,
// or b itself when that is empty.
std::string Addmm(const std::string& bias_shape, const std::string& bias_node,
                  double beta, double alpha, bool relu) {
  // Not an R"pb" string: its fields are filled in below.
  constexpr char kTemplate[] = R"txt(
    name: "addmm_c"
    placeholders {
      name: "b"
      meta { dtype: FLOAT32 BIAS_SHAPE }
    }
    placeholders {
      name: "x"
      meta { dtype: FLOAT32 sizes: 5 sizes: 7 }
    }
    placeholders {
      name: "w"
      meta { dtype: FLOAT32 sizes: 7 sizes: 6 }
    }
    BIAS_NODE
    nodes {
      name: "addmm"
      target: "aten.addmm.default"
      args { ref: "BIAS_REF" }
      args { ref: "x" }
      args { ref: "w" }
      kwargs { key: "beta" value { f: BETA } }
      kwargs { key: "alpha" value { f: ALPHA } }
    }
    RELU
  )txt";
  return absl::StrReplaceAll(
      kTemplate, {{"BIAS_SHAPE", bias_shape},
                  {"BIAS_NODE", bias_node},
                  {"BIAS_REF", bias_node.empty() ? "b" : "bias"},
                  {"BETA", absl::StrCat(beta)},
                  {"ALPHA", absl::StrCat(alpha)},
                  {"RELU", relu ? R"txt(
           nodes {
             name: "relu"
             target: "aten.relu.default"
             args { ref: "addmm" }
           }
           outputs { ref: "relu" })txt"
                                : R"txt(outputs { ref: "addmm" })txt"}});
}

// The bias as is: placeholder b.
constexpr char kPlainBias[] = "";
// The bias as the transpose of b [6, 5].
constexpr char kTransposedBias[] = R"pb(
  nodes {
    name: "bias"
    target: "aten.permute.default"
    args { ref: "b" }
    args {
      list {
        items { i: 1 }
        items { i: 0 }
      }
    }
  }
)pb";

class CublasLtCMatrixTest : public EmulatedFunctionTest {
 protected:
  struct Outcome {
    int64_t matmuls = 0, reading_c = 0, launches = 0;
    double beta = 0;
    int epilogue = 0;
    std::vector<std::string> plans;  // codegen logs naming the gemm
    std::string explain;             // gj_function_explain of the device
  };
  // Runs `text` on the device and eagerly on CPU copies, checks the values
  // and returns what the device call did.
  Outcome Run(const std::string& text, std::vector<int64_t> bias_shape) {
    gj_function* device = Load(text);
    gj_function* eager = Load(text, GJ_DYNAMIC_AUTO, GJ_BACKEND_EAGER);
    DeviceTensor<float> b(bias_shape, F32(), kDLCUDA);
    DeviceTensor<float> x({5, 7}, F32(), kDLCUDA), w({7, 6}, F32(), kDLCUDA);
    Fill(b.values(), b.count, 31);
    Fill(x.values(), x.count, 32);
    Fill(w.values(), w.count, 33);
    const std::vector<const DLTensor*> in = {&b.dl, &x.dl, &w.dl};
    const auto expected = CallValues(eager, in, /*cpu=*/true);
    static std::vector<std::string>* logged = new std::vector<std::string>;
    logged->clear();
    gj_set_log_callback(
        [](void*, const char* topic, const char* message) {
          const std::string m = message;
          if (std::string(topic) == "codegen" &&
              m.find("gemm aten.addmm") != std::string::npos) {
            logged->push_back(m);
          }
        },
        nullptr);
    gj_set_log_topics("codegen");
    const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
    const int64_t launches = EmulatedCudaDriver::counters().launches;
    const auto got = CallValues(device, in, /*cpu=*/false);
    const EmulatedCublasLt::Counters after = EmulatedCublasLt::counters();
    Outcome o;
    o.launches = EmulatedCudaDriver::counters().launches - launches;
    gj_set_log_callback(nullptr, nullptr);
    gj_set_log_topics("");
    o.matmuls = after.matmuls - before.matmuls;
    o.reading_c = after.matmuls_reading_c - before.matmuls_reading_c;
    o.beta = after.last_beta;
    o.epilogue = after.last_epilogue;
    o.plans = *logged;
    char* explained = nullptr;
    const Err explain_error{gj_function_explain(device, &explained)};
    EXPECT_EQ(explain_error.e, nullptr) << explain_error.message();
    o.explain = explained != nullptr ? explained : "";
    gj_string_destroy(explained);
    EXPECT_EQ(got.size(), 1u);
    EXPECT_EQ(expected.size(), 1u);
    if (got.size() == 1 && expected.size() == 1) {
      EXPECT_EQ(got[0].size(), expected[0].size());
      for (size_t i = 0; i < got[0].size() && i < expected[0].size(); ++i) {
        EXPECT_NEAR(got[0][i], expected[0][i],
                    1e-5 * (1 + std::fabs(expected[0][i])))
            << i;
      }
    }
    return o;
  }
};

bool Logged(const std::vector<std::string>& plans, const std::string& part) {
  for (const std::string& p : plans) {
    if (p.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& plans) {
  std::string out;
  for (const std::string& p : plans) out += p + "\n";
  return out;
}

TEST_F(CublasLtCMatrixTest, FullMatrixBiasWithBetaAndAlphaIsCublasLtsC) {
  const Outcome o =
      Run(Addmm("sizes: 5 sizes: 6", kPlainBias, 0.5, 2, true), {5, 6});
  EXPECT_EQ(o.matmuls, 1);
  EXPECT_EQ(o.reading_c, 1) << "the bias was not cuBLASLt's C";
  EXPECT_EQ(o.beta, 0.5);
  EXPECT_EQ(o.epilogue, CUBLASLT_EPILOGUE_RELU);
  EXPECT_EQ(o.launches, 0) << "an epilogue kernel ran";
  EXPECT_TRUE(Logged(o.plans, "cuBLASLt's epilogue relu and C * 0.5"))
      << Joined(o.plans);
  EXPECT_NE(o.explain.find("extern calls: 'addmm' (aten.addmm.default) on "
                           "cuBLASLt with the epilogue inside it"),
            std::string::npos)
      << o.explain;
}

TEST_F(CublasLtCMatrixTest, FullMatrixBiasAtBetaOneIsCublasLtsC) {
  const Outcome o =
      Run(Addmm("sizes: 5 sizes: 6", kPlainBias, 1, -1.5, false), {5, 6});
  EXPECT_EQ(o.reading_c, 1);
  EXPECT_EQ(o.beta, 1);
  EXPECT_EQ(o.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(o.launches, 0);
  EXPECT_TRUE(Logged(o.plans, "cuBLASLt's epilogue none and C * 1"))
      << Joined(o.plans);
}

// A row bias at beta 1 stays the epilogue's bias vector.
TEST_F(CublasLtCMatrixTest, RowBiasAtBetaOneIsTheBiasVector) {
  const Outcome o = Run(Addmm("sizes: 6", kPlainBias, 1, 3, false), {6});
  EXPECT_EQ(o.reading_c, 0);
  EXPECT_EQ(o.epilogue, CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(o.launches, 0);
}

// What neither C nor the bias vector expresses keeps the epilogue kernel,
// with the same values.
TEST_F(CublasLtCMatrixTest, OtherBiasesKeepTheEpilogueKernel) {
  const Outcome row = Run(Addmm("sizes: 6", kPlainBias, 0.5, 2, true), {6});
  EXPECT_EQ(row.matmuls, 1);
  EXPECT_EQ(row.reading_c, 0);
  EXPECT_EQ(row.launches, 1);
  EXPECT_NE(row.explain.find("'addmm' (aten.addmm.default) on cuBLASLt with "
                             "an epilogue kernel"),
            std::string::npos)
      << row.explain;
  const Outcome transposed =
      Run(Addmm("sizes: 6 sizes: 5", kTransposedBias, 0.5, 2, false), {6, 5});
  EXPECT_EQ(transposed.matmuls, 1);
  EXPECT_EQ(transposed.reading_c, 0);
  EXPECT_EQ(transposed.launches, 1);
}

}  // namespace
}  // namespace guardjit
