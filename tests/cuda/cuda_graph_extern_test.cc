// reduce-overhead mode (runtime/cuda/cuda_graph.h) on entries whose matrix
// products run on cuBLASLt: the products are captured into the graph as
// extern calls, and their operands that are call inputs or outputs are read
// in place or staged through the key's pool (memcpy nodes, patched when the
// caller's tensors move). On the emulated device with the emulated cuBLASLt
// (whose matmuls on a capturing stream become nodes of the graph, run by
// each launch of it), every driver call recorded (recording_driver.h).
//
// A graph node that was not patched reads the memory it was captured with,
// and a cuBLASLt node reads the pointers it was captured with: a replay that
// missed a move computes from stale memory, which the checks against the
// CPU below see.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cublaslt_api.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/cuda_graph_test_util.h"
#include "tests/cuda/recording_driver.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// An MLP as torch.compile lowers nn.Linear layers for inference:
// addmm(b_i, h, permute(w_i)), relu between layers; the weights and biases
// are inputs (x, w0, b0, w1, b1, ...), so tests can move them. dims[0] is
// the input's width, dims[i + 1] layer i's.
std::string Mlp(const std::vector<int64_t>& dims, int64_t batch) {
  auto tensor = [](const std::string& name, std::vector<int64_t> sizes) {
    std::string meta;
    for (int64_t s : sizes) absl::StrAppend(&meta, " sizes: ", s);
    return absl::StrCat("placeholders { name: \"", name,
                        "\" meta { dtype: FLOAT32", meta, " } }\n");
  };
  std::string text = "name: \"mlp\"\n" + tensor("x", {batch, dims[0]});
  const size_t layers = dims.size() - 1;
  for (size_t i = 0; i < layers; ++i) {
    text += tensor(absl::StrCat("w", i), {dims[i + 1], dims[i]});
    text += tensor(absl::StrCat("b", i), {dims[i + 1]});
  }
  std::string h = "x";
  for (size_t i = 0; i < layers; ++i) {
    absl::StrAppend(&text, "nodes { name: \"t", i,
                    "\" target: \"aten.permute.default\" args { ref: \"w", i,
                    "\" } args { list { items { i: 1 } items { i: 0 } } } }\n");
    absl::StrAppend(&text, "nodes { name: \"fc", i,
                    "\" target: \"aten.addmm.default\" args { ref: \"b", i,
                    "\" } args { ref: \"", h, "\" } args { ref: \"t", i,
                    "\" } }\n");
    h = absl::StrCat("fc", i);
    if (i + 1 < layers) {
      absl::StrAppend(&text, "nodes { name: \"relu", i,
                      "\" target: \"aten.relu.default\" args { ref: \"", h,
                      "\" } }\n");
      h = absl::StrCat("relu", i);
    }
  }
  absl::StrAppend(&text, "outputs { ref: \"", h, "\" }\n");
  return text;
}

using CudaGraphExternTest = ReduceOverheadTest;

std::vector<const DLTensor*> Dl(
    const std::vector<const FloatDeviceTensor*>& ts) {
  std::vector<const DLTensor*> out;
  for (const FloatDeviceTensor* t : ts) out.push_back(&t->dl);
  return out;
}

// `fn` on CPU copies of `inputs`: the output's values (the eager-equivalent
// reference: the CPU entry computes with BLAS).
std::vector<float> CpuResult(
    gj_function* fn, const std::vector<const FloatDeviceTensor*>& inputs) {
  std::vector<DLTensor> cpu;
  for (const FloatDeviceTensor* t : inputs) {
    DLTensor c = t->dl;
    c.device = {kDLCPU, 0};
    cpu.push_back(c);
  }
  std::vector<const DLTensor*> ptrs;
  for (DLTensor& c : cpu) ptrs.push_back(&c);
  DLManagedTensor* out = nullptr;
  Err e{gj_function_call_alloc(fn, ptrs.data(), ptrs.size(), nullptr, &out, 1)};
  EXPECT_EQ(e.e, nullptr) << e.message();
  if (out == nullptr) return {};
  int64_t n = 1;
  for (int d = 0; d < out->dl_tensor.ndim; ++d) n *= out->dl_tensor.shape[d];
  const float* p = static_cast<const float*>(out->dl_tensor.data);
  std::vector<float> values(p, p + n);
  gj_tensor_release(out);
  return values;
}

