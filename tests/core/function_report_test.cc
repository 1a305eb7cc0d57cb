// What a Function reports about itself (core/function_report.cc): stats(),
// Explain(), DumpGuards(), RecompileReasons() and the graphs it runs as,
// for a function of one graph and for one whose graph breaks.

#include <memory>
#include <string>
#include <vector>

#include "core/function.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"
#include "tests/core/test_graphs.h"
#include "tests/core/toy_ops.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using testing::EntryOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RecordingCompiler;

// Float32 [n] inputs (`count` of them) and their views.
struct Inputs {
  Inputs(const Inputs&) = delete;
  Inputs(int64_t n, int count = 2) {
    for (int k = 0; k < count; ++k) {
      tensors.push_back(*Tensor::Zeros(DType::kFloat32, {n}));
    }
    for (const Tensor& t : tensors) views.push_back(InputView::Of(t));
  }
  CallSignature sig() const { return {views, AmbientState()}; }
  std::vector<Tensor> tensors;
  std::vector<InputView> views;
};

FunctionOptions Static(int limit = 8) {
  FunctionOptions o;
  o.dynamic = DynamicMode::kStatic;
  o.recompile_limit = limit;
  return o;
}

TEST(FunctionReportTest, StatsCountCallsHitsMissesAndFallbacks) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler, Static(/*limit=*/2));
  Inputs three(3), four(4), five(5);
  for (const Inputs* in : {&three, &three, &four, &five, &three, &five}) {
    ASSERT_TRUE(f->Call(in->tensors, in->sig()).ok());
  }
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 6);
  EXPECT_EQ(s.hits, 2);    // the second and third calls of [3]
  EXPECT_EQ(s.misses, 4);  // [3], [4], and [5] twice past the limit
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.recompiles, 1);
  EXPECT_EQ(s.cache_entries, 2);
  EXPECT_EQ(s.fallback_calls, 2);
  EXPECT_EQ(s.graph_count, 1);
  EXPECT_EQ(s.graph_break_count, 0);
  EXPECT_EQ(s.entries_loaded, 0);
  EXPECT_GE(s.compile_ms_total, 0);
}

TEST(FunctionReportTest, NoCallsNoCounts) {
  auto f = *Function::Create(
      ToyAddGraph(), std::make_shared<RecordingCompiler>(), FunctionOptions());
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(s.compiles, 0);
  EXPECT_EQ(s.recompiles, 0);  // not -1 with no entry
  EXPECT_EQ(s.guard_ns_mean, 0);
  EXPECT_TRUE(f->RecompileReasons().empty());
  EXPECT_EQ(f->DumpGuards(), "");
}

TEST(FunctionReportTest, DumpGuardsListsTheMostRecentlyUsedEntryFirst) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler, Static());
  Inputs three(3), four(4);
  ASSERT_EQ(EntryOf(f->Call(three.tensors, three.sig())), 0);
  ASSERT_EQ(EntryOf(f->Call(four.tensors, four.sig())), 1);
  std::string dump = f->DumpGuards();
  EXPECT_LT(dump.find("entry 1 (0 hits):"), dump.find("entry 0 (0 hits):"));
  // A hit on entry 0 moves it to the front.
  ASSERT_EQ(EntryOf(f->Call(three.tensors, three.sig())), 0);
  dump = f->DumpGuards();
  const size_t first = dump.find("entry 0 (1 hits):");
  const size_t second = dump.find("entry 1 (0 hits):");
  ASSERT_NE(first, std::string::npos) << dump;
  ASSERT_NE(second, std::string::npos) << dump;
  EXPECT_LT(first, second);
  // Each entry's own guard tree follows its header.
  EXPECT_THAT(dump.substr(first, second - first), HasSubstr("size=[3]"));
  EXPECT_THAT(dump.substr(second), HasSubstr("size=[4]"));
}

TEST(FunctionReportTest, RecompileReasonsOldestFirstNamingEveryEntryMissed) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler, Static());
  Inputs three(3), four(4), five(5);
  for (const Inputs* in : {&three, &four, &five}) {
    ASSERT_TRUE(f->Call(in->tensors, in->sig()).ok());
  }
  EXPECT_THAT(
      f->RecompileReasons(),
      ElementsAre(
          "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4",
          "0/1: tensor 'x' size mismatch at index 0. expected 4, actual 5; "
          "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5"));
}

TEST(FunctionReportTest, ExplainOneGraph) {
  auto compiler = std::make_shared<RecordingCompiler>();
  FunctionOptions o = Static(/*limit=*/1);
  o.name = "adder";
  auto f = *Function::Create(ToyAddGraph(), compiler, o);
  Inputs three(3), four(4);
  for (const Inputs* in : {&three, &three, &four}) {
    ASSERT_TRUE(f->Call(in->tensors, in->sig()).ok());
  }
  const std::string explain = f->Explain();
  EXPECT_THAT(explain, HasSubstr("Graph Count: 1\nGraph Break Count: 0\n"
                                 "Op Count: 1\nBreak Reasons:\n"
                                 "Ops per Graph:\n  Ops 1:\n"
                                 "    aten.add.Tensor\nOut Guards:\n"
                                 "  entry 0:\n    TREE_GUARD_MANAGER:\n"));
  EXPECT_THAT(explain, HasSubstr("(numbered) - first call\n"));
  EXPECT_THAT(explain, HasSubstr("Function: 'adder' (graph 'f')\n"));
  EXPECT_THAT(explain, HasSubstr("Cache: 1 entries (recompile_limit 1), "
                                 "run-only, backend recording\n"));
  EXPECT_THAT(explain, HasSubstr("Calls: 3, hits: 1, misses: 2, "
                                 "recompiles: 0, eager fallback: 1\n"));
  EXPECT_THAT(explain, HasSubstr("Recompile Reasons:\nGuard Check Latency: "));
  EXPECT_THAT(explain, Not(HasSubstr("Compile: async")));
}

