// What a compile produces (core/executable.h): CodeOrigin's sums and
// all_loaded, Executable's defaults, RunToVector, and the chosen-bounds
// contract as core keeps it (an executable's chosen bounds become guards of
// its entry; a call past one recompiles with no bounds to choose, and the
// reason names the bound's purpose).

#include "core/executable.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/call_signature.h"
#include "core/function.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_graphs.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CodeOriginTest, AllLoadedMeansNothingCompiledAndSomethingLoaded) {
  CodeOrigin origin;
  EXPECT_FALSE(origin.all_loaded());  // nothing at all
  origin.loaded = 2;
  EXPECT_TRUE(origin.all_loaded());
  origin.reused = 3;
  EXPECT_TRUE(origin.all_loaded());  // reused code is not compiled either
  origin.compiled = 1;
  EXPECT_FALSE(origin.all_loaded());
  CodeOrigin reused_only;
  reused_only.reused = 4;
  EXPECT_FALSE(reused_only.all_loaded());
}

TEST(CodeOriginTest, AddSumsCountsAndKeepsTheFirstPid) {
  CodeOrigin total;
  CodeOrigin a;
  a.compiled = 1;
  a.loaded = 2;
  a.loaded_remote = 1;
  a.reused = 3;
  a.original_compile_ms = 1.5;
  a.original_pid = 0;  // compiled here: no original process
  CodeOrigin b;
  b.loaded = 4;
  b.loaded_remote = 2;
  b.original_compile_ms = 2.25;
  b.original_pid = 1234;
  CodeOrigin c;
  c.loaded = 1;
  c.original_pid = 999;
  total.Add(a);
  EXPECT_EQ(total.original_pid, 0);
  total.Add(b);
  EXPECT_EQ(total.original_pid, 1234);
  total.Add(c);
  EXPECT_EQ(total.original_pid, 1234);  // the first one that has one
  EXPECT_EQ(total.compiled, 1);
  EXPECT_EQ(total.loaded, 7);
  EXPECT_EQ(total.loaded_remote, 3);
  EXPECT_EQ(total.reused, 3);
  EXPECT_DOUBLE_EQ(total.original_compile_ms, 3.75);
  EXPECT_FALSE(total.all_loaded());
}

// Writes output k = k-th input + k (as a new int64 scalar), or fails with
// `error`; records the context it ran with.
class AddIndex : public Executable {
 public:
  AddIndex(size_t outputs, absl::Status error = absl::OkStatus())
      : outputs_(outputs), error_(std::move(error)) {}
  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    last_symbols.assign(ctx.symbols.begin(), ctx.symbols.end());
    last_outputs_size = outputs.size();
    if (!error_.ok()) return error_;
    for (size_t k = 0; k < outputs.size(); ++k) {
      outputs[k] = Tensor::FromScalar(
          Scalar(inputs[k].Item().to_int() + static_cast<int64_t>(k)),
          DType::kInt64);
    }
    return absl::OkStatus();
  }
  size_t num_outputs() const override { return outputs_; }
  std::string Describe() const override { return "add index"; }

  mutable std::vector<int64_t> last_symbols;
  mutable size_t last_outputs_size = 0;

 private:
  size_t outputs_;
  absl::Status error_;
};

TEST(ExecutableTest, DefaultsRelyOnNothingAndRunOnTheCpu) {
  const AddIndex exe(1);
  EXPECT_TRUE(exe.chosen_bounds().empty());
  EXPECT_EQ(exe.chosen_bounds_purpose(), "");
  EXPECT_EQ(exe.DescribeProfile(), "");
  EXPECT_TRUE(exe.device() == Device::Cpu());
  const CodeOrigin origin = exe.origin();
  EXPECT_EQ(origin.compiled, 0);
  EXPECT_EQ(origin.loaded, 0);
  EXPECT_EQ(origin.reused, 0);
  EXPECT_EQ(origin.original_pid, 0);
}

TEST(RunToVectorTest, MakesOneOutputPerGraphOutputAndPassesTheContext) {
  const AddIndex exe(3);
  const std::vector<Tensor> inputs = {
      Tensor::FromScalar(Scalar(int64_t{10}), DType::kInt64),
      Tensor::FromScalar(Scalar(int64_t{20}), DType::kInt64),
      Tensor::FromScalar(Scalar(int64_t{30}), DType::kInt64)};
  RunContext ctx;
  const int64_t symbols[] = {7, 8};
  ctx.symbols = symbols;
  absl::StatusOr<std::vector<Tensor>> out = RunToVector(exe, ctx, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].Item().to_int(), 10);
  EXPECT_EQ((*out)[1].Item().to_int(), 21);
  EXPECT_EQ((*out)[2].Item().to_int(), 32);
  EXPECT_EQ(exe.last_outputs_size, 3u);
  EXPECT_THAT(exe.last_symbols, ElementsAre(7, 8));
  // Without a context: a default one (no symbols).
  out = RunToVector(exe, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[2].Item().to_int(), 32);
  EXPECT_TRUE(exe.last_symbols.empty());
}