// Runs `fn` on device `inputs`: into `output` when given, else into fresh
// memory (gj_function_call_alloc); returns the values it computed.
std::vector<float> DeviceResult(
    gj_function* fn, const std::vector<const FloatDeviceTensor*>& inputs,
    FloatDeviceTensor* output) {
  const std::vector<const DLTensor*> in = Dl(inputs);
  if (output != nullptr) {
    const DLTensor* out[] = {&output->dl};
    Err e{gj_function_call(fn, in.data(), in.size(), out, 1, nullptr)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    return output->values;
  }
  DLManagedTensor* out = nullptr;
  Err e{gj_function_call_alloc(fn, in.data(), in.size(), nullptr, &out, 1)};
  EXPECT_EQ(e.e, nullptr) << e.message();
  if (out == nullptr) return {};
  int64_t n = 1;
  for (int d = 0; d < out->dl_tensor.ndim; ++d) n *= out->dl_tensor.shape[d];
  const float* p = static_cast<const float*>(out->dl_tensor.data);
  std::vector<float> values(p, p + n);
  gj_tensor_release(out);
  return values;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-3 + 1e-4 * std::fabs(want[i]))
        << what << ", element " << i;
  }
}

// Calls `fn` into `y` and checks it against the CPU; returns the driver
// calls the device call made.
std::vector<RecordedCall> CallAndCheck(
    gj_function* fn, const std::vector<const FloatDeviceTensor*>& inputs,
    FloatDeviceTensor& y, const std::string& what) {
  const std::vector<float> want = CpuResult(fn, inputs);
  RecordingCudaDriver::Take();
  const std::vector<float> got = DeviceResult(fn, inputs, &y);
  std::vector<RecordedCall> calls = RecordingCudaDriver::Take();
  ExpectNear(got, want, what);
  return calls;
}

const std::vector<std::string> kRecapture = {
    "cuGraphExecDestroy", "cuGraphDestroy", "cuStreamBeginCapture"};
const std::vector<std::string> kInstantiateAndLaunch = {
    "cuStreamEndCapture", "cuGraphInstantiate", "cuGraphLaunch"};

