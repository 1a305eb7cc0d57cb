// Graph breaks through the C API: a cond over tensor values splits the graph
// into segments, each with its own guards and entries, compiled when first
// reached; fullgraph makes the break an error; explain() reports what
// torch._dynamo.explain() does.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/capi/capi_test_util.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX

namespace gjtest {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

GraphPtr ToyExample(gj_context* ctx) {
  gj_graph* graph = nullptr;
  EXPECT_TRUE(Ok(gj_graph_from_file(
      ctx, GJ_EXAMPLES_DIR "/seed_graph_break.pbtxt", nullptr, &graph)));
  return GraphPtr(graph);
}

FunctionPtr Make(gj_context* ctx, const gj_graph* graph, int32_t fullgraph,
                 int32_t recompile_limit = 8) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.fullgraph = fullgraph;
  options.recompile_limit = recompile_limit;
  gj_function* f = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(ctx, graph, &options, &f)));
  return FunctionPtr(f);
}

gj_function_stats Stats(const gj_function* f) {
  gj_function_stats s;
  gj_function_stats_init(&s);
  EXPECT_TRUE(Ok(gj_function_get_stats(f, &s)));
  return s;
}

std::string Text(gj_error* (*fn)(const gj_function*, char**),
                 const gj_function* f) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(fn(f, &text)));
  std::string out = text ? text : "";
  gj_string_destroy(text);
  return out;
}

std::vector<float> Random(size_t n, uint32_t seed, float shift) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> out(n);
  for (float& v : out) v = u(rng) + shift;
  return out;
}

// toy_example(a, b) = a / (|a| + 1) * (sum(b) < 0 ? -b : b), the oracle.
std::vector<float> Toy(const std::vector<float>& a,
                       const std::vector<float>& b) {
  float sum = 0;
  for (float v : b) sum += v;
  std::vector<float> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = a[i] / (std::fabs(a[i]) + 1);
    out[i] = x * (sum < 0 ? b[i] * -1 : b[i]);
  }
  return out;
}

// Calls f into a caller buffer and checks the toy example's values.
void CallToy(gj_function* f, size_t n, uint32_t seed, float shift) {
  const std::vector<float> a = Random(n, seed, 0);
  const std::vector<float> b = Random(n, seed + 1, shift);
  HostTensor<float> ta({static_cast<int64_t>(n)}, a);
  HostTensor<float> tb({static_cast<int64_t>(n)}, b);
  HostTensor<float> out({static_cast<int64_t>(n)}, std::vector<float>(n));
  const DLTensor* in[] = {ta.dl(), tb.dl()};
  const DLTensor* outs[] = {out.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f, in, 2, outs, 1, nullptr)));
  const std::vector<float> want = Toy(a, b);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(out.buffer()[i], want[i], 1e-6f) << "element " << i;
  }
}

