// The backend interface (core/compiler.h): Specialization's accessors and
// defaults, Compiler::ToHost's default, and the Specialization core hands a
// Compiler for a call (each input's meta, the symbols' sources and bounds,
// the example layout, may_choose_bounds only on dynamic entries).

#include "core/compiler.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/call_signature.h"
#include "core/function.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"
#include "tests/core/test_graphs.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A RecordingCompiler that also keeps every Specialization it is given.
class SpecRecorder : public testing::RecordingCompiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override {
    {
      std::lock_guard<std::mutex> lock(spec_mu_);
      specs.push_back(spec);
    }
    return RecordingCompiler::Compile(std::move(graph), spec);
  }
  std::vector<Specialization> specs;

 private:
  std::mutex spec_mu_;
};

// Calls f(x, y) with x, y of `dtype` [n] (contiguous) or [n] read with
// stride 2 from a buffer of 2n.
absl::StatusOr<std::vector<Tensor>> CallWith(Function& f, int64_t n,
                                             bool strided = false) {
  Tensor x = *Tensor::Zeros(DType::kFloat32, {strided ? 2 * n : n});
  Tensor y = *Tensor::Zeros(DType::kFloat32, {n});
  if (strided) x = x.AsStrided({n}, {2});
  const std::vector<Tensor> tensors = {x, y};
  const std::vector<InputView> views = {InputView::Of(x), InputView::Of(y)};
  return f.Call(tensors, CallSignature{views, AmbientState()});
}

TEST(SpecializationTest, DefaultsAndDynamic) {
  Specialization spec;
  EXPECT_FALSE(spec.dynamic());
  EXPECT_FALSE(spec.may_choose_bounds);
  EXPECT_TRUE(spec.inputs.empty());
  EXPECT_TRUE(spec.symbol_max.empty());
  EXPECT_EQ(Specialization::kUnbounded, std::numeric_limits<int64_t>::max());
  spec.symbols.push_back({1, 2});
  EXPECT_TRUE(spec.dynamic());
  EXPECT_EQ(spec.symbols[0].input, 1);
  EXPECT_EQ(spec.symbols[0].dim, 2);
  const SymbolSource source;
  EXPECT_EQ(source.input, 0);
  EXPECT_EQ(source.dim, 0);
}

TEST(CompilerTest, DefaultToHostReturnsCpuTensorsAsTheyAre) {
  testing::RecordingCompiler compiler;
  float data[6] = {1, 2, 3, 4, 5, 6};
  const Tensor t =
      Tensor::Borrow(data, DType::kFloat32, {2, 3}, {1, 2});  // transposed
  absl::StatusOr<Tensor> host = compiler.ToHost(t, RunContext());
  ASSERT_TRUE(host.ok()) << host.status();
  // The same view: no copy, strides kept.
  EXPECT_EQ(host->data(), t.data());
  EXPECT_THAT(host->strides(), ElementsAre(1, 2));
  EXPECT_THAT(host->sizes(), ElementsAre(2, 3));
}

TEST(CompilerTest, DefaultToHostRefusesDeviceTensorsNamingBackendAndDevice) {
  testing::RecordingCompiler compiler;
  float data[4] = {};
  const Device cuda{DeviceType::kCUDA, 1};
  const Tensor t = Tensor::Borrow(data, DType::kFloat32, {4}, {1}, cuda);
  Compiler& base = compiler;
  absl::StatusOr<Tensor> host = base.ToHost(t, RunContext());
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(host.status().message(),
            "backend recording cannot read a cuda:1 tensor on the host");
}

