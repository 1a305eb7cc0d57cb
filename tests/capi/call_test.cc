// gj_function_call / gj_function_call_alloc on graphs without ops: input and
// output validation, layouts, ownership and threads.

#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "capi_test_util.h"
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

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

class CapiCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = gjtest::MakeContext();
    graph_ = gjtest::IdentityGraph(context_.get(), {"a", "b"});
    ASSERT_NE(graph_, nullptr);
    function_ = gjtest::MakeFunction(context_.get(), graph_.get());
    ASSERT_NE(function_, nullptr);
  }

  // Calls with (a_, b) through call_alloc and returns the error.
  gj_error* CallWithB(const DLTensor* b) {
    const DLTensor* inputs[] = {a_.dl(), b};
    DLManagedTensor* out[2] = {};
    gj_error* error =
        gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2);
    gj_tensor_release(out[0]);
    gj_tensor_release(out[1]);
    return error;
  }

  ContextPtr context_;
  GraphPtr graph_;
  FunctionPtr function_;
  HostTensor<float> a_{{2}, {1, 2}};
};

TEST_F(CapiCallTest, NullFunction) {
  DLManagedTensor* out[2] = {};
  EXPECT_TRUE(
      IsError(gj_function_call(nullptr, nullptr, 0, nullptr, 0, nullptr),
              GJ_INVALID_ARGUMENT, {"gj_function_call", "function is NULL"}));
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(nullptr, nullptr, 0, nullptr, out, 2),
      GJ_INVALID_ARGUMENT, {"gj_function_call_alloc", "function is NULL"}));
}

TEST_F(CapiCallTest, InputArrayAndCount) {
  DLManagedTensor* out[2] = {};
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function_.get(), nullptr, 2, nullptr, out, 2),
      GJ_INVALID_ARGUMENT, {"inputs is NULL with num_inputs 2"}));
  const DLTensor* one[] = {a_.dl()};
  EXPECT_TRUE(
      IsError(gj_function_call_alloc(function_.get(), one, 1, nullptr, out, 2),
              GJ_INVALID_ARGUMENT, {"takes 2 inputs (a, b), got 1"}));
  const DLTensor* with_null[] = {a_.dl(), nullptr};
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function_.get(), with_null, 2, nullptr, out, 2),
      GJ_INVALID_ARGUMENT, {"input 1 ('b') is NULL"}));
}

TEST_F(CapiCallTest, RankAndShapeValidation) {
  HostTensor<float> b({2}, {1, 2});
  b.dl()->ndim = -1;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "ndim is -1"}));
  b.dl()->ndim = 65;
  EXPECT_TRUE(
      IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT, {"ndim is 65", "64"}));
  b.dl()->ndim = 1;
  b.dl()->shape = nullptr;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "shape is NULL"}));
  int64_t negative[] = {2, -3};
  b.dl()->ndim = 2;
  b.dl()->shape = negative;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "negative size -3 at dim 1"}));
}

TEST_F(CapiCallTest, OverflowIsOutOfRange) {
  HostTensor<float> b({2}, {1, 2});
  int64_t huge_numel[] = {int64_t{1} << 32, int64_t{1} << 32};
  b.dl()->ndim = 2;
  b.dl()->shape = huge_numel;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_OUT_OF_RANGE, {"input 1 ('b')"}));
  // 2^62 elements fit in int64, 2^62 * 4 bytes do not.
  int64_t huge_bytes[] = {int64_t{1} << 62};
  b.dl()->ndim = 1;
  b.dl()->shape = huge_bytes;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_OUT_OF_RANGE,
                      {"input 1 ('b')", "2^63 bytes"}));
  // Few elements, but strides that reach past 2^63.
  int64_t shape[] = {3, 3};
  int64_t strides[] = {kInt64Max / 2, 1};
  b.dl()->ndim = 2;
  b.dl()->shape = shape;
  b.dl()->strides = strides;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_OUT_OF_RANGE,
                      {"input 1 ('b')", "strides"}));
}