TEST(GraphBreaksTest, ToyExampleRunsAsTwoGraphsPerBranch) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = ToyExample(ctx.get());
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  // sum(b) >= 0: the false branch.
  CallToy(f.get(), 10, 1, 2.0f);
  gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.graph_count, 2);
  EXPECT_EQ(s.graph_break_count, 1);
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 0);
  std::string explain = Text(gj_function_explain, f.get());
  // torch._dynamo.explain() of the seed: 2 graphs, 1 break, 6 ops.
  EXPECT_THAT(explain, HasSubstr("Graph Count: 2\n"));
  EXPECT_THAT(explain, HasSubstr("Graph Break Count: 1\n"));
  EXPECT_THAT(explain, HasSubstr("Op Count: 6\n"));
  EXPECT_THAT(explain,
              HasSubstr("Reason: data-dependent predicate: cond 'cond' reads "
                        "the value of 'lt'"));
  EXPECT_THAT(explain, HasSubstr("  Ops 2:\n    aten.mul.Tensor\n"));
  EXPECT_THAT(explain, HasSubstr("after 'cond', false branch"));
  // Each graph's entry is compiled by the JIT, not run by the eager plan.
  for (const char* entry : {"graph 1 entry 0", "graph 2 entry 0"}) {
    EXPECT_THAT(explain, ContainsRegex(std::string(entry) +
                                       ": [0-9.]+ ms \\(jit: [1-9][0-9]* fused "
                                       "kernels, 0 eager nodes\\)"));
  }
  EXPECT_THAT(explain, Not(HasSubstr("eager plan")));
  // The same branch again: every segment hits.
  CallToy(f.get(), 10, 3, 2.0f);
  s = Stats(f.get());
  EXPECT_EQ(s.calls, 2);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.compiles, 2);
  // sum(b) < 0: the true branch compiles only now: 3 graphs.
  CallToy(f.get(), 10, 5, -2.0f);
  s = Stats(f.get());
  EXPECT_EQ(s.graph_count, 3);
  EXPECT_EQ(s.graph_break_count, 1);
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.hits, 1);
  explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, HasSubstr("Graph Count: 3\n"));
  // 5 before the break, 2 after it on the true branch, 1 on the false one.
  EXPECT_THAT(explain, HasSubstr("Op Count: 8\n"));
  CallToy(f.get(), 10, 7, -2.0f);
  CallToy(f.get(), 10, 9, 2.0f);
  s = Stats(f.get());
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.hits, 3);
  // The continuation's guards name the values that cross the break.
  const std::string guards = Text(gj_function_dump_guards, f.get());
  EXPECT_THAT(guards, HasSubstr("graph 2 ('seed_graph_break (after 'cond', "
                                "true branch)')"));
  EXPECT_THAT(guards, HasSubstr("TENSOR_MATCH: check_tensor(div"));
  EXPECT_THAT(guards, HasSubstr("TENSOR_MATCH: check_tensor(b"));
}

TEST(GraphBreaksTest, SegmentsRecompileOnTheirOwn) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = ToyExample(ctx.get());
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  // New sizes: each segment misses once, then automatic dynamic serves
  // every later size with one more entry per segment.
  for (size_t n : {10, 11, 12, 40, 3, 7}) CallToy(f.get(), n, n, 2.0f);
  gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.graph_count, 2);
  EXPECT_EQ(s.compiles, 4);
  EXPECT_EQ(s.cache_entries, 4);
  const std::string explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, HasSubstr("Recompile Reasons:\n  graph 1: "));
}

TEST(GraphBreaksTest, FullgraphMakesTheBreakAnError) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = ToyExample(ctx.get());
  FunctionPtr f = Make(ctx.get(), graph.get(), 1);
  HostTensor<float> a({4}, {1, 2, 3, 4});
  HostTensor<float> b({4}, {1, 2, 3, 4});
  HostTensor<float> out({4}, {7, 7, 7, 7});
  const DLTensor* in[] = {a.dl(), b.dl()};
  const DLTensor* outs[] = {out.dl()};
  EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 2, outs, 1, nullptr),
                      GJ_UNIMPLEMENTED,
                      {"fullgraph", "graph break at node 'cond'",
                       "data-dependent predicate: cond 'cond' reads the value "
                       "of 'lt'"}));
  EXPECT_EQ(out.buffer(), (std::vector<float>{7, 7, 7, 7}));
  EXPECT_EQ(Stats(f.get()).compiles, 0);
}

TEST(GraphBreaksTest, PredicateMustHaveOneElement) {
  ContextPtr ctx = MakeContext();
  // cond(x > 0, ...) with x of 3 elements: the predicate is not a scalar.
  const char* text = R"pb(
    name: "vector_predicate"
    placeholders { name: "x" }
    nodes {
      name: "gt"
      target: "aten.gt.Scalar"
      args { ref: "x" }
      args { i: 0 }
    }
    nodes {
      name: "cond"
      target: "higher_order.cond"
      args { ref: "gt" }
      args { subgraph: "t" }
      args { subgraph: "t" }
      args { list { items { ref: "x" } } }
    }
    nodes {
      name: "r"
      target: "getitem"
      args { ref: "cond" }
      args { i: 0 }
    }
    outputs { ref: "r" }
    subgraphs {
      key: "t"
      value {
        name: "t"
        placeholders { name: "y" }
        outputs { ref: "y" }
      }
    }
  )pb";
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(
      gj_graph_from_text(ctx.get(), text, std::strlen(text), nullptr, &raw)));
  GraphPtr graph(raw);
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  HostTensor<float> x({3}, {1, 2, 3});
  HostTensor<float> out({3}, {0, 0, 0});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* outs[] = {out.dl()};
  EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 1, outs, 1, nullptr),
                      GJ_INVALID_ARGUMENT,
                      {"node 'cond'", "the predicate has 3 elements"}));
  EXPECT_EQ(out.buffer(), (std::vector<float>{0, 0, 0}));
  HostTensor<float> one({1}, {-1});
  HostTensor<float> out1({1}, {0});
  const DLTensor* in1[] = {one.dl()};
  const DLTensor* outs1[] = {out1.dl()};
  EXPECT_TRUE(Ok(gj_function_call(f.get(), in1, 1, outs1, 1, nullptr)));
  EXPECT_EQ(out1.buffer(), (std::vector<float>{-1}));
}