// linear -> relu -> linear, batch 1: both products on cuBLASLt with their
// epilogues (bias, relu) inside it, so the entry launches no kernel of its
// own. w0 is 1.25 MiB (over max_staged_bytes' default of 1 MiB), the rest
// small.
TEST_F(CudaGraphExternTest, LinearReluLinearCallSequence) {
  constexpr int64_t kIn = 640, kHidden = 512, kOut = 8;
  gj_function* fn = Load(Mlp({kIn, kHidden, kOut}, 1), GJ_MODE_REDUCE_OVERHEAD,
                         GJ_DYNAMIC_STATIC);
  FloatDeviceTensor x({1, kIn}), w0({kHidden, kIn}), b0({kHidden}),
      w1({kOut, kHidden}), b1({kOut}), y({1, kOut});
  ASSERT_GT(w0.values.size() * sizeof(float), size_t{1} << 20);
  x.Fill(1, 1);
  w0.Fill(2, 0.05f);
  b0.Fill(3, 1);
  w1.Fill(4, 0.05f);
  b1.Fill(5, 1);
  std::vector<const FloatDeviceTensor*> in = {&x, &w0, &b0, &w1, &b1};
  auto counters = [] { return EmulatedCublasLt::counters(); };

  // 1: warm-up: plain calls, cuBLASLt runs both products at once.
  EmulatedCublasLt::Counters before = counters();
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "warm-up")),
              ElementsAre());
  EXPECT_EQ(counters().matmuls - before.matmuls, 2);
  EXPECT_EQ(counters().captured_matmuls - before.captured_matmuls, 0);

  // 2: capture (both products enqueued on the capture stream become nodes),
  // instantiate, launch: the launch runs them.
  before = counters();
  x.Fill(6, 1);
  EXPECT_EQ(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "capture")),
            Concat({{"cuStreamBeginCapture"}, kInstantiateAndLaunch}));
  EXPECT_EQ(counters().captured_matmuls - before.captured_matmuls, 2);
  EXPECT_EQ(counters().matmuls - before.matmuls, 2);

  // 3: same addresses, new values everywhere (weights changed in place):
  // one cuGraphLaunch, which sees the new values.
  x.Fill(7, 1);
  w0.Fill(8, 0.05f);
  b1.Fill(9, 1);
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "replay")),
              ElementsAre("cuGraphLaunch"));

  // 4: x moved: it is small, so from now on it is staged through the pool:
  // one re-capture with a copy of x before the first product.
  FloatDeviceTensor x2({1, kIn});
  x2.Fill(10, 1);
  in[0] = &x2;
  const std::vector<RecordedCall> staged =
      CallAndCheck(fn, in, y, "x moved (staged)");
  EXPECT_EQ(RecordingCudaDriver::Names(staged),
            Concat({kRecapture, {"cuMemcpyDtoDAsync"}, kInstantiateAndLaunch}));
  ASSERT_EQ(staged.size(), 7u);
  EXPECT_EQ(staged[3].params[1], x2.address());  // src
  EXPECT_EQ(staged[3].params[2], kIn * sizeof(float));
  EXPECT_EQ(Stats(fn).cuda_graph_recaptures, 1);

  // 5, 6: x moves on every call: one copy-node patch each, no re-capture.
  for (const FloatDeviceTensor* next : {&x, &x2}) {
    in[0] = next;
    const std::vector<RecordedCall> moved =
        CallAndCheck(fn, in, y, "x moved (patched)");
    EXPECT_THAT(RecordingCudaDriver::Names(moved),
                ElementsAre("cuGraphExecMemcpyNodeSetParams", "cuGraphLaunch"));
    ASSERT_EQ(moved.size(), 2u);
    EXPECT_EQ(moved[0].params[1], next->address());
  }
  EXPECT_EQ(Stats(fn).cuda_graph_recaptures, 1);

  // 7: w0 (1.25 MiB, over max_staged_bytes) moved: re-captured reading it
  // where it is now, not staged.
  FloatDeviceTensor w0b({kHidden, kIn});
  w0b.Fill(11, 0.05f);
  in[1] = &w0b;
  EXPECT_EQ(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "w0 moved")),
            Concat({kRecapture, {"cuMemcpyDtoDAsync"}, kInstantiateAndLaunch}));
  EXPECT_EQ(Stats(fn).cuda_graph_recaptures, 2);
  // 8: then replays alone.
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "after w0")),
              ElementsAre("cuGraphLaunch"));

  // 9: a new destination: the output is staged too (a copy out after the
  // last product), once; 10: then patched.
  FloatDeviceTensor y2({1, kOut});
  EXPECT_EQ(RecordingCudaDriver::Names(CallAndCheck(fn, in, y2, "y moved")),
            Concat({kRecapture,
                    {"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync"},
                    kInstantiateAndLaunch}));
  const std::vector<RecordedCall> back =
      CallAndCheck(fn, in, y, "y moved back");
  EXPECT_THAT(RecordingCudaDriver::Names(back),
              ElementsAre("cuGraphExecMemcpyNodeSetParams", "cuGraphLaunch"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].params[0], y.address());  // dst

  // 11: two small operands moved at once (b0 and w1): both staged, one
  // re-capture; the copies in op order (x and b0 before fc0, w1 before fc1,
  // y after it).
  FloatDeviceTensor b0b({kHidden}), w1b({kOut, kHidden});
  b0b.Fill(12, 1);
  w1b.Fill(13, 0.05f);
  in[2] = &b0b;
  in[3] = &w1b;
  const std::vector<RecordedCall> both =
      CallAndCheck(fn, in, y, "b0 and w1 moved");
  EXPECT_EQ(RecordingCudaDriver::Names(both),
            Concat({kRecapture,
                    {"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync",
                     "cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync"},
                    kInstantiateAndLaunch}));
  ASSERT_EQ(both.size(), 10u);
  EXPECT_EQ(both[4].params[1], b0b.address());
  EXPECT_EQ(both[5].params[1], w1b.address());

  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 5);
  EXPECT_EQ(s.cuda_graph_recaptures, 4);
  EXPECT_EQ(s.cuda_graph_replays, 10);
  EXPECT_EQ(s.cuda_graph_pointer_updates, 3);
  const std::string explain = Explain(fn);
  EXPECT_THAT(explain,
              HasSubstr("2 cuBLASLt steps captured, 4 operands staged through "
                        "the pool (input 0 of node 'fc0', output 0 of node "
                        "'fc1', input 2 of node 'fc0', input 3 of node "
                        "'fc1')"));
}

