// float16 and bfloat16 end to end on the emulated device: functions called
// through gj_function_call_alloc with kDLCUDA tensors (fused kernels on the
// SIMT emulator, products on the emulated cuBLASLt with float32 compute),
// compared with the eager backend on CPU copies at tolerances of the dtype:
// pointwise chains, a reduction, softmax, layer_norm, mm and addmm (bias
// vector and cuBLASLt's C).

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/half.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

// tanh(x * y + 0.5) and its row sums, softmax(x) over the last dim, and
// layer_norm(y) with weight w and bias b; every tensor of dtype DT.
constexpr char kNorms[] = R"pb(
  name: "norms"
  placeholders {
    name: "x"
    meta { dtype: DT sizes: 6 sizes: 40 }
  }
  placeholders {
    name: "y"
    meta { dtype: DT sizes: 6 sizes: 40 }
  }
  placeholders {
    name: "w"
    meta { dtype: DT sizes: 40 }
  }
  placeholders {
    name: "b"
    meta { dtype: DT sizes: 40 }
  }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "x" }
    args { ref: "y" }
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "mul" }
    args { f: 0.5 }
  }
  nodes {
    name: "tanh"
    target: "aten.tanh.default"
    args { ref: "add" }
  }
  nodes {
    name: "sum"
    target: "aten.sum.dim_IntList"
    args { ref: "tanh" }
    args { list { items { i: 1 } } }
  }
  nodes {
    name: "_softmax"
    target: "aten._softmax.default"
    args { ref: "x" }
    args { i: -1 }
    args { b: false }
  }
  nodes {
    name: "native_layer_norm"
    target: "aten.native_layer_norm.default"
    args { ref: "y" }
    args { list { items { i: 40 } } }
    args { ref: "w" }
    args { ref: "b" }
    args { f: 1e-05 }
  }
  nodes {
    name: "getitem"
    target: "getitem"
    args { ref: "native_layer_norm" }
    args { i: 0 }
  }
  outputs { ref: "tanh" }
  outputs { ref: "sum" }
  outputs { ref: "_softmax" }
  outputs { ref: "getitem" }
)pb";

// mm(a, m), addmm(v, a, m) (a bias vector) and addmm(c, a, m, beta 0.5,
// alpha 2) (a full bias: cuBLASLt's C); every tensor of dtype DT.
constexpr char kProducts[] = R"pb(
  name: "products"
  placeholders {
    name: "a"
    meta { dtype: DT sizes: 5 sizes: 16 }
  }
  placeholders {
    name: "m"
    meta { dtype: DT sizes: 16 sizes: 12 }
  }
  placeholders {
    name: "v"
    meta { dtype: DT sizes: 12 }
  }
  placeholders {
    name: "c"
    meta { dtype: DT sizes: 5 sizes: 12 }
  }
  nodes {
    name: "mm"
    target: "aten.mm.default"
    args { ref: "a" }
    args { ref: "m" }
  }
  nodes {
    name: "addmm"
    target: "aten.addmm.default"
    args { ref: "v" }
    args { ref: "a" }
    args { ref: "m" }
  }
  nodes {
    name: "addmm_1"
    target: "aten.addmm.default"
    args { ref: "c" }
    args { ref: "a" }
    args { ref: "m" }
    kwargs {
      key: "beta"
      value { f: 0.5 }
    }
    kwargs {
      key: "alpha"
      value { f: 2 }
    }
  }
  outputs { ref: "mm" }
  outputs { ref: "addmm" }
  outputs { ref: "addmm_1" }
)pb";