TEST(FunctionReportTest, OneGraphCollectsItselfAndNoBreaks) {
  auto f = *Function::Create(
      ToyAddGraph(), std::make_shared<RecordingCompiler>(), FunctionOptions());
  std::vector<const Function*> graphs;
  f->CollectGraphs(graphs);
  EXPECT_THAT(graphs, ElementsAre(f.get()));
  std::vector<std::string> breaks;
  f->CollectBreaks(breaks);
  EXPECT_TRUE(breaks.empty());
}

TEST(FunctionReportTest, SegmentsSumTheirGraphsAndCountWholeCalls) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(NonzeroBreakGraph(), compiler, Static());
  Inputs three(3, 1), four(4, 1);
  // [3] misses (head and continuation), [3] hits, [4] misses in the head.
  for (const Inputs* in : {&three, &three, &four}) {
    absl::StatusOr<std::vector<Tensor>> out = f->Call(in->tensors, in->sig());
    ASSERT_TRUE(out.ok()) << out.status();
  }
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 3);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.graph_count, 2);
  EXPECT_EQ(s.graph_break_count, 1);
  EXPECT_EQ(s.compiles, 3);  // two of the head, one of the continuation
  EXPECT_EQ(s.recompiles, 1);
  EXPECT_EQ(s.cache_entries, 3);
  std::vector<const Function*> graphs;
  f->CollectGraphs(graphs);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[0]->name(), "h (before 'nz')");
  EXPECT_EQ(graphs[1]->name(), "h (after 'nz')");
  std::vector<std::string> breaks;
  f->CollectBreaks(breaks);
  EXPECT_THAT(breaks, ElementsAre("data-dependent output size: 'nz' "
                                  "(aten.nonzero.default) computes its size "
                                  "from values"));
  EXPECT_THAT(f->RecompileReasons(),
              ElementsAre("graph 1 ('h (before 'nz')'): 0/0: tensor 'x' size "
                          "mismatch at index 0. expected 3, actual 4"));
  const std::string dump = f->DumpGuards();
  EXPECT_THAT(dump, HasSubstr("graph 1 ('h (before 'nz')'):\nentry 1 (0 "
                              "hits):\n"));
  EXPECT_THAT(dump, HasSubstr("graph 2 ('h (after 'nz')'):\nentry 0 (2 "
                              "hits):\n"));
  EXPECT_LT(dump.find("graph 1 ("), dump.find("graph 2 ("));
}

TEST(FunctionReportTest, ExplainSegments) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(NonzeroBreakGraph(), compiler, Static());
  Inputs three(3, 1);
  ASSERT_TRUE(f->Call(three.tensors, three.sig()).ok());
  const std::string explain = f->Explain();
  EXPECT_THAT(explain,
              HasSubstr("Graph Count: 2\nGraph Break Count: 1\nOp Count: 2\n"
                        "Break Reasons:\n  Break Reason 1:\n    Reason: "
                        "data-dependent output size: 'nz' "
                        "(aten.nonzero.default) computes its size from "
                        "values\nOps per Graph:\n  Ops 1:\n"
                        "    aten.add.Tensor\n  Ops 2:\n"
                        "    aten.mul.Tensor\nOut Guards:\n"
                        "  graph 1 entry 0:\n"));
  EXPECT_THAT(explain, HasSubstr("  graph 2 entry 0:\n"));
  EXPECT_THAT(explain, HasSubstr("Compile Times:\n  graph 1 entry 0: "));
  EXPECT_THAT(explain, HasSubstr("Function: 'h' (graph 'h')\nGraphs:\n"
                                 "  graph 1: 'h (before 'nz')' (graph "
                                 "'h.head', inputs x): 1 ops, 1 entries\n"
                                 "  graph 2: 'h (after 'nz')' (graph "
                                 "'h.nz.rest', inputs nz): 1 ops, 1 "
                                 "entries\n"));
  EXPECT_THAT(explain, HasSubstr("Cache: 2 entries over 2 graphs "
                                 "(recompile_limit 8 per graph), backend "
                                 "recording\n"));
  EXPECT_THAT(explain, HasSubstr("Calls: 1, hits: 0, misses: 1, "
                                 "recompiles: 0, eager fallback: 0\n"));
}

TEST(FunctionReportTest, SegmentsBeforeAnyCallListOnlyTheHead) {
  auto f = *Function::Create(NonzeroBreakGraph(),
                             std::make_shared<RecordingCompiler>(), Static());
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.graph_count, 1);
  EXPECT_EQ(s.graph_break_count, 0);
  EXPECT_THAT(f->Explain(), HasSubstr("Graph Count: 1\nGraph Break Count: 0\n"
                                      "Op Count: 1\n"));
}

}  // namespace
}  // namespace guardjit
