#ifndef GUARDJIT_TESTS_CORE_TEST_GRAPHS_H_
#define GUARDJIT_TESTS_CORE_TEST_GRAPHS_H_

// Small graphs several test files build.

#include <memory>
#include <utility>

#include "core/graph.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"

namespace guardjit {

// f(x, y) = x + y over the toy ops.
inline std::shared_ptr<const Graph> ToyAddGraph() {
  GraphBuilder b("f", ToyOps());
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(
      b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("add")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

// A cond's two branches on `b`: true_graph_0(a, b) = a + b and
// false_graph_0(a, b) = a - b.
inline void AddAddSubBranches(GraphBuilder& b) {
  for (auto [name, target] : {std::pair{"true_graph_0", "aten.add.Tensor"},
                              std::pair{"false_graph_0", "aten.sub.Tensor"}}) {
    GraphBuilder br(name);
    EXPECT_TRUE(br.AddPlaceholder("a").ok());
    EXPECT_TRUE(br.AddPlaceholder("b").ok());
    EXPECT_TRUE(br.AddNode("r", target, {Arg::Ref("a"), Arg::Ref("b")}).ok());
    EXPECT_TRUE(br.SetOutputs({Arg::Ref("r")}).ok());
    EXPECT_TRUE(b.AddSubgraph(name, *br.Finish()).ok());
  }
}

// h(x) = nz * nz with nz = nonzero(x + x): a head, an output-size break
// (the eager nonzero) and a continuation.
inline std::shared_ptr<const Graph> NonzeroBreakGraph() {
  GraphBuilder b("h");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(
      b.AddNode("a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("a")}).ok());
  EXPECT_TRUE(
      b.AddNode("c", "aten.mul.Tensor", {Arg::Ref("nz"), Arg::Ref("nz")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("c")}).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::shared_ptr<const Graph>(*std::move(g)) : nullptr;
}

}  // namespace guardjit

#endif  // GUARDJIT_TESTS_CORE_TEST_GRAPHS_H_