// More of what half-precision models do: gelu and sigmoid, a mean and an
// amax, log_softmax over the first dim, a where on a comparison, layer_norm's
// mean and rstd, a cast to float32, bmm, and a linear layer whose weight is
// read transposed (x @ w^T + bias, addmm on cuBLASLt).
constexpr char kModel[] = R"pb(
  name: "model"
  placeholders {
    name: "x"
    meta { dtype: DT sizes: 6 sizes: 40 }
  }
  placeholders {
    name: "w"
    meta { dtype: DT sizes: 24 sizes: 40 }
  }
  placeholders {
    name: "bias"
    meta { dtype: DT sizes: 24 }
  }
  placeholders {
    name: "q"
    meta { dtype: DT sizes: 3 sizes: 5 sizes: 8 }
  }
  placeholders {
    name: "k"
    meta { dtype: DT sizes: 3 sizes: 8 sizes: 7 }
  }
  nodes {
    name: "gelu"
    target: "aten.gelu.default"
    args { ref: "x" }
  }
  nodes {
    name: "sigmoid"
    target: "aten.sigmoid.default"
    args { ref: "gelu" }
  }
  nodes {
    name: "mean"
    target: "aten.mean.dim"
    args { ref: "sigmoid" }
    args { list { items { i: 1 } } }
    args { b: true }
  }
  nodes {
    name: "amax"
    target: "aten.amax.default"
    args { ref: "x" }
    args { list { items { i: 1 } } }
  }
  nodes {
    name: "_log_softmax"
    target: "aten._log_softmax.default"
    args { ref: "x" }
    args { i: 0 }
    args { b: false }
  }
  nodes {
    name: "gt"
    target: "aten.gt.Scalar"
    args { ref: "x" }
    args { f: 0.25 }
  }
  nodes {
    name: "where"
    target: "aten.where.self"
    args { ref: "gt" }
    args { ref: "x" }
    args { ref: "mean" }
  }
  nodes {
    name: "native_layer_norm"
    target: "aten.native_layer_norm.default"
    args { ref: "x" }
    args { list { items { i: 40 } } }
    args { none {} }
    args { none {} }
    args { f: 1e-05 }
  }
  nodes {
    name: "getitem_1"
    target: "getitem"
    args { ref: "native_layer_norm" }
    args { i: 1 }
  }
  nodes {
    name: "getitem_2"
    target: "getitem"
    args { ref: "native_layer_norm" }
    args { i: 2 }
  }
  nodes {
    name: "_to_copy"
    target: "aten._to_copy.default"
    args { ref: "where" }
    kwargs {
      key: "dtype"
      value { dtype: FLOAT32 }
    }
  }
  nodes {
    name: "bmm"
    target: "aten.bmm.default"
    args { ref: "q" }
    args { ref: "k" }
  }
  nodes {
    name: "permute"
    target: "aten.permute.default"
    args { ref: "w" }
    args {
      list {
        items { i: 1 }
        items { i: 0 }
      }
    }
  }
  nodes {
    name: "addmm"
    target: "aten.addmm.default"
    args { ref: "bias" }
    args { ref: "x" }
    args { ref: "permute" }
  }
  outputs { ref: "amax" }
  outputs { ref: "_log_softmax" }
  outputs { ref: "getitem_1" }
  outputs { ref: "getitem_2" }
  outputs { ref: "_to_copy" }
  outputs { ref: "bmm" }
  outputs { ref: "addmm" }
)pb";

// Where half precision breaks a naive kernel: row sums and means of 4096
// values near 1 (a float16 accumulator stops growing at 2048), and softmax,
// log_softmax and layer_norm of values in the hundreds (exp and squares
// overflow float16).
constexpr char kWide[] = R"pb(
  name: "wide"
  placeholders {
    name: "x"
    meta { dtype: DT sizes: 3 sizes: 4096 }
  }
  placeholders {
    name: "y"
    meta { dtype: DT sizes: 4 sizes: 64 }
  }
  nodes {
    name: "sum"
    target: "aten.sum.dim_IntList"
    args { ref: "x" }
    args { list { items { i: 1 } } }
  }
  nodes {
    name: "mean"
    target: "aten.mean.dim"
    args { ref: "x" }
    args { list { items { i: 1 } } }
  }
  nodes {
    name: "_softmax"
    target: "aten._softmax.default"
    args { ref: "y" }
    args { i: -1 }
    args { b: false }
  }
  nodes {
    name: "_log_softmax"
    target: "aten._log_softmax.default"
    args { ref: "y" }
    args { i: -1 }
    args { b: false }
  }
  nodes {
    name: "native_layer_norm"
    target: "aten.native_layer_norm.default"
    args { ref: "y" }
    args { list { items { i: 64 } } }
    args { none {} }
    args { none {} }
    args { f: 1e-05 }
  }
  nodes {
    name: "getitem"
    target: "getitem"
    args { ref: "native_layer_norm" }
    args { i: 0 }
  }
  outputs { ref: "sum" }
  outputs { ref: "mean" }
  outputs { ref: "_softmax" }
  outputs { ref: "_log_softmax" }
  outputs { ref: "getitem" }
)pb";