TEST_F(CapiCallTest, NullDataOnlyForEmptyTensors) {
  HostTensor<float> b({2}, {1, 2});
  b.dl()->data = nullptr;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "data is NULL", "2 elements"}));
  int64_t empty[] = {0, 5};
  b.dl()->ndim = 2;
  b.dl()->shape = empty;
  const DLTensor* inputs[] = {a_.dl(), b.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)));
  ManagedPtr out0(out[0]), out1(out[1]);
  EXPECT_EQ(gjtest::Shape(out[1]->dl_tensor), (std::vector<int64_t>{0, 5}));
}

TEST_F(CapiCallTest, UnsupportedDTypes) {
  HostTensor<float> b({2}, {1, 2});
  const DLDataType unsupported[] = {
      {kDLFloat, 32, 4},  {kDLComplex, 64, 1}, {kDLOpaqueHandle, 64, 1},
      {kDLFloat, 8, 1},   {kDLFloat, 128, 1},  {kDLUInt, 16, 1},
      {kDLUInt, 64, 1},   {kDLInt, 4, 1},      {kDLBfloat, 32, 1},
      {GJ_DL_BOOL, 1, 1}, {GJ_DL_BOOL, 8, 2},  {42, 32, 1}};
  for (DLDataType type : unsupported) {
    b.dl()->dtype = type;
    EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                        {"input 1 ('b')", "unsupported dtype"}))
        << int{type.code} << "/" << int{type.bits} << "/" << type.lanes;
  }
}

TEST_F(CapiCallTest, EverySupportedDTypeRoundTrips) {
  const DLDataType supported[] = {{kDLFloat, 16, 1}, {kDLFloat, 32, 1},
                                  {kDLFloat, 64, 1}, {kDLBfloat, 16, 1},
                                  {kDLInt, 8, 1},    {kDLInt, 16, 1},
                                  {kDLInt, 32, 1},   {kDLInt, 64, 1},
                                  {kDLUInt, 8, 1},   {GJ_DL_BOOL, 8, 1}};
  for (DLDataType type : supported) {
    const int bytes = type.bits / 8;
    std::vector<uint8_t> buffer(3 * bytes);
    for (size_t i = 0; i < buffer.size(); ++i)
      buffer[i] = i % bytes == 0 ? 1 : 0;
    HostTensor<uint8_t> b({3}, buffer);
    b.dl()->dtype = type;
    const DLTensor* inputs[] = {a_.dl(), b.dl()};
    DLManagedTensor* out[2] = {};
    ASSERT_TRUE(
        Ok(gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)))
        << int{type.code} << "/" << int{type.bits};
    ManagedPtr out0(out[0]), out1(out[1]);
    const DLTensor& result = out[1]->dl_tensor;
    EXPECT_EQ(result.dtype.code, type.code);
    EXPECT_EQ(result.dtype.bits, type.bits);
    EXPECT_EQ(result.dtype.lanes, 1);
    EXPECT_EQ(std::memcmp(result.data, buffer.data(), buffer.size()), 0);
  }
}

TEST_F(CapiCallTest, DevicesOtherThanCpu) {
  HostTensor<float> b({2}, {1, 2});
  b.dl()->device = {kDLCUDA, 1};
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b') is on cuda:1", "input 0 ('a') on cpu"}));
  b.dl()->device = {kDLOpenCL, 0};
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "OpenCL"}));
  b.dl()->device = {kDLVulkan, 0};
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT, {"Vulkan"}));
  // A CPU tensor with a device_id is meaningless, not silently accepted.
  b.dl()->device = {kDLCPU, 12345};
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "device_id 12345"}));
}

TEST_F(CapiCallTest, DataPlusByteOffsetMustBeAlignedAndIsApplied) {
  HostTensor<float> b({2}, {0, 0, 7, 8});
  b.dl()->byte_offset = 2;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "not aligned", "4-byte item size"}));
  // The header asks for data + byte_offset aligned, not byte_offset alone:
  // an odd offset from a pointer 1 byte before an item is fine.
  {
    DLTensor shifted = *b.dl();
    shifted.data = reinterpret_cast<char*>(b.buffer().data()) + 5;
    shifted.byte_offset = 3;  // data + 3 = element 2
    const DLTensor* inputs[] = {a_.dl(), &shifted};
    DLManagedTensor* out[2] = {};
    ASSERT_TRUE(Ok(
        gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)));
    ManagedPtr out0(out[0]), out1(out[1]);
    EXPECT_EQ(Floats(out[1]->dl_tensor), (std::vector<float>{7, 8}));
  }
  b.dl()->byte_offset = 8;
  const DLTensor* inputs[] = {a_.dl(), b.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)));
  ManagedPtr out0(out[0]), out1(out[1]);
  EXPECT_EQ(Floats(out[1]->dl_tensor), (std::vector<float>{7, 8}));
}

