#include "core/graph_builder.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(GraphBuilderTest, BindsPositionalKeywordAndDefaults) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  auto add = b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")},
                       {{"alpha", Arg::Int(2)}});
  ASSERT_TRUE(add.ok()) << add.status();
  auto pool =
      b.AddNode("pool", "aten.pool.default", {Arg::Ref("add"), Arg::Int(3)},
                {{"dtype", Arg::String("float16")}});
  ASSERT_TRUE(pool.ok()) << pool.status();
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("pool")}).ok());
  auto g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& n = (*g)->node((*g)->FindNode("add"));
  ASSERT_EQ(n.args.size(), 3u);
  EXPECT_EQ(n.args[2], Arg::Int(2));
  EXPECT_EQ(n.args[0].as_value().node, 0);
  const Node& p = (*g)->node((*g)->FindNode("pool"));
  EXPECT_EQ(p.args[1],
            Arg::OfList({Arg::Int(3), Arg::Int(3)}));  // int[2] broadcast
  EXPECT_EQ(p.args[2], Arg::OfList({Arg::Int(1), Arg::Int(1)}));  // default
  EXPECT_EQ(p.args[3], Arg::OfDType(DType::kFloat16));  // dtype by name
  EXPECT_TRUE(p.args[4].is_none());
  EXPECT_EQ((*g)->inputs().size(), 2u);
  EXPECT_EQ((*g)->num_ops(), 2);
  EXPECT_EQ((*g)->num_outputs(), 1);
}

// A one-value window list is expanded for the pooling ops, whose ATen
// kernels expand it (torch.export writes avg_pool2d(..., padding=[1])), and
// refused for other int[N] arguments, as torch refuses them.
TEST(GraphBuilderTest, OneValueWindowListExpandsForPoolingOnly) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  auto pool =
      b.AddNode("pool", "aten.avg_pool2d.default",
                {Arg::Ref("x"), Arg::OfList({Arg::Int(3)}),
                 Arg::OfList({Arg::Int(1)}), Arg::OfList({Arg::Int(1)})});
  ASSERT_TRUE(pool.ok()) << pool.status();
  auto adaptive = b.AddNode("adaptive", "aten._adaptive_avg_pool2d.default",
                            {Arg::Ref("x"), Arg::OfList({Arg::Int(2)})});
  EXPECT_EQ(adaptive.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(adaptive.status().message().find(
                "argument 'output_size': expected 2 values, got 1"),
            std::string::npos)
      << adaptive.status();
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("pool")}).ok());
  auto g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& p = (*g)->node((*g)->FindNode("pool"));
  EXPECT_EQ(p.args[1], Arg::OfList({Arg::Int(3), Arg::Int(3)}));
  EXPECT_EQ(p.args[2], Arg::OfList({Arg::Int(1), Arg::Int(1)}));
  EXPECT_EQ(p.args[3], Arg::OfList({Arg::Int(1), Arg::Int(1)}));
}

struct BadCase {
  const char* label;
  std::function<absl::Status(GraphBuilder&)> build;
  absl::StatusCode code;
  const char* message;
};