// Two data-dependent conds in a row: three graphs and two breaks for one
// path, the second break found when the first continuation is planned.
TEST(GraphBreaksTest, BreaksChain) {
  ContextPtr ctx = MakeContext();
  const char* text = R"pb(
    name: "two_breaks"
    placeholders { name: "x" }
    nodes {
      name: "s1"
      target: "aten.sum.default"
      args { ref: "x" }
    }
    nodes {
      name: "p1"
      target: "aten.gt.Scalar"
      args { ref: "s1" }
      args { i: 0 }
    }
    nodes {
      name: "c1"
      target: "higher_order.cond"
      args { ref: "p1" }
      args { subgraph: "double" }
      args { subgraph: "negate" }
      args { list { items { ref: "x" } } }
    }
    nodes {
      name: "y"
      target: "getitem"
      args { ref: "c1" }
      args { i: 0 }
    }
    nodes {
      name: "s2"
      target: "aten.sum.default"
      args { ref: "y" }
    }
    nodes {
      name: "p2"
      target: "aten.gt.Scalar"
      args { ref: "s2" }
      args { i: 10 }
    }
    nodes {
      name: "c2"
      target: "higher_order.cond"
      args { ref: "p2" }
      args { subgraph: "negate" }
      args { subgraph: "double" }
      args { list { items { ref: "y" } } }
    }
    nodes {
      name: "z"
      target: "getitem"
      args { ref: "c2" }
      args { i: 0 }
    }
    nodes {
      name: "out"
      target: "aten.add.Tensor"
      args { ref: "z" }
      args { ref: "x" }
    }
    outputs { ref: "out" }
    subgraphs {
      key: "double"
      value {
        name: "double"
        placeholders { name: "v" }
        nodes {
          name: "m"
          target: "aten.mul.Tensor"
          args { ref: "v" }
          args { i: 2 }
        }
        outputs { ref: "m" }
      }
    }
    subgraphs {
      key: "negate"
      value {
        name: "negate"
        placeholders { name: "v" }
        nodes {
          name: "n"
          target: "aten.neg.default"
          args { ref: "v" }
        }
        outputs { ref: "n" }
      }
    }
  )pb";
  gj_graph* raw = nullptr;
  ASSERT_TRUE(Ok(
      gj_graph_from_text(ctx.get(), text, std::strlen(text), nullptr, &raw)));
  GraphPtr graph(raw);
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  auto run = [&](std::vector<float> x) {
    HostTensor<float> tx({static_cast<int64_t>(x.size())}, x);
    HostTensor<float> out({static_cast<int64_t>(x.size())},
                          std::vector<float>(x.size()));
    const DLTensor* in[] = {tx.dl()};
    const DLTensor* outs[] = {out.dl()};
    EXPECT_TRUE(Ok(gj_function_call(f.get(), in, 1, outs, 1, nullptr)));
    return out.buffer();
  };
  // sum 6 > 0: y = 2x (sum 12 > 10): z = -y; out = -2x + x = -x.
  EXPECT_EQ(run({1, 2, 3}), (std::vector<float>{-1, -2, -3}));
  gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.graph_count, 3);
  EXPECT_EQ(s.graph_break_count, 2);
  // sum 1.5: y = 2x (sum 3 <= 10): z = 2y; out = 4x + x = 5x.
  EXPECT_EQ(run({0.5f, 0.5f, 0.5f}), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  // sum -6: y = -x (sum 6 <= 10): z = 2y; out = -2x + x = -x.
  EXPECT_EQ(run({-1, -2, -3}), (std::vector<float>{1, 2, 3}));
  s = Stats(f.get());
  // c1's head; c1's true branch: c2's head and both c2 branches; c1's false
  // branch: c2's head and its false branch. c2 is a break site under each
  // branch of c1.
  EXPECT_EQ(s.graph_count, 6);
  EXPECT_EQ(s.graph_break_count, 3);
  const std::string explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, HasSubstr("cond 'c1' reads the value of 'p1'"));
  EXPECT_THAT(explain, HasSubstr("cond 'c2' reads the value of 'p2'"));
}