TEST_F(CapiCallTest, MisalignedDataRejected) {
  std::vector<float> storage(4, 1.0f);
  HostTensor<float> b({2}, {1, 2});
  b.dl()->data = reinterpret_cast<char*>(storage.data()) + 1;
  EXPECT_TRUE(IsError(CallWithB(b.dl()), GJ_INVALID_ARGUMENT,
                      {"input 1 ('b')", "not aligned"}));
}

TEST_F(CapiCallTest, StridedAndNegativeStridedInputs) {
  // [[1, 2, 3], [4, 5, 6]] stored column-major with padding.
  HostTensor<float> b({2, 3}, {1, 4, -1, 2, 5, -1, 3, 6, -1}, {1, 3});
  // Reversed view of [10, 20, 30]: data points at the last element.
  HostTensor<float> a({3}, {10, 20, 30}, {-1});
  a.dl()->byte_offset = 2 * sizeof(float);
  const DLTensor* inputs[] = {a.dl(), b.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)));
  ManagedPtr out0(out[0]), out1(out[1]);
  EXPECT_EQ(Floats(out[0]->dl_tensor), (std::vector<float>{30, 20, 10}));
  EXPECT_EQ(Floats(out[1]->dl_tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(CapiCallTest, CallAllocOutputsAreOwnedContiguousAndReleasable) {
  HostTensor<float> b({2, 2}, {1, 2, 3, 4});
  const DLTensor* inputs[] = {a_.dl(), b.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 2)));
  ASSERT_NE(out[0], nullptr);
  ASSERT_NE(out[1], nullptr);
  const DLTensor& t = out[1]->dl_tensor;
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.byte_offset, 0u);
  ASSERT_NE(t.strides, nullptr);
  EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + 2),
            (std::vector<int64_t>{2, 1}));
  // The results do not borrow the inputs.
  EXPECT_NE(t.data, b.buffer().data());
  b.buffer()[0] = 100;
  EXPECT_EQ(Floats(t), (std::vector<float>{1, 2, 3, 4}));
  gj_tensor_release(out[0]);
  out[1]->deleter(out[1]);
  gj_tensor_release(nullptr);
}

TEST_F(CapiCallTest, CallAllocArgumentErrorsLeaveOutputsNull) {
  const DLTensor* inputs[] = {a_.dl(), a_.dl()};
  DLManagedTensor* out[3];
  std::memset(out, 0xab, sizeof(out));
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function_.get(), inputs, 2, nullptr, out, 3),
      GJ_INVALID_ARGUMENT, {"returns 2 outputs", "num_outputs 3"}));
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(out[1], nullptr);
  EXPECT_EQ(out[2], nullptr);
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function_.get(), inputs, 2, nullptr, nullptr, 2),
      GJ_INVALID_ARGUMENT, {"out_outputs is NULL"}));
}

TEST_F(CapiCallTest, CallOptions) {
  gj_call_options options;
  std::memset(&options, 0x7f, sizeof(options));
  gj_call_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_call_options));
  EXPECT_EQ(options.grad_mode, 1);
  EXPECT_EQ(options.deterministic, 0);
  gj_call_options_init(nullptr);

  const DLTensor* inputs[] = {a_.dl(), a_.dl()};
  DLManagedTensor* out[2] = {};
  options.struct_size = 1;
  EXPECT_TRUE(IsError(
      gj_function_call_alloc(function_.get(), inputs, 2, &options, out, 2),
      GJ_INVALID_ARGUMENT, {"struct_size", "gj_call_options_init"}));
  // An older host that knew only grad_mode.
  options.struct_size = offsetof(gj_call_options, deterministic);
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function_.get(), inputs, 2, &options, out, 2)));
  gj_tensor_release(out[0]);
  gj_tensor_release(out[1]);
}