TEST(GraphBuilderTest, RejectsBadNodesWithPreciseErrors) {
  const std::vector<BadCase> cases = {
      {"unknown target",
       [](GraphBuilder& b) {
         return b.AddNode("n", "aten.frobnicate.default", {Arg::Ref("x")})
             .status();
       },
       absl::StatusCode::kUnimplemented,
       "node 'n' (aten.frobnicate.default): unknown target"},
      {"too many positional",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor",
                      {Arg::Ref("x"), Arg::Ref("x"), Arg::Int(1)})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "takes at most 2 positional arguments but 3 were given"},
      {"missing argument",
       [](GraphBuilder& b) {
         return b.AddNode("n", "aten.add.Tensor", {Arg::Ref("x")}).status();
       },
       absl::StatusCode::kInvalidArgument, "missing required argument 'other'"},
      {"unknown kwarg",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")},
                      {{"beta", Arg::Int(1)}})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "unexpected keyword argument 'beta'"},
      {"duplicate value",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")},
                      {{"other", Arg::Ref("x")}})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "multiple values for argument 'other'"},
      {"wrong kind",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor",
                      {Arg::Ref("x"), Arg::String("hi")})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "argument 'other': expected Tensor, got str"},
      {"none for tensor",
       [](GraphBuilder& b) {
         return b.AddNode("n", "aten.add.Tensor", {Arg::Ref("x"), Arg::None()})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "argument 'other': expected Tensor, got None"},
      {"undefined ref",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor",
                      {Arg::Ref("x"), Arg::Ref("later")})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "refers to 'later', which is not defined before it"},
      {"self reference",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.add.Tensor", {Arg::Ref("n"), Arg::Ref("x")})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "refers to 'n', which is not defined before it"},
      {"duplicate name",
       [](GraphBuilder& b) {
         return b
             .AddNode("x", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")})
             .status();
       },
       absl::StatusCode::kInvalidArgument, "duplicate node name 'x'"},
      {"empty name",
       [](GraphBuilder& b) { return b.AddPlaceholder("").status(); },
       absl::StatusCode::kInvalidArgument, "empty name"},
      {"wrong list length",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.pool.default",
                      {Arg::Ref("x"),
                       Arg::OfList({Arg::Int(1), Arg::Int(2), Arg::Int(3)})})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "argument 'kernel': expected 2 values, got 3"},
      {"bad dtype name",
       [](GraphBuilder& b) {
         return b
             .AddNode("n", "aten.pool.default", {Arg::Ref("x"), Arg::Int(1)},
                      {{"dtype", Arg::String("float7")}})
             .status();
       },
       absl::StatusCode::kInvalidArgument, "unknown dtype 'float7'"},
      {"tensor list of ints",
       [](GraphBuilder& b) {
         return b.AddNode("n", "aten.cat.default", {Arg::OfList({Arg::Int(1)})})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "expected Tensor[] elements, got int"},
      {"multi-output used directly",
       [](GraphBuilder& b) {
         if (auto s = b.AddNode("t", "aten.trio.default", {Arg::Ref("x")});
             !s.ok())
           return s.status();
         return b
             .AddNode("n", "aten.add.Tensor", {Arg::Ref("t"), Arg::Ref("x")})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "'t' returns several values; select one with a getitem node"},
      {"getitem out of range",
       [](GraphBuilder& b) {
         if (auto s = b.AddNode("t", "aten.trio.default", {Arg::Ref("x")});
             !s.ok())
           return s.status();
         return b.AddNode("g", "getitem", {Arg::Ref("t"), Arg::Int(3)})
             .status();
       },
       absl::StatusCode::kInvalidArgument,
       "index 3 out of range for 't', which returns 3 value(s)"},
      {"getitem of single output",
       [](GraphBuilder& b) {
         return b.AddNode("g", "getitem", {Arg::Ref("x"), Arg::Int(0)})
             .status();
       },
       absl::StatusCode::kInvalidArgument, "out of range for 'x'"},
      {"no outputs", [](GraphBuilder& b) { return b.Finish().status(); },
       absl::StatusCode::kInvalidArgument, "graph 'g' has no outputs"},
      {"output literal",
       [](GraphBuilder& b) { return b.SetOutputs({Arg::Int(3)}); },
       absl::StatusCode::kInvalidArgument,
       "output 0 must refer to a value, got int"},
      {"output undefined",
       [](GraphBuilder& b) { return b.SetOutputs({Arg::Ref("nope")}); },
       absl::StatusCode::kInvalidArgument, "output 0 refers to 'nope'"},
      {"shape rule error at finish",
       [](GraphBuilder& b) {
         if (auto s = b.AddNode("p", "aten.picky.default", {Arg::Ref("x")});
             !s.ok())
           return s.status();
         if (auto s = b.SetOutputs({Arg::Ref("p")}); !s.ok()) return s;
         return b.Finish().status();
       },
       absl::StatusCode::kInvalidArgument,
       "node 'p' (aten.picky.default): argument 'self': too picky"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.label);
    GraphBuilder b("g", ToyOps());
    ASSERT_TRUE(b.AddPlaceholder("x", TensorMeta{DType::kFloat32, {2}}).ok());
    absl::Status s = c.build(b);
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

TEST(GraphBuilderTest, RenameNodeKeepsReferencesByValue) {
  GraphBuilder b("g", ToyOps());
  auto x = b.AddPlaceholder("x");
  ASSERT_TRUE(x.ok());
  auto add =
      b.AddNode("t", "aten.add.Tensor", {Arg::Value(*x), Arg::Value(*x)});
  ASSERT_TRUE(add.ok()) << add.status();
  auto neg =
      b.AddNode("t.1", "aten.add.Tensor", {Arg::Value(*add), Arg::Value(*x)});
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ(b.RenameNode(x->node, "y").code(),
            absl::StatusCode::kInvalidArgument);  // an input
  EXPECT_EQ(b.RenameNode(add->node, "t.1").code(),
            absl::StatusCode::kInvalidArgument);  // in use
  ASSERT_TRUE(b.RenameNode(add->node, "sum").ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Value(*neg)}).ok());
  EXPECT_EQ(b.RenameNode(neg->node, "out").code(),
            absl::StatusCode::kFailedPrecondition);  // outputs set
  auto g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindNode("t"), -1);
  ASSERT_EQ((*g)->FindNode("sum"), add->node);
  EXPECT_EQ((*g)->node(neg->node).args[0].as_value().node, add->node);
}