// A product whose epilogue cuBLASLt cannot compute (sigmoid): cuBLASLt
// writes the product into the key's pool and the epilogue kernel, a node of
// ours, reads it there and writes the output (patched when it moves).
TEST_F(CudaGraphExternTest, EpilogueKernelReadsTheProductFromThePool) {
  std::string text = Mlp({16, 8}, 2);
  text.replace(text.find("outputs"), std::string::npos,
               "nodes { name: \"act\" target: \"aten.sigmoid.default\" "
               "args { ref: \"fc0\" } }\noutputs { ref: \"act\" }\n");
  gj_function* fn = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_STATIC);
  FloatDeviceTensor x({2, 16}), x2({2, 16}), w({8, 16}), b({8}), y({2, 8}),
      y2({2, 8});
  x.Fill(1, 1);
  x2.Fill(2, 1);
  w.Fill(3, 0.3f);
  b.Fill(4, 1);
  std::vector<const FloatDeviceTensor*> in = {&x, &w, &b};
  const std::vector<RecordedCall> warm = CallAndCheck(fn, in, y, "warm-up");
  ASSERT_THAT(RecordingCudaDriver::Names(warm), ElementsAre("cuLaunchKernel"))
      << "the epilogue kernel";
  const std::vector<RecordedCall> capture = CallAndCheck(fn, in, y, "capture");
  EXPECT_EQ(RecordingCudaDriver::Names(capture),
            Concat({{"cuStreamBeginCapture", "cuLaunchKernel"},
                    kInstantiateAndLaunch}));
  in[0] = &x2;
  const std::vector<RecordedCall> x_moved =
      CallAndCheck(fn, in, y2, "x and y moved");
  // x staged (one re-capture, a copy before the product), y patched in the
  // epilogue kernel's node from then on.
  EXPECT_EQ(RecordingCudaDriver::Names(x_moved),
            Concat({kRecapture,
                    {"cuMemcpyDtoDAsync", "cuLaunchKernel"},
                    kInstantiateAndLaunch}));
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "y back")),
              ElementsAre("cuGraphExecKernelNodeSetParams", "cuGraphLaunch"));
  EXPECT_THAT(Explain(fn),
              HasSubstr("1 cuBLASLt step captured, 1 operand staged through "
                        "the pool (input 0 of node 'fc0')"));
}

// The re-capture for a large operand is logged, naming node and operand.
TEST_F(CudaGraphExternTest, LargeOperandMoveIsLoggedWithNodeAndOperand) {
  static std::vector<std::string>* logged = new std::vector<std::string>;
  logged->clear();
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "cudagraphs") logged->push_back(message);
      },
      nullptr);
  gj_set_log_topics("cudagraphs");
  constexpr int64_t kIn = 640, kHidden = 512, kOut = 8;
  gj_function* fn = Load(Mlp({kIn, kHidden, kOut}, 1), GJ_MODE_REDUCE_OVERHEAD,
                         GJ_DYNAMIC_STATIC);
  FloatDeviceTensor x({1, kIn}), w0({kHidden, kIn}), w0b({kHidden, kIn}),
      b0({kHidden}), w1({kOut, kHidden}), b1({kOut}), y({1, kOut});
  x.Fill(1, 1);
  w0.Fill(2, 0.05f);
  w0b.Fill(3, 0.05f);
  std::vector<const FloatDeviceTensor*> in = {&x, &w0, &b0, &w1, &b1};
  for (int i = 0; i < 3; ++i) {
    in[1] = i < 2 ? &w0 : &w0b;
    CallAndCheck(fn, in, y, absl::StrCat("call ", i));
  }
  bool found = false;
  for (const std::string& m : *logged) {
    found |= m.find(
                 "re-capturing size key []: cuBLASLt operand B (input 1 of "
                 "node 'fc0', 1.2 MiB) moved; it is over max_staged_bytes "
                 "(1.0 MiB)") != std::string::npos;
  }
  EXPECT_TRUE(found) << ::testing::PrintToString(*logged);
}