GraphPtr FromText(gj_context* ctx, const char* text) {
  gj_graph* raw = nullptr;
  EXPECT_TRUE(
      Ok(gj_graph_from_text(ctx, text, std::strlen(text), nullptr, &raw)));
  return GraphPtr(raw);
}

// nonzero ends a segment: the next one sees its real size and is guarded on
// it like an input, so counts that vary settle into one dynamic entry.
TEST(GraphBreaksTest, NonzeroFeedsTheNextSegmentAtEveryCount) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = FromText(ctx.get(), R"pb(
    name: "nonzero_chain"
    placeholders { name: "x" }
    nodes {
      name: "gt"
      target: "aten.gt.Scalar"
      args { ref: "x" }
      args { i: 0 }
    }
    nodes {
      name: "nz"
      target: "aten.nonzero.default"
      args { ref: "gt" }
    }
    nodes {
      name: "twice"
      target: "aten.mul.Tensor"
      args { ref: "nz" }
      args { i: 2 }
    }
    nodes {
      name: "out"
      target: "aten.add.Tensor"
      args { ref: "twice" }
      args { i: 1 }
    }
    outputs { ref: "out" }
  )pb");
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  std::mt19937 rng(3);
  for (int count = 2; count <= 11; ++count) {
    // `count` positive elements of 16 at random places.
    std::vector<float> x(16, -1.0f);
    std::vector<int> where(16);
    for (int i = 0; i < 16; ++i) where[i] = i;
    std::shuffle(where.begin(), where.end(), rng);
    for (int i = 0; i < count; ++i) x[where[i]] = 0.5f + i;
    HostTensor<float> tx({16}, x);
    const DLTensor* in[] = {tx.dl()};
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, &out, 1)));
    ManagedPtr owned(out);
    ASSERT_EQ(Shape(out->dl_tensor), (std::vector<int64_t>{count, 1}));
    const int64_t* got = static_cast<const int64_t*>(out->dl_tensor.data);
    int row = 0;
    for (int i = 0; i < 16; ++i) {
      if (x[i] > 0) EXPECT_EQ(got[row++], 2 * i + 1) << "count " << count;
    }
  }
  const gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.graph_count, 2);
  EXPECT_EQ(s.graph_break_count, 1);
  // The head once; the rest static for the first count, then dynamic.
  EXPECT_EQ(s.compiles, 3);
  const std::string explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, HasSubstr("data-dependent output size: 'nz' "
                                 "(aten.nonzero.default)"));
  EXPECT_THAT(explain, HasSubstr("Op Count: 3\n"));
  const std::string guards = Text(gj_function_dump_guards, f.get());
  EXPECT_THAT(guards, HasSubstr("check_tensor(nz, torch.int64"));
}

// masked_select and item() (a 0-dim wrapped number) cross a break as
// tensors; the continuation reads the item's value at run time.
TEST(GraphBreaksTest, MaskedSelectAndItemCrossTheBreak) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = FromText(ctx.get(), R"pb(
    name: "masked_scale"
    placeholders { name: "x" }
    placeholders { name: "m" }
    nodes {
      name: "sel"
      target: "aten.masked_select.default"
      args { ref: "x" }
      args { ref: "m" }
    }
    nodes {
      name: "total"
      target: "aten.sum.default"
      args { ref: "sel" }
    }
    nodes {
      name: "item"
      target: "aten._local_scalar_dense.default"
      args { ref: "total" }
    }
    nodes {
      name: "out"
      target: "aten.mul.Tensor"
      args { ref: "x" }
      args { ref: "item" }
    }
    outputs { ref: "out" }
  )pb");
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<float> x = Random(6, trial, 0);
    std::vector<uint8_t> m(6);
    float total = 0;
    for (int i = 0; i < 6; ++i) {
      m[i] = (i + trial) % 3 != 0;
      if (m[i]) total += x[i];
    }
    HostTensor<float> tx({6}, x);
    HostTensor<uint8_t> tm({6}, m);
    tm.dl()->dtype = {GJ_DL_BOOL, 8, 1};
    HostTensor<float> out({6}, std::vector<float>(6));
    const DLTensor* in[] = {tx.dl(), tm.dl()};
    const DLTensor* outs[] = {out.dl()};
    ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 2, outs, 1, nullptr)));
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(out.buffer()[i], x[i] * total, 1e-5f) << "trial " << trial;
    }
  }
  const gj_function_stats s = Stats(f.get());
  // Nothing runs before masked_select; sum runs between the two breaks and
  // mul after item: two graphs, two breaks.
  EXPECT_EQ(s.graph_count, 2);
  EXPECT_EQ(s.graph_break_count, 2);
}