// A graph returning the same value twice hands out two separate buffers.
TEST_F(CapiCallTest, AliasedResultsGetSeparateBuffers) {
  GraphPtr graph = gjtest::BuildGraph(context_.get(), "twice", {"x"},
                                      [](gj_graph_builder*) {}, {"x", "x"});
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  const DLTensor* inputs[] = {a_.dl()};
  DLManagedTensor* out[2] = {};
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(function.get(), inputs, 1, nullptr, out, 2)));
  ManagedPtr out0(out[0]), out1(out[1]);
  EXPECT_NE(out[0]->dl_tensor.data, out[1]->dl_tensor.data);
  EXPECT_EQ(Floats(out[0]->dl_tensor), Floats(out[1]->dl_tensor));
}

class CapiCallOutputsTest : public CapiCallTest {
 protected:
  gj_error* Call(const DLTensor* out0, const DLTensor* out1) {
    const DLTensor* inputs[] = {a_.dl(), b_.dl()};
    const DLTensor* outputs[] = {out0, out1};
    return gj_function_call(function_.get(), inputs, 2, outputs, 2, nullptr);
  }

  HostTensor<float> b_{{2, 3}, {1, 2, 3, 4, 5, 6}};
};

TEST_F(CapiCallOutputsTest, ContiguousOutputs) {
  HostTensor<float> o0({2}, {0, 0});
  HostTensor<float> o1({2, 3}, std::vector<float>(6));
  ASSERT_TRUE(Ok(Call(o0.dl(), o1.dl())));
  EXPECT_EQ(o0.buffer(), (std::vector<float>{1, 2}));
  EXPECT_EQ(o1.buffer(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(CapiCallOutputsTest, StridedOutputKeepsItsPadding) {
  HostTensor<float> o0({2}, {0, -7, 0}, {2});
  // Column-major with one padding float after each column.
  HostTensor<float> o1({2, 3}, std::vector<float>(8, -7), {1, 3});
  ASSERT_TRUE(Ok(Call(o0.dl(), o1.dl())));
  EXPECT_EQ(o0.buffer(), (std::vector<float>{1, -7, 2}));
  EXPECT_EQ(o1.buffer(), (std::vector<float>{1, 4, -7, 2, 5, -7, 3, 6}));
}

TEST_F(CapiCallOutputsTest, OutputArrayCountAndNulls) {
  HostTensor<float> o0({2}, {0, 0});
  const DLTensor* inputs[] = {a_.dl(), b_.dl()};
  EXPECT_TRUE(
      IsError(gj_function_call(function_.get(), inputs, 2, nullptr, 2, nullptr),
              GJ_INVALID_ARGUMENT, {"outputs is NULL with num_outputs 2"}));
  const DLTensor* one[] = {o0.dl()};
  EXPECT_TRUE(
      IsError(gj_function_call(function_.get(), inputs, 2, one, 1, nullptr),
              GJ_INVALID_ARGUMENT, {"returns 2 outputs", "num_outputs 1"}));
  EXPECT_TRUE(IsError(Call(o0.dl(), nullptr), GJ_INVALID_ARGUMENT,
                      {"output 1 is NULL"}));
}

TEST_F(CapiCallOutputsTest, WrongDTypeOrShapeNamesTheOutput) {
  HostTensor<float> o0({2}, {0, 0});
  HostTensor<double> wrong_dtype({2, 3}, std::vector<double>(6));
  EXPECT_TRUE(
      IsError(Call(o0.dl(), wrong_dtype.dl()), GJ_INVALID_ARGUMENT,
              {"output 1", "expected float32[2, 3]", "got float64[2, 3]"}));
  HostTensor<float> wrong_shape({3, 2}, std::vector<float>(6));
  EXPECT_TRUE(
      IsError(Call(o0.dl(), wrong_shape.dl()), GJ_INVALID_ARGUMENT,
              {"output 1", "expected float32[2, 3]", "got float32[3, 2]"}));
  // Nothing was written: the check happens before any output is.
  EXPECT_EQ(o0.buffer(), (std::vector<float>{0, 0}));
  HostTensor<float> o1({2, 3}, std::vector<float>(6));
  o1.dl()->dtype = {kDLComplex, 64, 1};
  EXPECT_TRUE(IsError(Call(o0.dl(), o1.dl()), GJ_INVALID_ARGUMENT,
                      {"output 1", "unsupported dtype"}));
}

TEST_F(CapiCallOutputsTest, OverlappingOutputsRejected) {
  HostTensor<float> shared({2, 3}, std::vector<float>(6));
  HostTensor<float> o0({2}, {0, 0});
  o0.dl()->data = shared.buffer().data() + 4;
  EXPECT_TRUE(IsError(Call(o0.dl(), shared.dl()), GJ_INVALID_ARGUMENT,
                      {"outputs 0 and 1 overlap"}));
  // Broadcast-style zero stride: every element is the same memory.
  HostTensor<float> o1({2, 3}, std::vector<float>(3), {0, 1});
  HostTensor<float> fresh({2}, {0, 0});
  EXPECT_TRUE(IsError(Call(fresh.dl(), o1.dl()), GJ_INVALID_ARGUMENT,
                      {"output 1", "share memory"}));
}

// Interleaved strides the sorted-stride rule cannot decide: [10, 4] with
// strides [4, 3] touches 40 distinct elements (4i + 3j is unique for j < 4),
// as the header promises; strides [3, 2] do not (3*2 + 2*0 == 3*0 + 2*3).
TEST(CapiOverlapTest, InterleavedStridesAreDecidedExactly) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = gjtest::IdentityGraph(context.get(), {"x"});
  FunctionPtr function = gjtest::MakeFunction(context.get(), graph.get());
  std::vector<float> values(40);
  for (int i = 0; i < 40; ++i) values[i] = static_cast<float>(i);
  HostTensor<float> x({10, 4}, values);
  HostTensor<float> out({10, 4}, std::vector<float>(46, -1), {4, 3});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* outs[] = {out.dl()};
  ASSERT_TRUE(Ok(gj_function_call(function.get(), in, 1, outs, 1, nullptr)));
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(out.buffer()[4 * i + 3 * j], values[4 * i + j]);
    }
  }
  HostTensor<float> shared({10, 4}, std::vector<float>(40, -1), {3, 2});
  outs[0] = shared.dl();
  EXPECT_TRUE(IsError(gj_function_call(function.get(), in, 1, outs, 1, nullptr),
                      GJ_INVALID_ARGUMENT, {"output 0", "share memory"}));
  for (float v : shared.buffer()) EXPECT_EQ(v, -1);
}