// A 2-D convolution node: conv(x, w, bias or none) at stride 1, `padding`,
// dilation 1, groups 1.
std::string ConvNode(const std::string& bias, int64_t padding) {
  const std::string pad = absl::StrCat("args { list { items { i: ", padding,
                                       " } items { i: ", padding, " } } }\n");
  const std::string ones = "args { list { items { i: 1 } items { i: 1 } } }\n";
  return absl::StrCat(
      "nodes { name: \"conv\" target: \"aten.convolution.default\"\n"
      "args { ref: \"x\" } args { ref: \"w\" } ",
      bias.empty() ? "args { none {} }\n"
                   : absl::StrCat("args { ref: \"", bias, "\" }\n"),
      ones, pad, ones,
      "args { b: false } args { list { items { i: 0 } items { i: 0 } } } "
      "args { i: 1 } }\n");
}

std::string Placeholder(const std::string& name, std::vector<int64_t> sizes) {
  std::string meta;
  for (int64_t s : sizes) absl::StrAppend(&meta, " sizes: ", s);
  return absl::StrCat("placeholders { name: \"", name,
                      "\" meta { dtype: FLOAT32", meta, " } }\n");
}

// conv(x, w, b, padding 1) + r, relu (the ResNet block's tail): an im2col
// kernel of ours reads x, one cuBLASLt product reads w (a call input, read
// where the caller keeps it) and the column matrices (the key's pool) into
// the pool, and the epilogue kernel (bias, residual, relu) reads the
// product there and writes y. x, r and y moving are node patches of our
// kernels, no re-capture; w (432 bytes) moving stages it once.
TEST_F(CudaGraphExternTest, ConvBlockCallSequence) {
  const std::string text = absl::StrCat(
      "name: \"conv_block\"\n", Placeholder("x", {2, 3, 8, 8}),
      Placeholder("w", {4, 3, 3, 3}), Placeholder("b", {4}),
      Placeholder("r", {2, 4, 8, 8}), ConvNode("b", 1),
      "nodes { name: \"sum\" target: \"aten.add.Tensor\" args { ref: "
      "\"conv\" } args { ref: \"r\" } }\n"
      "nodes { name: \"act\" target: \"aten.relu.default\" args { ref: "
      "\"sum\" } }\noutputs { ref: \"act\" }\n");
  gj_function* fn = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_STATIC);
  FloatDeviceTensor x({2, 3, 8, 8}), x2({2, 3, 8, 8}), w({4, 3, 3, 3}),
      w2({4, 3, 3, 3}), b({4}), r({2, 4, 8, 8}), r2({2, 4, 8, 8}),
      y({2, 4, 8, 8}), y2({2, 4, 8, 8});
  x.Fill(1, 1);
  x2.Fill(2, 1);
  w.Fill(3, 0.5f);
  w2.Fill(4, 0.5f);
  b.Fill(5, 1);
  r.Fill(6, 1);
  r2.Fill(7, 1);
  std::vector<const FloatDeviceTensor*> in = {&x, &w, &b, &r};
  auto counters = [] { return EmulatedCublasLt::counters(); };

  // 1: warm-up: plain launches of the im2col and epilogue kernels, the
  // product on cuBLASLt between them.
  EmulatedCublasLt::Counters before = counters();
  const std::vector<RecordedCall> warm = CallAndCheck(fn, in, y, "warm-up");
  ASSERT_THAT(RecordingCudaDriver::Names(warm),
              ElementsAre("cuLaunchKernel", "cuLaunchKernel"));
  const CUfunction im2col = warm[0].function;
  EXPECT_EQ(counters().matmuls - before.matmuls, 1);

  // 2: capture: both kernels and the product (a node of the graph, run by
  // the launch).
  before = counters();
  x.Fill(8, 1);
  EXPECT_EQ(
      RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "capture")),
      Concat({{"cuStreamBeginCapture", "cuLaunchKernel", "cuLaunchKernel"},
              kInstantiateAndLaunch}));
  EXPECT_EQ(counters().captured_matmuls - before.captured_matmuls, 1);

  // 3: same addresses, new values (w changed in place): one launch.
  x.Fill(9, 1);
  w.Fill(10, 0.5f);
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "replay")),
              ElementsAre("cuGraphLaunch"));

  // 4: x moved: only the im2col kernel reads it: its node is patched, no
  // re-capture, nothing staged.
  in[0] = &x2;
  const std::vector<RecordedCall> x_moved = CallAndCheck(fn, in, y, "x moved");
  ASSERT_THAT(RecordingCudaDriver::Names(x_moved),
              ElementsAre("cuGraphExecKernelNodeSetParams", "cuGraphLaunch"));
  EXPECT_EQ(x_moved[0].function, im2col);
  EXPECT_THAT(x_moved[0].params, ::testing::Contains(x2.address()));

  // 5: r and y moved: both in the epilogue kernel's node: one patch.
  in[3] = &r2;
  const std::vector<RecordedCall> ry_moved =
      CallAndCheck(fn, in, y2, "r and y moved");
  ASSERT_THAT(RecordingCudaDriver::Names(ry_moved),
              ElementsAre("cuGraphExecKernelNodeSetParams", "cuGraphLaunch"));
  EXPECT_NE(ry_moved[0].function, im2col);
  EXPECT_THAT(ry_moved[0].params, ::testing::Contains(r2.address()));
  EXPECT_THAT(ry_moved[0].params, ::testing::Contains(y2.address()));
  EXPECT_EQ(Stats(fn).cuda_graph_recaptures, 0);

  // 6: w moved: cuBLASLt reads it, and it is small: staged through the
  // pool from now on (one re-capture, a copy before the product); 7: then
  // a copy-node patch.
  in[1] = &w2;
  const std::vector<RecordedCall> w_moved =
      CallAndCheck(fn, in, y2, "w moved (staged)");
  EXPECT_EQ(RecordingCudaDriver::Names(w_moved),
            Concat({kRecapture,
                    {"cuLaunchKernel", "cuMemcpyDtoDAsync", "cuLaunchKernel"},
                    kInstantiateAndLaunch}));
  ASSERT_EQ(w_moved.size(), 9u);
  EXPECT_EQ(w_moved[4].params[1], w2.address());  // src
  EXPECT_EQ(w_moved[4].params[2], w2.values.size() * sizeof(float));
  in[1] = &w;
  const std::vector<RecordedCall> w_back =
      CallAndCheck(fn, in, y2, "w moved back (patched)");
  ASSERT_THAT(RecordingCudaDriver::Names(w_back),
              ElementsAre("cuGraphExecMemcpyNodeSetParams", "cuGraphLaunch"));
  EXPECT_EQ(w_back[0].params[1], w.address());

  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 2);
  EXPECT_EQ(s.cuda_graph_recaptures, 1);
  EXPECT_EQ(s.cuda_graph_replays, 6);
  EXPECT_EQ(s.cuda_graph_pointer_updates, 3);
  EXPECT_THAT(Explain(fn),
              HasSubstr("1 cuBLASLt step captured, 1 operand staged through "
                        "the pool (input 1 of node 'conv')"));
}