struct HalfCase {
  const char* name;  // the graph's dtype
  DLDataType dl;
  // |device - eager| <= tolerance * (1 + |eager|): a few units in the last
  // place of the dtype (the device computes each fused kernel in float32
  // and rounds once; eager rounds after every op).
  double tolerance;
};

void PrintTo(const HalfCase& c, std::ostream* os) { *os << c.name; }

class HalfPrecisionTest : public EmulatedFunctionTest,
                          public ::testing::WithParamInterface<HalfCase> {
 protected:
  // A device tensor of the case's dtype holding Fill(seed)'s values times
  // `scale` plus `shift`.
  std::unique_ptr<DeviceTensor<uint16_t>> Make(std::vector<int64_t> shape,
                                               uint32_t seed, float scale = 1,
                                               float shift = 0) {
    auto t = std::make_unique<DeviceTensor<uint16_t>>(std::move(shape),
                                                      GetParam().dl, kDLCUDA);
    std::vector<float> v(t->count);
    Fill(v.data(), v.size(), seed);
    for (float& e : v) e = e * scale + shift;
    for (size_t i = 0; i < v.size(); ++i) {
      t->values()[i] = GetParam().dl.code == kDLBfloat
                           ? FloatToBFloat16Bits(v[i])
                           : FloatToHalfBits(v[i]);
    }
    return t;
  }
  std::string Graph(const char* text) {
    return absl::StrReplaceAll(text, {{"DT", GetParam().name}});
  }
  // Calls `text` on the device and eagerly on the CPU, and compares every
  // output (`slack`: extra tolerance factor per output, for sums).
  void Compare(const std::string& text,
               const std::vector<const DLTensor*>& inputs,
               const std::vector<double>& slack) {
    static std::vector<std::string>* logged = new std::vector<std::string>;
    logged->clear();
    gj_set_log_callback(
        [](void*, const char* topic, const char* message) {
          if (std::string(topic) == "codegen") logged->push_back(message);
        },
        nullptr);
    gj_set_log_topics("codegen");
    gj_function* device = Load(text);
    gj_function* eager = Load(text, GJ_DYNAMIC_AUTO, GJ_BACKEND_EAGER);
    std::vector<DLDataType> want_dtypes, got_dtypes;
    const auto expected =
        CallValues(eager, inputs, /*cpu=*/true, nullptr, &want_dtypes);
    const int64_t launches = EmulatedCudaDriver::counters().launches;
    const auto got =
        CallValues(device, inputs, /*cpu=*/false, nullptr, &got_dtypes);
    gj_set_log_callback(nullptr, nullptr);
    gj_set_log_topics("");
    // No node ran on host copies (each would say so once, when compiled).
    for (const std::string& m : *logged) {
      EXPECT_EQ(m.find("host copies"), std::string::npos) << m;
    }
    launched_ = EmulatedCudaDriver::counters().launches - launches;
    ASSERT_EQ(got_dtypes.size(), want_dtypes.size());
    for (size_t k = 0; k < got_dtypes.size(); ++k) {
      EXPECT_EQ(got_dtypes[k].code, want_dtypes[k].code) << "output " << k;
      EXPECT_EQ(got_dtypes[k].bits, want_dtypes[k].bits) << "output " << k;
    }
    // The device call ran its compiled entry, not the eager interpreter.
    gj_function_stats stats;
    gj_function_stats_init(&stats);
    ASSERT_GJ_OK(gj_function_get_stats(device, &stats));
    EXPECT_EQ(stats.compiles, 1);
    EXPECT_EQ(stats.fallback_calls, 0);
    EXPECT_EQ(stats.eager_while_compiling, 0);
    ASSERT_EQ(got.size(), expected.size());
    ASSERT_EQ(got.size(), slack.size());
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].size(), expected[k].size()) << k;
      double worst = 0;
      for (size_t i = 0; i < got[k].size(); ++i) {
        const double e = expected[k][i];
        ASSERT_TRUE(std::isfinite(got[k][i])) << "output " << k << " " << i;
        worst = std::max(worst, std::fabs(got[k][i] - e) / (1 + std::fabs(e)));
        ASSERT_NEAR(got[k][i], e,
                    GetParam().tolerance * slack[k] * (1 + std::fabs(e)))
            << "output " << k << " element " << i;
      }
      RecordProperty(absl::StrCat("worst_relative_error_", k),
                     absl::StrCat(worst));
    }
  }
  int64_t launched_ = 0;  // kernels the last Compare's device call launched
};