// An output written over an input it aliases still receives the input's
// values (a result that is a view of an input is detached first).
TEST_F(CapiCallOutputsTest, OutputMayAliasAnInput) {
  GraphPtr graph = gjtest::IdentityGraph(context_.get(), {"x"});
  FunctionPtr function = gjtest::MakeFunction(context_.get(), graph.get());
  HostTensor<float> x({2, 2}, {1, 2, 3, 4});
  int64_t shape[] = {2, 2};
  int64_t transposed[] = {1, 2};
  DLTensor out = *x.dl();
  out.shape = shape;
  out.strides = transposed;
  const DLTensor* inputs[] = {x.dl()};
  const DLTensor* outputs[] = {&out};
  ASSERT_TRUE(
      Ok(gj_function_call(function.get(), inputs, 1, outputs, 1, nullptr)));
  EXPECT_EQ(x.buffer(), (std::vector<float>{1, 3, 2, 4}));
}

TEST_F(CapiCallTest, ConcurrentCallsOnOneFunction) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 50;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const float v = static_cast<float>(t * 1000 + c);
        HostTensor<float> a({3}, {v, v + 1, v + 2});
        HostTensor<float> b({1}, {-v});
        HostTensor<float> o0({3}, std::vector<float>(3));
        HostTensor<float> o1({1}, {0});
        const DLTensor* inputs[] = {a.dl(), b.dl()};
        const DLTensor* outputs[] = {o0.dl(), o1.dl()};
        gj_error* error =
            gj_function_call(function_.get(), inputs, 2, outputs, 2, nullptr);
        if (error != nullptr || o0.buffer() != a.buffer() ||
            o1.buffer()[0] != -v) {
          ++failures[t];
        }
        gj_error_destroy(error);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
