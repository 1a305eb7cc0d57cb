// A call's inputs as a cache entry sees them (core/symbolic_inputs.h):
// which dims become symbols (0/1 specialization, ranges, duck sizing), which
// strides become symbolic, and the guard trees built from them.

#include "core/symbolic_inputs.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Opt = std::optional<int64_t>;

// Views of `tensors`, which the struct keeps alive (the views point into
// their size and stride arrays).
struct Views {
  explicit Views(std::vector<Tensor> ts) : tensors(std::move(ts)) {
    for (const Tensor& t : tensors) views.push_back(InputView::Of(t));
  }
  CallSignature sig() const { return {views, ambient}; }

  std::vector<Tensor> tensors;
  std::vector<InputView> views;
  AmbientState ambient;
};

Tensor Zeros(std::vector<int64_t> sizes) {
  return *Tensor::Zeros(DType::kFloat32, sizes);
}

// A [rows, cols] view of a zeroed buffer with the given strides.
Tensor Strided(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  return Zeros({rows * cols * 4}).AsStrided({rows, cols}, {s0, s1});
}

const std::vector<std::string> kXY = {"x", "y"};
const std::vector<std::string> kX = {"x"};

TEST(MakeSymbolicInputsTest, NoDynamicDimsGuardEverySizeAndStride) {
  Views v({Zeros({3, 4}), Zeros({5})});
  v.views[1].requires_grad = true;
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(kXY, v.sig(), {}, env);
  EXPECT_EQ(env.num_symbols(), 0);
  EXPECT_TRUE(in.symbolic.empty());
  EXPECT_TRUE(in.symbolic.strides.empty());
  ASSERT_EQ(in.metas.size(), 2u);
  EXPECT_EQ(in.metas[0].sizes.size(), 2u);
  EXPECT_FALSE(in.metas[0].sizes[0].is_symbolic());
  EXPECT_EQ(in.metas[0].sizes[0].hint(), 3);
  EXPECT_EQ(in.metas[0].sizes[1].hint(), 4);
  EXPECT_EQ(in.metas[0].dtype, DType::kFloat32);
  ASSERT_EQ(in.tensors.size(), 2u);
  EXPECT_EQ(in.tensors[0].name, "x");
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(Opt(3), Opt(4)));
  EXPECT_THAT(in.tensors[0].strides, ElementsAre(Opt(4), Opt(1)));
  EXPECT_FALSE(in.tensors[0].requires_grad);
  EXPECT_EQ(in.tensors[1].name, "y");
  EXPECT_THAT(in.tensors[1].sizes, ElementsAre(Opt(5)));
  EXPECT_TRUE(in.tensors[1].requires_grad);
}

TEST(MakeSymbolicInputsTest, DynamicDimBecomesASymbolNamedBySource) {
  Views v({Zeros({3, 4})});
  ShapeEnv env;
  const SymbolicInputs in =
      MakeSymbolicInputs(kX, v.sig(), {{.input = 0, .dim = 1}}, env);
  ASSERT_EQ(env.num_symbols(), 1);
  EXPECT_EQ(env.symbols()[0].source, "x.size()[1]");
  EXPECT_EQ(env.symbols()[0].input, 0);
  EXPECT_EQ(env.symbols()[0].dim, 1);
  EXPECT_EQ(env.symbols()[0].hint, 4);
  EXPECT_THAT(in.symbolic.symbol_names, ElementsAre("x.size()[1]"));
  ASSERT_EQ(in.symbolic.dims.size(), 1u);
  EXPECT_EQ(in.symbolic.dims[0].input, 0);
  EXPECT_EQ(in.symbolic.dims[0].dim, 1);
  EXPECT_EQ(in.symbolic.dims[0].symbol, 0);
  // The meta: dim 0 static, dim 1 the symbol with the call's size as hint.
  EXPECT_FALSE(in.metas[0].sizes[0].is_symbolic());
  ASSERT_TRUE(in.metas[0].sizes[1].is_symbolic());
  EXPECT_EQ(in.metas[0].sizes[1].hint(), 4);
  EXPECT_EQ(in.metas[0].sizes[1].expr(), SymExpr::Symbol(0));
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(Opt(3), std::nullopt));
  // Row-major [3, s0]: dim 0's stride is s0, dim 1's stays 1.
  EXPECT_THAT(in.tensors[0].strides, ElementsAre(std::nullopt, Opt(1)));
  ASSERT_EQ(in.symbolic.strides.size(), 1u);
  EXPECT_EQ(in.symbolic.strides[0].input, 0);
  EXPECT_EQ(in.symbolic.strides[0].dim, 0);
  EXPECT_EQ(in.symbolic.strides[0].expr, SymExpr::Symbol(0));
}