TEST_P(HalfPrecisionTest, PointwiseReductionSoftmaxLayerNorm) {
  auto x = Make({6, 40}, 41), y = Make({6, 40}, 42), w = Make({40}, 43),
       b = Make({40}, 44);
  Compare(Graph(kNorms), {&x->dl, &y->dl, &w->dl, &b->dl}, {1, 4, 1, 2});
  // Fused kernels ran on the device.
  EXPECT_GT(launched_, 0);
}

TEST_P(HalfPrecisionTest, MatrixProductsOnCublasLt) {
  auto a = Make({5, 16}, 51), m = Make({16, 12}, 52), v = Make({12}, 53),
       c = Make({5, 12}, 54);
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  // A 16-term float32 dot product rounded once vs eager's: sums get slack.
  Compare(Graph(kProducts), {&a->dl, &m->dl, &v->dl, &c->dl}, {4, 4, 4});
  const EmulatedCublasLt::Counters after = EmulatedCublasLt::counters();
  EXPECT_EQ(after.matmuls - before.matmuls, 3);
  EXPECT_EQ(after.matmuls_reading_c - before.matmuls_reading_c, 1);
  // Every epilogue ran inside cuBLASLt.
  EXPECT_EQ(launched_, 0);
}

TEST_P(HalfPrecisionTest, ModelOpsCastsAndBatchedProducts) {
  auto x = Make({6, 40}, 61), w = Make({24, 40}, 62), bias = Make({24}, 63),
       q = Make({3, 5, 8}, 64), k = Make({3, 8, 7}, 65);
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  Compare(Graph(kModel), {&x->dl, &w->dl, &bias->dl, &q->dl, &k->dl},
          {1, 1, 2, 2, 1, 4, 8});
  // bmm and addmm ran on cuBLASLt.
  EXPECT_EQ(EmulatedCublasLt::counters().matmuls - before.matmuls, 2);
}

TEST_P(HalfPrecisionTest, LongSumsAndLargeMagnitudesAccumulateInFloat32) {
  auto x = Make({3, 4096}, 71, 0.25f, 1.0f), y = Make({4, 64}, 72, 300.0f);
  Compare(Graph(kWide), {&x->dl, &y->dl}, {1, 1, 1, 1, 1});
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, HalfPrecisionTest,
    ::testing::Values(HalfCase{"FLOAT16", {kDLFloat, 16, 1}, 2e-3},
                      HalfCase{"BFLOAT16", {kDLBfloat, 16, 1}, 1.6e-2}),
    [](const ::testing::TestParamInfo<HalfCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace guardjit