TEST(RunToVectorTest, ReturnsTheRunsError) {
  const AddIndex exe(1, absl::OutOfRangeError("index 9 is out of range"));
  const std::vector<Tensor> inputs = {
      Tensor::FromScalar(Scalar(int64_t{1}), DType::kInt64)};
  absl::StatusOr<std::vector<Tensor>> out = RunToVector(exe, inputs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(out.status().message(), "index 9 is out of range");
}

// An executable relying on symbol 0 <= `bound` where it may choose bounds;
// it writes its entry number into output 0.
class BoundedExecutable : public Executable {
 public:
  BoundedExecutable(int entry, std::vector<SymbolBound> bounds)
      : entry_(entry), bounds_(std::move(bounds)) {}
  absl::Status Run(const RunContext&, absl::Span<const Tensor>,
                   absl::Span<Tensor> outputs) const override {
    outputs[0] = Tensor::FromScalar(Scalar(int64_t{entry_}), DType::kInt64);
    return absl::OkStatus();
  }
  size_t num_outputs() const override { return 1; }
  absl::Span<const SymbolBound> chosen_bounds() const override {
    return bounds_;
  }
  std::string chosen_bounds_purpose() const override {
    return "the entry's kernels index in 4 bits";
  }
  std::string Describe() const override { return "bounded"; }

 private:
  int entry_;
  std::vector<SymbolBound> bounds_;
};

class BoundChoosingCompiler : public Compiler {
 public:
  explicit BoundChoosingCompiler(int64_t bound) : bound_(bound) {}
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph>, const Specialization& spec) override {
    std::lock_guard<std::mutex> lock(mu_);
    may_choose.push_back(spec.may_choose_bounds);
    std::vector<SymbolBound> bounds;
    if (spec.may_choose_bounds) bounds.push_back({0, bound_});
    return std::make_unique<BoundedExecutable>(compiles++, std::move(bounds));
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph>) override {
    return std::make_unique<BoundedExecutable>(-1, std::vector<SymbolBound>{});
  }
  std::string name() const override { return "bounded"; }

  int compiles = 0;
  std::vector<bool> may_choose;

 private:
  const int64_t bound_;
  std::mutex mu_;
};

int64_t CallWith(Function& f, int64_t n) {
  const Tensor x = *Tensor::Zeros(DType::kFloat32, {n});
  const Tensor y = *Tensor::Zeros(DType::kFloat32, {n});
  const std::vector<Tensor> tensors = {x, y};
  const std::vector<InputView> views = {InputView::Of(x), InputView::Of(y)};
  absl::StatusOr<std::vector<Tensor>> out =
      f.Call(tensors, CallSignature{views, AmbientState()});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].Item().to_int() : -100;
}

TEST(ExecutableTest, ChosenBoundsBecomeGuardsOfTheEntry) {
  auto compiler = std::make_shared<BoundChoosingCompiler>(8);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kDynamic});
  EXPECT_EQ(CallWith(*f, 5), 0);
  EXPECT_EQ(CallWith(*f, 8), 0);  // at the bound: the same entry
  EXPECT_EQ(compiler->compiles, 1);
  EXPECT_THAT(f->DumpGuards(),
              HasSubstr("<= 8  # the bound under which the entry's kernels "
                        "index in 4 bits"));
  // Past the bound: a new entry, which may not choose bounds again, so it
  // serves every size.
  EXPECT_EQ(CallWith(*f, 9), 1);
  ASSERT_FALSE(f->RecompileReasons().empty());
  EXPECT_THAT(f->RecompileReasons().back(),
              HasSubstr("= 9 exceeds 8, the bound under which the entry's "
                        "kernels index in 4 bits"));
  EXPECT_EQ(CallWith(*f, 1000), 1);
  EXPECT_EQ(compiler->compiles, 2);
  EXPECT_THAT(compiler->may_choose, ElementsAre(true, false));
}

TEST(ExecutableTest, ABoundTheMakingCallExceedsIsAnError) {
  // The executable claims symbol 0 <= 4 although the call has 6.
  auto compiler = std::make_shared<BoundChoosingCompiler>(4);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kDynamic});
  const Tensor x = *Tensor::Zeros(DType::kFloat32, {6});
  const Tensor y = *Tensor::Zeros(DType::kFloat32, {6});
  const std::vector<Tensor> tensors = {x, y};
  const std::vector<InputView> views = {InputView::Of(x), InputView::Of(y)};
  absl::StatusOr<std::vector<Tensor>> out =
      f->Call(tensors, CallSignature{views, AmbientState()});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(out.status().message(),
              HasSubstr("which the call that made the entry exceeds (6)"));
}

}  // namespace
}  // namespace guardjit
