// What a Function is created with (core/function_options.h): the defaults,
// which follow torch.compile's, and what each option does to a Function.

#include "core/function_options.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/function.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"
#include "tests/core/test_graphs.h"
#include "tests/core/toy_ops.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::EntryOf;
using ::testing::HasSubstr;
using testing::RecordingCompiler;

// h(x) = nonzero(x): a graph that breaks.
std::shared_ptr<const Graph> NonzeroGraph() {
  GraphBuilder b("h");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("nz")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

// x and y of `dtype` [n], with their views.
struct Inputs {
  Inputs(const Inputs&) = delete;
  explicit Inputs(int64_t n, DType dtype = DType::kFloat32)
      : tensors{*Tensor::Zeros(dtype, {n}), *Tensor::Zeros(dtype, {n})} {
    for (const Tensor& t : tensors) views.push_back(InputView::Of(t));
  }
  CallSignature sig() const { return {views, AmbientState()}; }
  std::vector<Tensor> tensors;
  std::vector<InputView> views;
};

TEST(FunctionOptionsTest, DefaultsFollowTorchCompile) {
  const FunctionOptions o;
  EXPECT_TRUE(o.name.empty());
  EXPECT_EQ(o.recompile_limit, 8);
  EXPECT_EQ(o.recompile_limit, kDefaultRecompileLimit);
  EXPECT_EQ(o.dynamic, DynamicMode::kAuto);
  EXPECT_TRUE(o.mark_dynamic.empty());
  EXPECT_FALSE(o.fullgraph);
  EXPECT_EQ(o.compile_queue, nullptr);
  EXPECT_EQ(o.mode, FunctionMode::kDefault);
  EXPECT_EQ(o.max_graphs_per_entry, kDefaultMaxGraphsPerEntry);
  // mark_dynamic without a range: sizes from 2 up, as torch's.
  const DynamicDim d;
  EXPECT_EQ(d.min, 2);
  EXPECT_EQ(d.max, kSymMax);
}

TEST(FunctionOptionsTest, AnEmptyNameIsTheGraphs) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto unnamed = Function::Create(ToyAddGraph(), compiler, {});
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_EQ((*unnamed)->name(), "f");
  FunctionOptions named;
  named.name = "my_fn";
  auto f = Function::Create(ToyAddGraph(), compiler, named);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->name(), "my_fn");
  EXPECT_THAT((*f)->Explain(), HasSubstr("Function: 'my_fn' (graph 'f')"));
}

TEST(FunctionOptionsTest, DefaultRecompileLimitAllowsEightEntries) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler, FunctionOptions());
  // Each dtype is a new entry (automatic dynamic cannot merge them).
  int entry = 0;
  for (DType dtype : testing::kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Inputs in(3, dtype);
    EXPECT_EQ(EntryOf(f->Call(in.tensors, in.sig())), entry < 8 ? entry : -1);
    ++entry;
  }
  EXPECT_EQ(compiler->compiles.load(), 8);
  EXPECT_EQ(f->stats().fallback_calls, 2);
}

TEST(FunctionOptionsTest, BadLimitsAreRejectedNamingTheValue) {
  auto compiler = std::make_shared<RecordingCompiler>();
  FunctionOptions negative;
  negative.recompile_limit = -1;
  testing::ExpectError(Function::Create(ToyAddGraph(), compiler, negative),
                       absl::StatusCode::kInvalidArgument,
                       "recompile_limit must be >= 0, got -1");
  FunctionOptions no_graphs;
  no_graphs.max_graphs_per_entry = 0;
  testing::ExpectError(Function::Create(ToyAddGraph(), compiler, no_graphs),
                       absl::StatusCode::kInvalidArgument,
                       "max_graphs_per_entry must be >= 1, got 0");
  FunctionOptions bad_range;
  bad_range.mark_dynamic = {{.input = 0, .dim = 0, .min = 8, .max = 4}};
  testing::ExpectError(Function::Create(ToyAddGraph(), compiler, bad_range),
                       absl::StatusCode::kInvalidArgument,
                       "mark_dynamic(input 0, dim 0, min 8, max 4)");
}

TEST(FunctionOptionsTest, FullgraphTurnsABreakIntoAnError) {
  auto compiler = std::make_shared<RecordingCompiler>();
  const Tensor x = *Tensor::Zeros(DType::kFloat32, {4});
  const InputView view = InputView::Of(x);
  const CallSignature sig{absl::MakeConstSpan(&view, 1), {}};
  FunctionOptions strict;
  strict.fullgraph = true;
  auto f = *Function::Create(NonzeroGraph(), compiler, strict);
  testing::ExpectError(f->Call({x}, sig), absl::StatusCode::kUnimplemented,
                       "function 'h' (fullgraph): graph break at node 'nz' "
                       "(aten.nonzero.default): data-dependent output size");
  // Without it the same graph runs as segments.
  auto g = *Function::Create(NonzeroGraph(), compiler, FunctionOptions());
  ASSERT_TRUE(g->Call({x}, sig).ok());
  EXPECT_EQ(g->stats().graph_count, 1);  // no head; the continuation
  EXPECT_EQ(g->stats().graph_break_count, 1);
}

TEST(FunctionOptionsTest, ReduceOverheadCarriesTheCudaGraphPolicy) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto plain = *Function::Create(ToyAddGraph(), compiler, FunctionOptions());
  EXPECT_EQ(plain->cuda_graph_policy(), nullptr);
  FunctionOptions o;
  o.mode = FunctionMode::kReduceOverhead;
  o.max_graphs_per_entry = 3;
  auto f = *Function::Create(ToyAddGraph(), compiler, o);
  ASSERT_NE(f->cuda_graph_policy(), nullptr);
  EXPECT_EQ(f->cuda_graph_policy()->max_graphs_per_entry, 3);
}

TEST(FunctionOptionsTest, CompileQueueCompilesOnItsThreadWhileMissesRunEager) {
  // Compiles take a while: the first call cannot wait for one.
  auto compiler =
      std::make_shared<RecordingCompiler>(std::chrono::milliseconds(50));
  FunctionOptions o;
  o.compile_queue = std::make_shared<CompileQueue>(1);
  auto f = *Function::Create(ToyAddGraph(), compiler, o);
  Inputs in(3);
  EXPECT_EQ(EntryOf(f->Call(in.tensors, in.sig())), -1);
  for (int k = 0; k < 500 && f->stats().compiles == 0; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(f->stats().compiles, 1);
  EXPECT_EQ(EntryOf(f->Call(in.tensors, in.sig())), 0);
  EXPECT_GE(f->stats().eager_while_compiling, 1);
  EXPECT_THAT(f->Explain(), HasSubstr("Compile: async"));
}

}  // namespace
}  // namespace guardjit