TEST(GraphBuilderTest, RenameNodeRefusesANameALaterNodeWrote) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  auto a = b.AddNode("a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(
      b.AddNode("b", "aten.add.Tensor", {Arg::Ref("a"), Arg::Ref("x")}).ok());
  absl::Status s = b.RenameNode(a->node, "c");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'b' refers to 'a'"));
}

TEST(GraphBuilderTest, FailedAddLeavesBuilderUsable) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_FALSE(b.AddNode("n", "aten.add.Tensor", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode("n", "aten.add.Tensor", {Arg::Ref("x"), Arg::Float(1.5)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("n")}).ok());
  EXPECT_TRUE(b.Finish().ok());
}

// Toy ops for graphs with a graph break: an op whose shape rule is not
// implemented, and one whose output size depends on values (the break).
const OpRegistry& BreakOps() {
  static const OpRegistry* r = [] {
    auto* reg = new OpRegistry();
    auto same =
        [](const MetaArgs& a) -> absl::StatusOr<std::vector<TensorMeta>> {
      return std::vector<TensorMeta>{a.tensor(0)};
    };
    EXPECT_TRUE(
        reg->Register("add.Tensor(Tensor self, Tensor other) -> Tensor", same)
            .ok());
    EXPECT_TRUE(
        reg->Register(
               "unruled(Tensor self) -> Tensor",
               [](const MetaArgs&) -> absl::StatusOr<std::vector<TensorMeta>> {
                 return absl::UnimplementedError("no rule");
               })
            .ok());
    EXPECT_TRUE(
        reg->RegisterDataDependent("by_value(Tensor self) -> Tensor").ok());
    return reg;
  }();
  return *r;
}

// x -> `before` (unruled) -> `brk` (by_value, the break) -> `after` (add).
absl::StatusOr<std::unique_ptr<Graph>> BuildAroundBreak(
    const std::string& before, const std::string& brk,
    const std::string& after) {
  GraphBuilder b("g", BreakOps());
  EXPECT_TRUE(b.AddPlaceholder("x", TensorMeta{DType::kFloat32, {2}}).ok());
  EXPECT_TRUE(b.AddNode(before, "aten.unruled.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.AddNode(brk, "aten.by_value.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode(after, "aten.add.Tensor", {Arg::Ref(brk), Arg::Ref(before)})
          .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(after)}).ok());
  return b.Finish();
}

// Finish tolerates an UNIMPLEMENTED shape rule only from the graph's first
// break on, telling where inference stopped by the node InferShapes reports,
// not by its message: whatever quotes and parentheses the names hold.
TEST(GraphBuilderTest, FinishToleratesOnlyShapeErrorsFromTheBreakOn) {
  auto plain = BuildAroundBreak("u", "nz", "out");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(plain.status().message(),
            "node 'u' (aten.unruled.default): no rule");

  // The message of `before` starts "node 'out' (", as a message about `after`
  // would: still the error of a node before the break.
  auto lookalike = BuildAroundBreak("out' (x", "nz", "out");
  ASSERT_FALSE(lookalike.ok());
  EXPECT_EQ(lookalike.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(lookalike.status().message(),
            "node 'out' (x' (aten.unruled.default): no rule");

  // A break whose name holds quotes and parentheses still ends the check.
  GraphBuilder b("g", BreakOps());
  ASSERT_TRUE(b.AddPlaceholder("x", TensorMeta{DType::kFloat32, {2}}).ok());
  ASSERT_TRUE(
      b.AddNode("nz' ('x')", "aten.by_value.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("y", "aten.add.Tensor", {Arg::Ref("nz' ('x')"), Arg::Ref("x")})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto broken = b.Finish();
  EXPECT_TRUE(broken.ok()) << broken.status();
}

}  // namespace
}  // namespace guardjit