// A pointwise convolution (1x1, no bias): cuBLASLt reads x in place and
// writes y itself (no kernel of ours at all), so both follow the extern
// operand policy: direct first, staged once they move.
TEST_F(CudaGraphExternTest, PointwiseConvReadsTheInputInPlace) {
  const std::string text =
      absl::StrCat("name: \"pointwise\"\n", Placeholder("x", {2, 4, 5, 5}),
                   Placeholder("w", {6, 4, 1, 1}), ConvNode("", 0),
                   "outputs { ref: \"conv\" }\n");
  gj_function* fn = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_STATIC);
  FloatDeviceTensor x({2, 4, 5, 5}), x2({2, 4, 5, 5}), w({6, 4, 1, 1}),
      y({2, 6, 5, 5}), y2({2, 6, 5, 5});
  x.Fill(1, 1);
  x2.Fill(2, 1);
  w.Fill(3, 1);
  std::vector<const FloatDeviceTensor*> in = {&x, &w};
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "warm-up")),
              ElementsAre());
  EXPECT_EQ(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "capture")),
            Concat({{"cuStreamBeginCapture"}, kInstantiateAndLaunch}));
  // x moved: staged (a copy before the product), then patched.
  in[0] = &x2;
  const std::vector<RecordedCall> staged =
      CallAndCheck(fn, in, y, "x moved (staged)");
  EXPECT_EQ(RecordingCudaDriver::Names(staged),
            Concat({kRecapture, {"cuMemcpyDtoDAsync"}, kInstantiateAndLaunch}));
  ASSERT_EQ(staged.size(), 7u);
  EXPECT_EQ(staged[3].params[1], x2.address());
  in[0] = &x;
  EXPECT_THAT(RecordingCudaDriver::Names(CallAndCheck(fn, in, y, "x back")),
              ElementsAre("cuGraphExecMemcpyNodeSetParams", "cuGraphLaunch"));
  // y moved: the product goes to the pool and is copied out.
  EXPECT_EQ(RecordingCudaDriver::Names(CallAndCheck(fn, in, y2, "y moved")),
            Concat({kRecapture,
                    {"cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync"},
                    kInstantiateAndLaunch}));
  EXPECT_THAT(Explain(fn),
              HasSubstr("1 cuBLASLt step captured, 2 operands staged through "
                        "the pool (input 0 of node 'conv', output 0 of node "
                        "'conv')"));
}

