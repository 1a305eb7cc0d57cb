// jit/schedule/split_reduction.cc: SplitReduction on the unsplit kernel
// steps Schedule builds (GJ_SPLIT_REDUCTIONS=0): the partials kernel's outer
// loop over P chunks before the old outer loops, the partial slots it
// allocates (float64 for float32 sums), the combine kernel's row stores and
// the description; the thresholds (2^16 reduced elements, fewer than 64
// outer points, at least two partials) and the kernels left unsplit (argmax,
// two-pass softmax and var); SplitReductionsEnabled's environment switch;
// and a split plan against the eager interpreter.

#include "jit/schedule/split_reduction.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "jit/schedule/fusion.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::Ints;
using testing::OpGraph;
using testing::RandomTensor;

// Sets GJ_SPLIT_REDUCTIONS for the scope, restoring it after.
class SplitEnv {
 public:
  explicit SplitEnv(const char* value) {
    const char* old = std::getenv("GJ_SPLIT_REDUCTIONS");
    if (old != nullptr) old_ = old;
    if (value == nullptr) {
      unsetenv("GJ_SPLIT_REDUCTIONS");
    } else {
      setenv("GJ_SPLIT_REDUCTIONS", value, 1);
    }
  }
  ~SplitEnv() {
    if (old_.has_value()) {
      setenv("GJ_SPLIT_REDUCTIONS", old_->c_str(), 1);
    } else {
      unsetenv("GJ_SPLIT_REDUCTIONS");
    }
  }

 private:
  std::optional<std::string> old_;
};

// `graph` lowered and scheduled unsplit for contiguous inputs of `shapes`.
Plan UnsplitPlan(const Graph& graph, const std::vector<Shape>& shapes,
                 DType dtype = DType::kFloat32) {
  std::vector<TensorMeta> metas;
  std::vector<std::vector<IndexExpr>> strides;
  for (const Shape& s : shapes) {
    metas.push_back(TensorMeta(dtype, s));
    strides.push_back(ContiguousStrideExprs(ConstExprs(s)));
  }
  auto graph_metas = InferShapes(graph, metas);
  EXPECT_TRUE(graph_metas.ok()) << graph_metas.status();
  if (!graph_metas.ok()) return Plan();
  auto lowered = Lower(graph, *graph_metas, strides);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return Plan();
  SplitEnv off("0");
  auto plan = Schedule(*lowered);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : Plan();
}

// The plan's only kernel step.
const KernelStep* OnlyKernel(const Plan& plan) {
  const KernelStep* found = nullptr;
  for (const PlanStep& s : plan.steps) {
    if (!s.is_kernel) continue;
    EXPECT_EQ(found, nullptr) << "more than one kernel";
    found = &s.kernel;
  }
  EXPECT_NE(found, nullptr);
  return found;
}

std::shared_ptr<const Graph> Reduce(const std::string& target,
                                    std::vector<Arg> rest = {}) {
  rest.insert(rest.begin(), Arg::Ref("x0"));
  return OpGraph(target, rest, 1);
}

int CountStages(const Kernel& k, Stage::Kind kind) {
  int n = 0;
  for (const Stage& s : k.stages) n += s.kind == kind;
  return n;
}