TEST(MakeSymbolicInputsTest, OuterDynamicDimLeavesStridesStatic) {
  // Row-major [s0, 4]: the strides (4, 1) do not depend on s0.
  Views v({Zeros({3, 4})});
  ShapeEnv env;
  const SymbolicInputs in =
      MakeSymbolicInputs(kX, v.sig(), {{.input = 0, .dim = 0}}, env);
  EXPECT_EQ(env.num_symbols(), 1);
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(std::nullopt, Opt(4)));
  EXPECT_THAT(in.tensors[0].strides, ElementsAre(Opt(4), Opt(1)));
  EXPECT_TRUE(in.symbolic.strides.empty());
}

TEST(MakeSymbolicInputsTest, SizesZeroAndOneStaySpecialized) {
  Views v({Zeros({1, 0, 2})});
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(
      kX, v.sig(),
      {{.input = 0, .dim = 0}, {.input = 0, .dim = 1}, {.input = 0, .dim = 2}},
      env);
  // Only the dim of size 2 becomes a symbol.
  ASSERT_EQ(env.num_symbols(), 1);
  EXPECT_EQ(env.symbols()[0].source, "x.size()[2]");
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(Opt(1), Opt(0), std::nullopt));
}

TEST(MakeSymbolicInputsTest, SizesOutsideTheUserRangeStaySpecialized) {
  const DynamicDim ranged{.input = 0, .dim = 0, .min = 5, .max = 10};
  {
    Views v({Zeros({3})});
    ShapeEnv env;
    const SymbolicInputs in = MakeSymbolicInputs(kX, v.sig(), {ranged}, env);
    EXPECT_EQ(env.num_symbols(), 0);
    EXPECT_THAT(in.tensors[0].sizes, ElementsAre(Opt(3)));
  }
  {
    Views v({Zeros({11})});
    ShapeEnv env;
    MakeSymbolicInputs(kX, v.sig(), {ranged}, env);
    EXPECT_EQ(env.num_symbols(), 0);
  }
  Views v({Zeros({7})});
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(kX, v.sig(), {ranged}, env);
  ASSERT_EQ(env.num_symbols(), 1);
  EXPECT_EQ(env.symbols()[0].min, 5);
  EXPECT_EQ(env.symbols()[0].max, 10);
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(std::nullopt));
}

TEST(MakeSymbolicInputsTest, EqualSizesShareOneSymbol) {
  Views v({Zeros({3}), Zeros({3, 5})});
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(
      kXY, v.sig(),
      {{.input = 0, .dim = 0}, {.input = 1, .dim = 0}, {.input = 1, .dim = 1}},
      env);
  // x.size()[0] and y.size()[0] are both 3: one symbol (duck sizing);
  // y.size()[1] is 5: a second one.
  ASSERT_EQ(env.num_symbols(), 2);
  EXPECT_THAT(in.symbolic.symbol_names,
              ElementsAre("x.size()[0]", "y.size()[1]"));
  ASSERT_EQ(in.symbolic.dims.size(), 3u);
  EXPECT_EQ(in.symbolic.dims[0].symbol, 0);
  EXPECT_EQ(in.symbolic.dims[1].symbol, 0);
  EXPECT_EQ(in.symbolic.dims[2].symbol, 1);
  EXPECT_EQ(in.metas[1].sizes[0].expr(), SymExpr::Symbol(0));
}

TEST(MakeSymbolicInputsTest, UserRangesAreNeverDuckSized) {
  Views v({Zeros({3}), Zeros({3})});
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(
      kXY, v.sig(),
      {{.input = 0, .dim = 0}, {.input = 1, .dim = 0, .min = 2, .max = 64}},
      env);
  ASSERT_EQ(env.num_symbols(), 2);
  EXPECT_EQ(in.symbolic.dims[0].symbol, 0);
  EXPECT_EQ(in.symbolic.dims[1].symbol, 1);
  EXPECT_EQ(env.symbols()[1].max, 64);
}

TEST(MakeSymbolicInputsTest, TransposedLayoutGetsSymbolicStridesInItsOrder) {
  // A column-major [3, 4]: strides (1, 3); with dim 0 dynamic the stride of
  // dim 1 is s0.
  Views v({Strided(3, 4, 1, 3)});
  ShapeEnv env;
  const SymbolicInputs in =
      MakeSymbolicInputs(kX, v.sig(), {{.input = 0, .dim = 0}}, env);
  EXPECT_THAT(in.tensors[0].strides, ElementsAre(Opt(1), std::nullopt));
  ASSERT_EQ(in.symbolic.strides.size(), 1u);
  EXPECT_EQ(in.symbolic.strides[0].dim, 1);
  EXPECT_EQ(in.symbolic.strides[0].expr, SymExpr::Symbol(0));
}

TEST(MakeSymbolicInputsTest, PaddedLayoutKeepsStaticStrides) {
  // Rows padded to 8 elements: no order of the dims is contiguous.
  Views v({Strided(3, 4, 8, 1)});
  ShapeEnv env;
  const SymbolicInputs in = MakeSymbolicInputs(
      kX, v.sig(), {{.input = 0, .dim = 0}, {.input = 0, .dim = 1}}, env);
  EXPECT_EQ(env.num_symbols(), 2);
  EXPECT_THAT(in.tensors[0].sizes, ElementsAre(std::nullopt, std::nullopt));
  EXPECT_THAT(in.tensors[0].strides, ElementsAre(Opt(8), Opt(1)));
  EXPECT_TRUE(in.symbolic.strides.empty());
}