// Replays against plain launches (default mode) and the CPU, for a static
// MLP and a dynamic one over several batch sizes: inputs at new addresses
// on every call, outputs into caller buffers and into fresh memory,
// weights changed in place and weights moved.
void RunMlpAgainstPlainAndCpu(CudaGraphExternTest& test, gj_function* graphed,
                              gj_function* plain,
                              const std::vector<int64_t>& batches,
                              bool starts_dynamic = false) {
  const std::vector<int64_t> dims = {24, 32, 32, 6};
  const size_t layers = dims.size() - 1;
  std::vector<std::unique_ptr<FloatDeviceTensor>> weights;
  for (size_t i = 0; i < layers; ++i) {
    weights.push_back(std::make_unique<FloatDeviceTensor>(
        std::vector<int64_t>{dims[i + 1], dims[i]}));
    weights.back()->Fill(static_cast<uint32_t>(100 + i), 0.3f);
    weights.push_back(
        std::make_unique<FloatDeviceTensor>(std::vector<int64_t>{dims[i + 1]}));
    weights.back()->Fill(static_cast<uint32_t>(200 + i));
  }
  uint32_t seed = 1;
  for (int round = 0; round < 6; ++round) {
    for (int64_t batch : batches) {
      // Weights: changed in place on round 2, moved on round 4.
      if (round == 2) weights[0]->Fill(seed++, 0.3f);
      if (round == 4 && batch == batches.front()) {
        auto moved = std::make_unique<FloatDeviceTensor>(weights[2]->shape);
        moved->Fill(seed++, 0.3f);
        weights[2] = std::move(moved);
      }
      // A new input tensor (a new address) on every call.
      FloatDeviceTensor x({batch, dims[0]});
      x.Fill(seed++);
      std::vector<const FloatDeviceTensor*> in = {&x};
      for (const auto& w : weights) in.push_back(w.get());
      const std::string what = absl::StrCat("round ", round, ", batch ", batch);
      const std::vector<float> cpu = CpuResult(graphed, in);
      const std::vector<float> reference = DeviceResult(plain, in, nullptr);
      ExpectNear(reference, cpu, what + " (plain launches)");
      // Odd rounds into a caller buffer, even ones into fresh memory.
      FloatDeviceTensor y({batch, dims.back()});
      const std::vector<float> got =
          DeviceResult(graphed, in, round % 2 == 1 ? &y : nullptr);
      ExpectNear(got, reference, what + " (graph replay)");
    }
  }
  const gj_function_stats s = test.Stats(graphed);
  // Each size key: a warm-up call, then replays (an automatically dynamic
  // function's first batch also warms up the static entry it starts with).
  const int64_t calls = static_cast<int64_t>(6 * batches.size());
  const int64_t warm_ups = static_cast<int64_t>(batches.size()) +
                           (batches.size() > 1 && !starts_dynamic ? 1 : 0);
  EXPECT_EQ(s.cuda_graph_replays, calls - warm_ups) << test.Explain(graphed);
  EXPECT_GE(s.cuda_graphs_recorded, static_cast<int64_t>(batches.size()));
  EXPECT_THAT(test.Explain(graphed), HasSubstr("3 cuBLASLt steps captured"));
}

