// Views feeding pointwise ops, of inputs (strided loads) and of computed
// values (index remaps), with contiguous and non-contiguous inputs.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::NonContiguousCopy;
using testing::RandomTensor;

struct ViewCase {
  std::string name;
  std::string target;
  std::vector<Arg> args;  // after the source
  Shape input;
};

std::vector<ViewCase> Cases() {
  auto ints = [](std::vector<int64_t> v) {
    std::vector<Arg> list;
    for (int64_t i : v) list.push_back(Arg::Int(i));
    return Arg::OfList(list);
  };
  return {
      {"permute", "aten.permute.default", {ints({2, 0, 1})}, {4, 6, 5}},
      {"expand", "aten.expand.default", {ints({3, 4, 6, 5})}, {4, 1, 5}},
      {"unsqueeze", "aten.unsqueeze.default", {Arg::Int(1)}, {4, 6, 5}},
      {"squeeze", "aten.squeeze.default", {}, {4, 1, 5}},
      {"squeeze_dim", "aten.squeeze.dim", {Arg::Int(-2)}, {4, 1, 5}},
      {"squeeze_dims", "aten.squeeze.dims", {ints({0, 1, -1})}, {4, 1, 1}},
      {"slice",
       "aten.slice.Tensor",
       {Arg::Int(1), Arg::Int(1), Arg::Int(6), Arg::Int(2)},
       {4, 6, 5}},
      {"select", "aten.select.int", {Arg::Int(2), Arg::Int(-2)}, {4, 6, 5}},
      {"view", "aten.view.default", {ints({2, 12, 5})}, {4, 6, 5}},
      {"view_flat", "aten.view.default", {ints({-1})}, {4, 6, 5}},
      {"unsafe_view", "aten._unsafe_view.default", {ints({24, 5})}, {4, 6, 5}},
      {"alias", "aten.alias.default", {}, {4, 6, 5}},
  };
}

// out = view(src) * 3 + 1, where src is the input itself or exp(input)
// (a computed value), and the view itself is a second output.
std::shared_ptr<const Graph> ViewGraph(const ViewCase& c, bool computed) {
  GraphBuilder b(c.name);
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::string src = "x";
  if (computed) {
    EXPECT_TRUE(b.AddNode("e", "aten.exp.default", {Arg::Ref("x")}).ok());
    src = "e";
  }
  std::vector<Arg> args = {Arg::Ref(src)};
  args.insert(args.end(), c.args.begin(), c.args.end());
  auto view = b.AddNode("v", c.target, args);
  EXPECT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(
      b.AddNode("m", "aten.mul.Scalar", {Arg::Ref("v"), Arg::Int(3)}).ok());
  EXPECT_TRUE(
      b.AddNode("a", "aten.add.Scalar", {Arg::Ref("m"), Arg::Float(1)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("a"), Arg::Ref("v")}).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

TEST(ViewConformanceTest, ViewsOfInputsAndComputedValuesMatchEager) {
  for (const ViewCase& c : Cases()) {
    for (bool computed : {false, true}) {
      for (DType dtype : {DType::kFloat32, DType::kInt64}) {
        if (computed && dtype == DType::kInt64) continue;
        SCOPED_TRACE(absl::StrCat(c.name, computed ? " of exp(x) " : " of x ",
                                  DTypeName(dtype)));
        auto graph = ViewGraph(c, computed);
        const Tensor x = RandomTensor(dtype, c.input, 5);
        ExpectJitMatchesEager(graph, {x});
        ExpectJitMatchesEager(graph, {NonContiguousCopy(x)});
      }
    }
  }
}

// A view of an input returned as an output is a view, as in eager mode: no
// copy, sharing the input's memory.
TEST(ViewConformanceTest, ViewOutputOfAnInputSharesItsMemory) {
  auto graph = ViewGraph(Cases()[0], /*computed=*/false);
  const Tensor x =
      testing::OnSharedJitDevice(RandomTensor(DType::kFloat32, {4, 6, 5}, 1));
  auto exe = testing::SharedJit().Compile(graph, {{TensorMeta::Of(x)}});
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto out = RunToVector(**exe, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].data(), x.data());
  EXPECT_EQ((*out)[1].stride(0), 1);
}

// split_with_sizes of x or exp(x): the pieces are views (no eager step, no
// copy of an input), read by a pointwise op and returned.
std::shared_ptr<const Graph> SplitGraph(const std::vector<int64_t>& sizes,
                                        int64_t dim, bool computed) {
  GraphBuilder b("split");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::string src = "x";
  if (computed) {
    testing::AddNode(b, "e", "aten.exp.default", {Arg::Ref("x")});
    src = "e";
  }
  testing::AddNode(b, "s", "aten.split_with_sizes.default",
                   {Arg::Ref(src), testing::Ints(sizes), Arg::Int(dim)});
  std::vector<Arg> outputs;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::string piece = absl::StrCat("p", k);
    testing::AddNode(b, piece, "getitem",
                     {Arg::Ref("s"), Arg::Int(static_cast<int64_t>(k))});
    outputs.push_back(Arg::Ref(piece));
  }
  // The middle piece times 3 plus the last one's first slice, broadcast.
  testing::AddNode(b, "first", "aten.slice.Tensor",
                   {Arg::Ref(absl::StrCat("p", sizes.size() - 1)),
                    Arg::Int(dim), Arg::Int(0), Arg::Int(1)});
  testing::AddNode(b, "m", "aten.mul.Scalar", {Arg::Ref("p1"), Arg::Int(3)});
  testing::AddNode(b, "a", "aten.add.Tensor",
                   {Arg::Ref("m"), Arg::Ref("first")});
  outputs.push_back(Arg::Ref("a"));
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return testing::Finish(b);
}