TEST(SplitReduction, LongSumBecomesPartialsAndCombine) {
  // 2^18 float32 elements: chunks of 2^16, four partials.
  auto graph = Reduce("aten.sum.default");
  Plan plan = UnsplitPlan(*graph, {{int64_t{1} << 18}});
  const KernelStep* step = OnlyKernel(plan);
  ASSERT_NE(step, nullptr);
  const size_t slots_before = plan.slots.size();
  std::optional<SplitKernels> split = SplitReduction(*step, {"op"}, plan.slots);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->description, "reduction 'op' split into 4 partials");

  // One float64 partial slot of 4 elements (float32 sums widen).
  ASSERT_EQ(plan.slots.size(), slots_before + 1);
  const Slot& partial = plan.slots.back();
  EXPECT_EQ(partial.source, Slot::Source::kKernel);
  EXPECT_EQ(partial.dtype, DType::kFloat64);
  EXPECT_EQ(partial.sizes, ConstExprs({4}));

  // Partials: outer loop over the 4 chunks, then the old (no) outer loops;
  // a reduce and a store of the partial, which it allocates.
  const Kernel& p = split->partials.kernel;
  ASSERT_EQ(p.outer.size(), step->kernel.outer.size() + 1);
  EXPECT_EQ(p.outer[0].extent, IndexExpr::Const(4));
  EXPECT_EQ(CountStages(p, Stage::Kind::kReduce), 1);
  EXPECT_EQ(CountStages(p, Stage::Kind::kStore), 1);
  EXPECT_EQ(split->partials.allocate,
            std::vector<int>{static_cast<int>(slots_before)});
  EXPECT_EQ(split->partials.computes,
            std::vector<std::string>{"partials of op"});

  // Combine: the old outer loops, a reduce over the 4 partials, the old
  // stores, allocating what the old kernel allocated.
  const Kernel& c = split->combine.kernel;
  EXPECT_EQ(c.outer.size(), step->kernel.outer.size());
  ASSERT_EQ(CountStages(c, Stage::Kind::kReduce), 1);
  EXPECT_EQ(c.stages[0].kind, Stage::Kind::kReduce);
  ASSERT_EQ(c.stages[0].loops.size(), 1u);
  EXPECT_EQ(c.stages[0].loops[0].extent, IndexExpr::Const(4));
  EXPECT_EQ(CountStages(c, Stage::Kind::kStore),
            CountStages(step->kernel, Stage::Kind::kStore));
  EXPECT_EQ(split->combine.allocate, step->allocate);
  EXPECT_EQ(split->combine.computes, step->computes);
  // Buffer parameters named anew: the partials an output of the first
  // kernel and an input of the second.
  ASSERT_FALSE(p.buffers.empty());
  EXPECT_TRUE(p.buffers.back().is_output);
  EXPECT_EQ(p.buffers.back().dtype, DType::kFloat64);
  bool reads_partials = false;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (split->combine.buffer_slots[i] == static_cast<int>(slots_before)) {
      reads_partials = !c.buffers[i].is_output;
    }
  }
  EXPECT_TRUE(reads_partials);
}

TEST(SplitReduction, OnlyFloat32SumsWiden) {
  struct Case {
    const char* target;
    std::vector<Arg> rest;
    DType dtype;
    DType partial;
  };
  const std::vector<Case> cases = {
      {"aten.sum.default", {}, DType::kFloat64, DType::kFloat64},
      {"aten.sum.default", {}, DType::kInt64, DType::kInt64},
      {"aten.amax.default", {Ints({})}, DType::kFloat32, DType::kFloat32},
      {"aten.prod.default", {}, DType::kFloat32, DType::kFloat32},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.target << " " << DTypeName(c.dtype));
    Plan plan = UnsplitPlan(*Reduce(c.target, c.rest), {{200000}}, c.dtype);
    const KernelStep* step = OnlyKernel(plan);
    ASSERT_NE(step, nullptr);
    ASSERT_TRUE(SplitReduction(*step, {"op"}, plan.slots).has_value());
    EXPECT_EQ(plan.slots.back().dtype, c.partial);
  }
}

TEST(SplitReduction, Thresholds) {
  auto graph = Reduce("aten.sum.default");
  // Reduced extent: below 2^16 is not split; exactly 2^16 is one chunk
  // (fewer than two partials); one more element is two partials.
  for (const auto& [n, partials] :
       std::vector<std::pair<int64_t, int>>{{kSplitMinReduced - 1, 0},
                                            {kSplitMinReduced, 0},
                                            {kSplitMinReduced + 1, 2},
                                            {int64_t{1} << 22, 64},
                                            {int64_t{1} << 24, 64}}) {
    SCOPED_TRACE(n);
    Plan plan = UnsplitPlan(*graph, {{n}});
    const KernelStep* step = OnlyKernel(plan);
    ASSERT_NE(step, nullptr);
    const size_t slots = plan.slots.size();
    std::optional<SplitKernels> split =
        SplitReduction(*step, {"op"}, plan.slots);
    if (partials == 0) {
      EXPECT_FALSE(split.has_value());
      EXPECT_EQ(plan.slots.size(), slots);  // nothing appended
    } else {
      ASSERT_TRUE(split.has_value());
      EXPECT_EQ(split->description, "reduction 'op' split into " +
                                        std::to_string(partials) + " partials");
    }
  }
  // Outer points: 63 rows are split (two partials each), 64 are not.
  auto rows = Reduce("aten.sum.dim_IntList", {Ints({1})});
  Plan few = UnsplitPlan(*rows, {{kSplitMaxOuter - 1, 70000}});
  const KernelStep* step = OnlyKernel(few);
  ASSERT_NE(step, nullptr);
  std::optional<SplitKernels> split = SplitReduction(*step, {"op"}, few.slots);
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->partials.kernel.outer.size(), 2u);
  EXPECT_EQ(split->partials.kernel.outer[0].extent, IndexExpr::Const(2));
  EXPECT_EQ(split->partials.kernel.outer[1].extent,
            IndexExpr::Const(kSplitMaxOuter - 1));
  EXPECT_EQ(few.slots.back().sizes, ConstExprs({2, kSplitMaxOuter - 1}));
  Plan many = UnsplitPlan(*rows, {{kSplitMaxOuter, 70000}});
  step = OnlyKernel(many);
  ASSERT_NE(step, nullptr);
  EXPECT_FALSE(SplitReduction(*step, {"op"}, many.slots).has_value());
}