TEST(CompilerTest, StaticEntriesGetTheCallsMetasAndLayoutAndNoSymbols) {
  auto compiler = std::make_shared<SpecRecorder>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kStatic});
  ASSERT_TRUE(CallWith(*f, 3, /*strided=*/true).ok());
  ASSERT_EQ(compiler->specs.size(), 1u);
  const Specialization& spec = compiler->specs[0];
  EXPECT_FALSE(spec.dynamic());
  EXPECT_FALSE(spec.may_choose_bounds);  // nothing to bound
  EXPECT_TRUE(spec.symbol_max.empty());
  ASSERT_EQ(spec.inputs.size(), 2u);
  EXPECT_EQ(spec.inputs[0], TensorMeta(DType::kFloat32, Shape{3}));
  EXPECT_EQ(spec.inputs[1], TensorMeta(DType::kFloat32, Shape{3}));
  // The example layout is the call's: x read with stride 2.
  ASSERT_EQ(spec.example_sizes.size(), 2u);
  ASSERT_EQ(spec.example_strides.size(), 2u);
  EXPECT_THAT(spec.example_sizes[0], ElementsAre(3));
  EXPECT_THAT(spec.example_strides[0], ElementsAre(2));
  EXPECT_THAT(spec.example_strides[1], ElementsAre(1));
}

TEST(CompilerTest, DynamicEntriesNameWhereEachSymbolIsRead) {
  auto compiler = std::make_shared<SpecRecorder>();
  // x's dim 0 dynamic in [2, 64]; y's equals it (the add broadcasts
  // nothing), so one symbol read from input 0.
  auto f = *Function::Create(
      ToyAddGraph(), compiler,
      {"f", 8, DynamicMode::kAuto, {{0, 0, 2, 64}, {1, 0, 2, 64}}});
  ASSERT_TRUE(CallWith(*f, 5).ok());
  ASSERT_EQ(compiler->specs.size(), 1u);
  const Specialization& spec = compiler->specs[0];
  ASSERT_TRUE(spec.dynamic());
  ASSERT_FALSE(spec.symbols.empty());
  EXPECT_EQ(spec.symbols[0].input, 0);
  EXPECT_EQ(spec.symbols[0].dim, 0);
  // One bound per symbol: the mark_dynamic max.
  ASSERT_EQ(spec.symbol_max.size(), spec.symbols.size());
  EXPECT_EQ(spec.symbol_max[0], 64);
  EXPECT_TRUE(spec.may_choose_bounds);
  // The inputs' sizes are the symbols, not the call's 5.
  ASSERT_EQ(spec.inputs.size(), 2u);
  ASSERT_EQ(spec.inputs[0].dim(), 1);
  EXPECT_TRUE(spec.inputs[0].sizes[0].is_symbolic());
  EXPECT_THAT(spec.example_sizes[0], ElementsAre(5));
  // Every call the entry's guards accept reuses it.
  ASSERT_TRUE(CallWith(*f, 9).ok());
  ASSERT_TRUE(CallWith(*f, 64).ok());
  EXPECT_EQ(compiler->compiles.load(), 1);
  ASSERT_TRUE(CallWith(*f, 65).ok());
  EXPECT_EQ(compiler->compiles.load(), 2);
}

TEST(CompilerTest, UnboundedSymbolsGetTheUnboundedMax) {
  auto compiler = std::make_shared<SpecRecorder>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kDynamic});
  ASSERT_TRUE(CallWith(*f, 4).ok());
  ASSERT_EQ(compiler->specs.size(), 1u);
  const Specialization& spec = compiler->specs[0];
  ASSERT_TRUE(spec.dynamic());
  ASSERT_EQ(spec.symbol_max.size(), spec.symbols.size());
  // No mark_dynamic max and no guard bounding the size from above.
  ASSERT_FALSE(spec.symbol_max.empty());
  EXPECT_EQ(spec.symbol_max[0], Specialization::kUnbounded);
}

// A compile error fails the call that missed, with the compiler's message.
class FailingCompiler : public testing::RecordingCompiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph>, const Specialization&) override {
    return absl::InvalidArgumentError("node 'add': shapes rejected");
  }
};

TEST(CompilerTest, CompileErrorsReachTheCaller) {
  auto f = *Function::Create(ToyAddGraph(), std::make_shared<FailingCompiler>(),
                             {"f", 8, DynamicMode::kStatic});
  const absl::StatusOr<std::vector<Tensor>> out = CallWith(*f, 3);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("node 'add': shapes rejected"));
}

}  // namespace
}  // namespace guardjit