TEST(ViewConformanceTest, SplitWithSizesPiecesAreViews) {
  struct Case {
    std::vector<int64_t> sizes;
    int64_t dim;
  };
  for (const Case& c : {Case{{2, 3, 1}, 1}, Case{{1, 3, 1}, -1},
                        Case{{0, 4, 2}, 1}, Case{{3, 1}, 0}}) {
    for (bool computed : {false, true}) {
      SCOPED_TRACE(absl::StrCat("split ", c.sizes.size(), " pieces along ",
                                c.dim, computed ? " of exp(x)" : " of x"));
      auto graph = SplitGraph(c.sizes, c.dim, computed);
      const Tensor x = RandomTensor(DType::kFloat32, {4, 6, 5}, 3);
      EXPECT_EQ(testing::EagerSteps(graph, {x}), 0);
      ExpectJitMatchesEager(graph, {x});
      ExpectJitMatchesEager(graph, {NonContiguousCopy(x)});
      if (!computed) {
        // Piece 1 of an input is that input's memory, as in eager mode.
        const Tensor on_device = testing::OnSharedJitDevice(x);
        auto exe =
            testing::SharedJit().Compile(graph, {{TensorMeta::Of(on_device)}});
        ASSERT_TRUE(exe.ok()) << exe.status();
        auto out = RunToVector(**exe, {on_device});
        ASSERT_TRUE(out.ok()) << out.status();
        const int dim = c.dim < 0 ? static_cast<int>(c.dim) + 3 : c.dim;
        EXPECT_EQ((*out)[1].data(),
                  static_cast<const float*>(on_device.data()) +
                      c.sizes[0] * on_device.stride(dim));
      }
    }
  }
}

// A dynamic entry (rows symbolic): the pieces keep their constant offsets.
TEST(ViewConformanceTest, SplitWithSizesInADynamicEntry) {
  auto graph = SplitGraph({2, 3, 1}, 1, /*computed=*/true);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t rows : {4, 7, 13, 30, 2}) {
    calls.push_back({RandomTensor(DType::kFloat32, {rows, 6, 5}, rows)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls);
}

}  // namespace
}  // namespace guardjit