// sym_stride and sym_storage_offset read the real tensor (shape inference
// does not model strides), so they break the graph like item(): a
// transposed input gets its own stride, not the contiguous one. Their
// values cross the break as 0-dim tensors, which Tensor arguments take;
// an int[] argument (as_strided's strides) refuses them, naming the node.
TEST(GraphBreaksTest, SymStrideReadsTheRealStrides) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = FromText(ctx.get(), R"pb(
    name: "scaled_by_stride"
    placeholders { name: "x" }
    nodes {
      name: "s"
      target: "aten.sym_stride.int"
      args { ref: "x" }
      args { i: 0 }
    }
    nodes {
      name: "o"
      target: "aten.sym_storage_offset.default"
      args { ref: "x" }
    }
    nodes {
      name: "m"
      target: "aten.mul.Tensor"
      args { ref: "x" }
      args { ref: "s" }
    }
    nodes {
      name: "out"
      target: "aten.add.Tensor"
      args { ref: "m" }
      args { ref: "o" }
    }
    outputs { ref: "out" }
  )pb");
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  std::vector<float> buffer(12);
  for (int i = 0; i < 12; ++i) buffer[i] = static_cast<float>(i) + 1;
  // x [3, 4]: contiguous (stride 0 is 4), then the same memory read as the
  // transpose of a [4, 3] tensor (stride 0 is 1).
  for (const auto& [strides, row_stride] :
       {std::pair{std::vector<int64_t>{4, 1}, 4},
        std::pair{std::vector<int64_t>{1, 3}, 1}}) {
    SCOPED_TRACE(row_stride);
    HostTensor<float> x({3, 4}, buffer, strides);
    HostTensor<float> out({3, 4}, std::vector<float>(12, -1));
    const DLTensor* in[] = {x.dl()};
    const DLTensor* outs[] = {out.dl()};
    for (int call = 0; call < 2; ++call) {
      ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 1, outs, 1, nullptr)));
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
          const float v = buffer[i * strides[0] + j * strides[1]];
          EXPECT_EQ(out.buffer()[i * 4 + j], v * row_stride) << i << "," << j;
        }
      }
    }
  }
  EXPECT_GE(Stats(f.get()).graph_break_count, 1);
  EXPECT_THAT(Text(gj_function_explain, f.get()),
              HasSubstr("'s' (aten.sym_stride.int) computes its size from "
                        "values"));

  GraphPtr strided = FromText(ctx.get(), R"pb(
    name: "strided_view"
    placeholders { name: "x" }
    nodes {
      name: "s"
      target: "aten.sym_stride.int"
      args { ref: "x" }
      args { i: 0 }
    }
    nodes {
      name: "v"
      target: "aten.as_strided.default"
      args { ref: "x" }
      args {
        list {
          items { i: 2 }
          items { i: 2 }
        }
      }
      args {
        list {
          items { ref: "s" }
          items { i: 1 }
        }
      }
    }
    outputs { ref: "v" }
  )pb");
  FunctionPtr g = Make(ctx.get(), strided.get(), 0);
  HostTensor<float> x({3, 4}, buffer);
  HostTensor<float> out({2, 2}, std::vector<float>(4, -1));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* outs[] = {out.dl()};
  EXPECT_TRUE(IsError(
      gj_function_call(g.get(), in, 1, outs, 1, nullptr), GJ_INVALID_ARGUMENT,
      {"node 'v' (aten.as_strided.default)", "argument 'stride'"}));
  EXPECT_EQ(out.buffer(), std::vector<float>(4, -1));  // nothing written
}