TEST_F(CudaGraphExternTest, StaticMlpMatchesPlainLaunchesAndCpu) {
  const std::string text = Mlp({24, 32, 32, 6}, 2);
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_STATIC);
  gj_function* plain = Load(text, GJ_MODE_DEFAULT, GJ_DYNAMIC_STATIC);
  RunMlpAgainstPlainAndCpu(*this, graphed, plain, {2});
}

TEST_F(CudaGraphExternTest, DynamicMlpMatchesPlainLaunchesAndCpu) {
  const std::string text = Mlp({24, 32, 32, 6}, 5);
  // The batch becomes symbolic when it changes (FullyDynamicMlpRunsOnCublasLt
  // has every size symbolic from the start).
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_AUTO);
  gj_function* plain = Load(text, GJ_MODE_DEFAULT, GJ_DYNAMIC_AUTO);
  RunMlpAgainstPlainAndCpu(*this, graphed, plain, {5, 3, 7});
  EXPECT_THAT(Explain(graphed), HasSubstr("(3 kept: size keys [7], [3], [5])"));
}

// With every size symbolic from the first call (GJ_DYNAMIC_DYNAMIC, the
// weights' and biases' extents too), addmm is still a cuBLASLt GEMM step
// whose bias binds per call (cuBLASLt's bias vector), not its reference
// kernel on host copies; it matches the CPU at several batch sizes, on
// plain launches and on graph replays.
TEST_F(CudaGraphExternTest, FullyDynamicMlpRunsOnCublasLt) {
  const std::string text = Mlp({24, 32, 32, 6}, 5);
  static std::vector<std::string>* logged = new std::vector<std::string>;
  logged->clear();
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "codegen") logged->push_back(message);
      },
      nullptr);
  gj_set_log_topics("codegen");
  gj_function* graphed =
      Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC);
  gj_function* plain = Load(text, GJ_MODE_DEFAULT, GJ_DYNAMIC_DYNAMIC);
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  RunMlpAgainstPlainAndCpu(*this, graphed, plain, {5, 3, 7},
                           /*starts_dynamic=*/true);
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  for (const std::string& m : *logged) {
    EXPECT_EQ(m.find("host copies"), std::string::npos) << m;
  }
  // Plain launches: 3 products per call, 18 calls.
  EXPECT_GE(EmulatedCublasLt::counters().matmuls - before.matmuls, 3 * 18);
  for (gj_function* fn : {graphed, plain}) {
    const std::string explain = Explain(fn);
    const size_t entry = explain.find("kernels on cuda");
    ASSERT_NE(entry, std::string::npos);
    const size_t begin = explain.rfind('\n', entry) + 1;
    const std::string line =
        explain.substr(begin, explain.find('\n', entry) - begin);
    EXPECT_THAT(line, HasSubstr(" 0 eager nodes"));
    EXPECT_THAT(line, HasSubstr("extern calls: 'fc0' (aten.addmm.default) "
                                "on cuBLASLt"));
    EXPECT_THAT(line, Not(HasSubstr("cuda graphs refused")));
  }
  // The CUDA entry was dynamic from its first call: one compile each (the
  // graphed function's CPU entry, for the references, aside).
  EXPECT_EQ(Stats(plain).compiles, 1);
  EXPECT_EQ(Stats(graphed).compiles, 2);
}

}  // namespace
}  // namespace guardjit