TEST(SplitReduction, ArgAndTwoPassReductionsAreNotSplit) {
  for (const auto& graph :
       {Reduce("aten.argmax.default"),
        Reduce("aten._softmax.default", {Arg::Int(0), Arg::Bool(false)}),
        Reduce("aten.var.correction", {Arg::None()})}) {
    SCOPED_TRACE(graph->name());
    Plan plan = UnsplitPlan(*graph, {{300001}});
    for (const PlanStep& s : plan.steps) {
      if (!s.is_kernel) continue;
      EXPECT_FALSE(SplitReduction(s.kernel, {"op"}, plan.slots).has_value())
          << s.kernel.kernel.ToString();
    }
  }
}

TEST(SplitReduction, DescriptionNamesEveryReduction) {
  // sum(x) and amax(x) fused into one kernel: both split together.
  GraphBuilder b("two");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "s", "aten.sum.default", {Arg::Ref("x")});
  testing::AddNode(b, "m", "aten.amax.default", {Arg::Ref("x"), Ints({})});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s"), Arg::Ref("m")}).ok());
  auto graph = testing::Finish(b);
  Plan plan = UnsplitPlan(*graph, {{int64_t{1} << 17}});
  const KernelStep* step = OnlyKernel(plan);
  ASSERT_NE(step, nullptr);
  const size_t slots = plan.slots.size();
  std::optional<SplitKernels> split =
      SplitReduction(*step, {"s", "m"}, plan.slots);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->description, "reductions 's', 'm' split into 2 partials");
  EXPECT_EQ(plan.slots.size(), slots + 2);  // one partial slot each
  EXPECT_EQ(CountStages(split->combine.kernel, Stage::Kind::kReduce), 2);
}

TEST(SplitReduction, EnabledUnlessTheEnvironmentSaysZero) {
  {
    SplitEnv unset(nullptr);
    EXPECT_TRUE(SplitReductionsEnabled());
  }
  {
    SplitEnv zero("0");
    EXPECT_FALSE(SplitReductionsEnabled());
  }
  {
    SplitEnv one("1");
    EXPECT_TRUE(SplitReductionsEnabled());
  }
  {
    SplitEnv other("00");
    EXPECT_TRUE(SplitReductionsEnabled());
  }
}

TEST(SplitReduction, SplitPlanMatchesEager) {
  // Schedule splits (two kernels) and the result matches eager mode: rows
  // of a [3, 70001 + 5] sum, a mean (division in the combine's store) and
  // an int32 amax.
  SplitEnv on(nullptr);
  const std::vector<Tensor> x = {
      RandomTensor(DType::kFloat32, {3, 70006}, 1, 0, 1)};
  auto sum = Reduce("aten.sum.dim_IntList", {Ints({1})});
  EXPECT_EQ(testing::PlanOfInputs(*sum, x).num_kernels(), 2);
  testing::ExpectJitMatchesEager(sum, x, 1e-5);
  auto mean = Reduce("aten.mean.dim", {Ints({-1}), Arg::Bool(true)});
  EXPECT_EQ(testing::PlanOfInputs(*mean, x).num_kernels(), 2);
  testing::ExpectJitMatchesEager(mean, x, 1e-5);
  const std::vector<Tensor> ints = {
      RandomTensor(DType::kInt32, {200003}, 2, -1000, 1000)};
  auto amax = Reduce("aten.amax.default", {Ints({})});
  EXPECT_EQ(testing::PlanOfInputs(*amax, ints).num_kernels(), 2);
  testing::ExpectJitMatchesEager(amax, ints, 0);
}

}  // namespace
}  // namespace guardjit