TEST(MakeGuardTreeTest, DynamicEntryAcceptsOtherSizesOfItsSymbol) {
  Views made({Zeros({3, 4})});
  ShapeEnv env;
  GuardTree tree = MakeGuardTree(
      made.sig(),
      MakeSymbolicInputs(kX, made.sig(), {{.input = 0, .dim = 0}}, env), env);
  // The symbol's range is a shape guard of the entry.
  ASSERT_EQ(tree.symbolic().shape_guards.size(), 1u);
  EXPECT_EQ(env.ToString(tree.symbolic().shape_guards[0]), "2 <= x.size()[0]");
  int64_t bound[1] = {0};
  Views seven({Zeros({7, 4})});
  EXPECT_TRUE(tree.Check(seven.sig(), absl::MakeSpan(bound)));
  EXPECT_EQ(bound[0], 7);
  // Dim 1 stayed static.
  Views wide({Zeros({7, 5})});
  EXPECT_FALSE(tree.Check(wide.sig()));
  EXPECT_THAT(tree.FailureReason(wide.sig()).value_or(""),
              HasSubstr("tensor 'x' size mismatch at index 1. expected 4, "
                        "actual 5"));
  // Size 1 fails the symbol's range: 0/1 specialization.
  Views one({Zeros({1, 4})});
  EXPECT_FALSE(tree.Check(one.sig()));
  EXPECT_THAT(tree.FailureReason(one.sig()).value_or(""),
              HasSubstr("2 <= x.size()[0]"));
}

TEST(MakeGuardTreeTest, DuckSizedDimsMustStayEqual) {
  Views made({Zeros({3}), Zeros({3})});
  ShapeEnv env;
  GuardTree tree = MakeGuardTree(
      made.sig(),
      MakeSymbolicInputs(kXY, made.sig(),
                         {{.input = 0, .dim = 0}, {.input = 1, .dim = 0}}, env),
      env);
  Views same({Zeros({6}), Zeros({6})});
  EXPECT_TRUE(tree.Check(same.sig()));
  Views differ({Zeros({6}), Zeros({5})});
  EXPECT_FALSE(tree.Check(differ.sig()));
  EXPECT_TRUE(tree.FailureReason(differ.sig()).has_value());
}

TEST(MakeGuardTreeTest, RecordsTheCallsAliasingAndShapeGuards) {
  Tensor shared = Zeros({4});
  Views made({shared, shared});
  ShapeEnv env;
  SymbolicInputs in =
      MakeSymbolicInputs(kXY, made.sig(), {{.input = 0, .dim = 0}}, env);
  // A guard recorded while specializing ends up in the tree.
  const SymExpr s0 = SymExpr::Symbol(0);
  EXPECT_TRUE(env.Guard(SymRel::kLt, s0, SymExpr(10)));
  GuardTree tree = MakeGuardTree(made.sig(), std::move(in), env);
  EXPECT_THAT(tree.alias_of(), ElementsAre(0, 0));
  std::vector<std::string> guards;
  for (const ShapeGuard& g : tree.symbolic().shape_guards) {
    guards.push_back(env.ToString(g));
  }
  EXPECT_THAT(guards, ElementsAre("2 <= x.size()[0]", "x.size()[0] < 10"));
  // Distinct buffers fail the aliasing guard.
  Views distinct({Zeros({4}), Zeros({4})});
  EXPECT_FALSE(tree.Check(distinct.sig()));
}

TEST(StaticGuardTreeTest, GuardsEverythingAndNoShapeGuards) {
  Views made({Zeros({3, 4}), Zeros({2})});
  made.ambient.grad_mode = false;
  const GuardTree tree = StaticGuardTree(kXY, made.sig());
  EXPECT_TRUE(tree.symbolic().empty());
  EXPECT_TRUE(tree.symbolic().shape_guards.empty());
  EXPECT_FALSE(tree.ambient().grad_mode);
  EXPECT_THAT(tree.alias_of(), ElementsAre(0, 1));
  Views same({Zeros({3, 4}), Zeros({2})});
  same.ambient.grad_mode = false;
  EXPECT_TRUE(tree.Check(same.sig()));
  Views other({Zeros({5, 4}), Zeros({2})});
  other.ambient.grad_mode = false;
  EXPECT_EQ(tree.FailureReason(other.sig()).value_or(""),
            "tensor 'x' size mismatch at index 0. expected 3, actual 5");
  // The ambient state is guarded too.
  EXPECT_FALSE(tree.Check(Views({Zeros({3, 4}), Zeros({2})}).sig()));
}

}  // namespace
}  // namespace guardjit
