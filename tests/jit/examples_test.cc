// The graphs in examples/, compiled and run against the eager interpreter on
// random inputs of their placeholders' metadata.

#include <filesystem>
#include <string>
#include <vector>

#include "core/function.h"
#include "core/graph_breaks.h"
#include "core/graph_loader.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX

namespace guardjit {
namespace {

// The shared strict JIT as a Function's compiler.
class SharedJitCompiler : public Compiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override {
    return testing::SharedJit().Compile(std::move(graph), spec);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override {
    return testing::SharedJit().Fallback(std::move(graph));
  }
  std::string name() const override { return testing::SharedJit().name(); }
};

// A graph that breaks runs as segments, each compiled by the strict JIT.
void ExpectSegmentsMatchEager(std::shared_ptr<const Graph> graph,
                              const std::vector<Tensor>& inputs) {
  auto f = Function::Create(graph, std::make_shared<SharedJitCompiler>(), {});
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<InputView> views;
  for (const Tensor& t : inputs) views.push_back(InputView::Of(t));
  auto actual = (*f)->Call(inputs, CallSignature{views, AmbientState()});
  ASSERT_TRUE(actual.ok()) << actual.status();
  auto expected = (*EagerInterpreter::Create(graph))->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& e = (*expected)[i];
    testing::ExpectTensor((*actual)[i], e.dtype(), e.sizes(),
                          testing::ToDoubles(e), 1e-5, 1e-5);
  }
  EXPECT_GE((*f)->stats().graph_count, 2);
  EXPECT_EQ((*f)->stats().compiles, (*f)->stats().graph_count);
}

TEST(ExamplesTest, EveryExampleCompiledMatchesEager) {
  int graphs = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(GJ_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".pbtxt") continue;
    SCOPED_TRACE(entry.path().string());
    auto graph = LoadGraphFromFile(entry.path().string());
    ASSERT_TRUE(graph.ok()) << graph.status();
    std::shared_ptr<const Graph> shared(std::move(*graph));
    std::vector<Tensor> inputs;
    uint64_t seed = 1;
    for (int index : shared->inputs()) {
      const Node& node = shared->node(index);
      ASSERT_TRUE(node.meta.has_value()) << node.name;
      inputs.push_back(
          testing::RandomTensor(node.meta->dtype, node.meta->shape(), seed++));
    }
    ++graphs;
    if (FindGraphBreak(*shared).has_value()) {
      ExpectSegmentsMatchEager(shared, inputs);
      continue;
    }
    testing::ExpectJitMatchesEager(shared, inputs, 1e-5);
    // cat is lowered: a plan (of a graph without control flow) has no
    // eager cat step.
    Specialization spec;
    for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
    auto plan = testing::SharedJit().PlanFor(*shared, spec);
    if (plan.ok()) {
      for (const PlanStep& step : plan->steps) {
        if (step.is_kernel) continue;
        EXPECT_NE(shared->node(step.node).target, "aten.cat.default");
      }
    }
  }
  EXPECT_GE(graphs, 7);
}

}  // namespace
}  // namespace guardjit
