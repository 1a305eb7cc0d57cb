// The graphs in examples/, compiled and run against the eager interpreter on
// random inputs of their placeholders' metadata.

#include <filesystem>
#include <string>
#include <vector>

#include "core/graph_loader.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

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
    ++graphs;
  }
  EXPECT_GE(graphs, 7);
}

}  // namespace
}  // namespace guardjit