// Past its recompile limit a segment, not the whole function, goes
// run-only: the head misses on every new size of x and runs eagerly, while
// the continuation, which sees only y, keeps serving its compiled entry.
TEST(GraphBreaksTest, RecompileLimitIsPerSegment) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = FromText(ctx.get(), R"pb(
    name: "limit_per_segment"
    placeholders { name: "x" }
    placeholders { name: "y" }
    nodes {
      name: "s"
      target: "aten.sum.default"
      args { ref: "x" }
    }
    nodes {
      name: "p"
      target: "aten.gt.Scalar"
      args { ref: "s" }
      args { i: 0 }
    }
    nodes {
      name: "c"
      target: "higher_order.cond"
      args { ref: "p" }
      args { subgraph: "neg" }
      args { subgraph: "neg" }
      args { list { items { ref: "y" } } }
    }
    nodes {
      name: "r"
      target: "getitem"
      args { ref: "c" }
      args { i: 0 }
    }
    outputs { ref: "r" }
    subgraphs {
      key: "neg"
      value {
        name: "neg"
        placeholders { name: "v" }
        nodes {
          name: "n"
          target: "aten.neg.default"
          args { ref: "v" }
        }
        outputs { ref: "n" }
      }
    }
  )pb");
  gj_function_options options;
  gj_function_options_init(&options);
  options.recompile_limit = 1;
  options.dynamic = GJ_DYNAMIC_STATIC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(Ok(gj_function_create(ctx.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  for (int64_t n : {4, 5, 6}) {
    HostTensor<float> x({n}, std::vector<float>(n, 1.0f));
    HostTensor<float> y({3}, {1, 2, 3});
    HostTensor<float> out({3}, {0, 0, 0});
    const DLTensor* in[] = {x.dl(), y.dl()};
    const DLTensor* outs[] = {out.dl()};
    ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 2, outs, 1, nullptr)));
    EXPECT_EQ(out.buffer(), (std::vector<float>{-1, -2, -3}));
  }
  const gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.compiles, 2);        // the head once, the continuation once
  EXPECT_EQ(s.fallback_calls, 2);  // the head at x of 5 and 6
  const std::string explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, ContainsRegex("graph 1: [^\n]*1 entries, run-only"));
  EXPECT_THAT(explain, ContainsRegex("graph 2: [^\n]*1 entries\n"));
}

std::mutex log_mu;
std::vector<std::string>* log_lines = nullptr;

void Collect(void*, const char* topic, const char* message) {
  std::lock_guard<std::mutex> lock(log_mu);
  if (log_lines != nullptr) {
    log_lines->push_back(std::string(topic) + ": " + message);
  }
}

TEST(GraphBreaksTest, LogsEachBreakOnceWhenFirstTaken) {
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> lock(log_mu);
    log_lines = &lines;
  }
  gj_set_log_callback(&Collect, nullptr);
  gj_set_log_topics("graph_breaks");
  ContextPtr ctx = MakeContext();
  GraphPtr graph = ToyExample(ctx.get());
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  for (int i = 0; i < 3; ++i) CallToy(f.get(), 8, i, 2.0f);
  CallToy(f.get(), 8, 11, -2.0f);
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  std::lock_guard<std::mutex> lock(log_mu);
  log_lines = nullptr;
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_THAT(lines[0], HasSubstr("graph_breaks: Graph break in function "
                                  "'seed_graph_break' at 'cond': "
                                  "data-dependent predicate"));
  EXPECT_THAT(lines[0], HasSubstr("false branch"));
  EXPECT_THAT(lines[1], HasSubstr("true branch"));
}

TEST(GraphBreaksTest, ConcurrentCallsTakeBothBranches) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = ToyExample(ctx.get());
  FunctionPtr f = Make(ctx.get(), graph.get(), 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        CallToy(f.get(), 16, t * 100 + i, (t + i) % 2 ? 2.0f : -2.0f);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.calls, 160);
  EXPECT_EQ(s.graph_count, 3);
  EXPECT_EQ(s.compiles, 3);
}

}  // namespace
}  // namespace gjtest
