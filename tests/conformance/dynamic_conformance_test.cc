// Dynamic cache entries through the CPU JIT: each graph is compiled ONCE for
// a dynamic entry (sizes are symbols s0, s1, ...) and then called at many
// sizes its guards accept, every result checked against the eager
// interpreter; the plans must be fused kernels, not the eager plan.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::ExpectDynamicJitMatchesEager;
using testing::Finish;
using ::testing::HasSubstr;
using testing::Ints;
using testing::RandomTensor;
using testing::SharedJit;
using testing::SharedJitBackend;

// Sizes of the calls: 2, odd sizes, and one large enough to run in parallel.
const std::vector<std::pair<int64_t, int64_t>> kSizes = {
    {3, 5}, {2, 2}, {7, 33}, {1, 17}, {65, 9}, {5, 3}, {11, 4}, {300, 301}};

// The calls: for each (n, m) of kSizes with n, m >= min_size (sizes 0 and 1
// are specialized, not symbols), tensors of the shapes `shapes` gives.
std::vector<std::vector<Tensor>> Calls(
    DType dtype,
    const std::function<std::vector<Shape>(int64_t, int64_t)>& shapes,
    int64_t min_size = 2) {
  std::vector<std::vector<Tensor>> calls;
  uint64_t seed = 1;
  for (const auto& [n, m] : kSizes) {
    if (n < min_size || m < min_size) continue;
    std::vector<Tensor> inputs;
    for (const Shape& s : shapes(n, m)) {
      inputs.push_back(RandomTensor(dtype, s, seed++));
    }
    calls.push_back(std::move(inputs));
  }
  return calls;
}

// The description without the kernels' backend (the harness checks that).
std::string Describe(const std::unique_ptr<Executable>& exe) {
  return exe == nullptr ? "" : testing::WithoutBackend(exe->Describe());
}

// relu((x + y) * x) - 1.5 with y broadcast along rows: one kernel.
TEST(DynamicConformanceTest, PointwiseChainWithBroadcasting) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("pointwise");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    ASSERT_TRUE(b.AddPlaceholder("y").ok());
    AddNode(b, "a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
    AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("a"), Arg::Ref("x")});
    AddNode(b, "r", "aten.relu.default", {Arg::Ref("m")});
    AddNode(b, "o", "aten.sub.Scalar", {Arg::Ref("r"), Arg::Int(3)});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
    const int compiled = SharedJit().kernels().compiled();
    auto exe =
        ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}, {0, 1}, {1, 0}},
                                     Calls(dtype, [](int64_t n, int64_t m) {
                                       return std::vector<Shape>{{n, m}, {m}};
                                     }));
    EXPECT_EQ(Describe(exe),
              "jit: 1 fused kernels, 0 eager nodes, 2 size symbols");
    // One kernel serves every size.
    EXPECT_LE(SharedJit().kernels().compiled() - compiled, 1);
  }
}

// sum over dim 1 with keepdim, amax over dim 0, mean over dim 1.
TEST(DynamicConformanceTest, ReductionsOverSymbolicDims) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("reductions");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddNode(b, "s", "aten.sum.dim_IntList",
            {Arg::Ref("x"), Ints({1}), Arg::Bool(true)});
    AddNode(b, "c", "aten.sub.Tensor", {Arg::Ref("x"), Arg::Ref("s")});
    AddNode(b, "mx", "aten.amax.default",
            {Arg::Ref("x"), Ints({0}), Arg::Bool(false)});
    std::vector<Arg> outputs = {Arg::Ref("c"), Arg::Ref("mx")};
    if (IsFloating(dtype)) {
      AddNode(b, "mean", "aten.mean.dim",
              {Arg::Ref("x"), Ints({1}), Arg::Bool(false)});
      outputs.push_back(Arg::Ref("mean"));
    }
    ASSERT_TRUE(b.SetOutputs(outputs).ok());
    auto exe =
        ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}, {0, 1}},
                                     Calls(dtype,
                                           [](int64_t n, int64_t m) {
                                             return std::vector<Shape>{{n, m}};
                                           }),
                                     dtype == DType::kFloat32 ? 1e-4 : -1);
    EXPECT_THAT(Describe(exe), HasSubstr(" 0 eager nodes, 2 size symbols"));
  }
}

// softmax and log_softmax over rows of symbolic length, and var over them.
TEST(DynamicConformanceTest, SoftmaxAndVarRows) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("softmax");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddNode(b, "sm", "aten._softmax.default",
            {Arg::Ref("x"), Arg::Int(-1), Arg::Bool(false)});
    AddNode(b, "lsm", "aten._log_softmax.default",
            {Arg::Ref("x"), Arg::Int(0), Arg::Bool(false)});
    AddNode(b, "v", "aten.var.correction", {Arg::Ref("x"), Ints({1})},
            {{"correction", Arg::Int(1)}, {"keepdim", Arg::Bool(true)}});
    ASSERT_TRUE(
        b.SetOutputs({Arg::Ref("sm"), Arg::Ref("lsm"), Arg::Ref("v")}).ok());
    auto exe =
        ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}, {0, 1}},
                                     Calls(dtype,
                                           [](int64_t n, int64_t m) {
                                             return std::vector<Shape>{{n, m}};
                                           }),
                                     dtype == DType::kFloat32 ? 1e-4 : -1);
    EXPECT_THAT(Describe(exe), HasSubstr(" 0 eager nodes, 2 size symbols"));
  }
}

// native_layer_norm over the symbolic last dim, with weight and bias.
TEST(DynamicConformanceTest, LayerNormRows) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("layer_norm");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    ASSERT_TRUE(b.AddPlaceholder("w").ok());
    ASSERT_TRUE(b.AddPlaceholder("bias").ok());
    AddNode(b, "ln", "aten.native_layer_norm.default",
            {Arg::Ref("x"), Ints({7}), Arg::Ref("w"), Arg::Ref("bias"),
             Arg::Float(1e-5)});
    AddNode(b, "y", "getitem", {Arg::Ref("ln"), Arg::Int(0)});
    AddNode(b, "mean", "getitem", {Arg::Ref("ln"), Arg::Int(1)});
    AddNode(b, "rstd", "getitem", {Arg::Ref("ln"), Arg::Int(2)});
    ASSERT_TRUE(
        b.SetOutputs({Arg::Ref("y"), Arg::Ref("mean"), Arg::Ref("rstd")}).ok());
    // Rows of symbolic count, normalized over a static width (the op's
    // normalized_shape is a literal; DecomposedLayerNormOverSymbolicRows
    // normalizes over a symbolic width).
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 5;
    for (int64_t n : {3, 2, 9, 64, 301}) {
      calls.push_back({RandomTensor(dtype, {n, 7}, seed++),
                       RandomTensor(dtype, {7}, seed++),
                       RandomTensor(dtype, {7}, seed++)});
    }
    auto exe = ExpectDynamicJitMatchesEager(
        Finish(b), {{0, 0}}, calls, dtype == DType::kFloat32 ? 1e-4 : -1);
    EXPECT_THAT(Describe(exe), HasSubstr("1 fused kernels, 0 eager nodes"));
  }
}

// Layer norm written out over a symbolic row length: mean and variance of
// each row, then the affine normalization, as decomposed graphs spell it.
TEST(DynamicConformanceTest, DecomposedLayerNormOverSymbolicRows) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("ln_decomposed");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    ASSERT_TRUE(b.AddPlaceholder("w").ok());
    AddNode(b, "mu", "aten.mean.dim",
            {Arg::Ref("x"), Ints({-1}), Arg::Bool(true)});
    AddNode(b, "d", "aten.sub.Tensor", {Arg::Ref("x"), Arg::Ref("mu")});
    AddNode(b, "var", "aten.var.correction", {Arg::Ref("x"), Ints({-1})},
            {{"correction", Arg::Int(0)}, {"keepdim", Arg::Bool(true)}});
    AddNode(b, "ve", "aten.add.Scalar", {Arg::Ref("var"), Arg::Float(1e-5)});
    AddNode(b, "r", "aten.rsqrt.default", {Arg::Ref("ve")});
    AddNode(b, "n", "aten.mul.Tensor", {Arg::Ref("d"), Arg::Ref("r")});
    AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("n"), Arg::Ref("w")});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
    auto exe = ExpectDynamicJitMatchesEager(
        Finish(b), {{0, 0}, {0, 1}, {1, 0}},
        Calls(dtype,
              [](int64_t n, int64_t m) {
                return std::vector<Shape>{{n, m}, {m}};
              }),
        dtype == DType::kFloat32 ? 1e-4 : -1);
    EXPECT_THAT(Describe(exe), HasSubstr(" 0 eager nodes, 2 size symbols"));
  }
}

// Views of inputs with symbolic sizes and of computed values, feeding
// pointwise ops: permute, slice (from 1, and from -2), select, view
// (flatten) of an input and of a computed value, expand of a size-1 dim.
TEST(DynamicConformanceTest, ViewsFeedingPointwise) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("views");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    ASSERT_TRUE(b.AddPlaceholder("col").ok());
    AddNode(b, "t", "aten.permute.default", {Arg::Ref("x"), Ints({1, 0})});
    AddNode(
        b, "sl", "aten.slice.Tensor",
        {Arg::Ref("t"), Arg::Int(0), Arg::Int(1), Arg::None(), Arg::Int(1)});
    AddNode(b, "o1", "aten.mul.Scalar", {Arg::Ref("sl"), Arg::Int(2)});
    AddNode(
        b, "tail", "aten.slice.Tensor",
        {Arg::Ref("x"), Arg::Int(1), Arg::Int(-2), Arg::None(), Arg::Int(1)});
    AddNode(b, "o2", "aten.add.Scalar", {Arg::Ref("tail"), Arg::Int(1)});
    AddNode(b, "last", "aten.select.int",
            {Arg::Ref("x"), Arg::Int(1), Arg::Int(-1)});
    AddNode(b, "o3", "aten.neg.default", {Arg::Ref("last")});
    AddNode(b, "flat", "aten.view.default", {Arg::Ref("x"), Ints({-1})});
    AddNode(b, "o4", "aten.mul.Tensor", {Arg::Ref("flat"), Arg::Ref("flat")});
    AddNode(b, "sq", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("x")});
    AddNode(b, "sqv", "aten.view.default", {Arg::Ref("sq"), Ints({-1})});
    AddNode(b, "o5", "aten.add.Scalar", {Arg::Ref("sqv"), Arg::Int(1)});
    AddNode(b, "sqt", "aten.permute.default", {Arg::Ref("sq"), Ints({1, 0})});
    AddNode(b, "o7", "aten.sub.Scalar", {Arg::Ref("sqt"), Arg::Int(2)});
    AddNode(b, "ex", "aten.expand.default", {Arg::Ref("col"), Ints({-1, 4})});
    AddNode(b, "o6", "aten.sub.Scalar", {Arg::Ref("ex"), Arg::Int(1)});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("o1"), Arg::Ref("o2"), Arg::Ref("o3"),
                              Arg::Ref("o4"), Arg::Ref("o5"), Arg::Ref("o6"),
                              Arg::Ref("o7")})
                    .ok());
    auto graph = Finish(b);
    auto exe = ExpectDynamicJitMatchesEager(
        graph, {{0, 0}, {0, 1}, {1, 0}},
        // The slices' sizes s1 - 1 and s1 - 2 broadcast, which guards them
        // != 1: rows of 2 are another entry.
        Calls(
            dtype,
            [](int64_t n, int64_t m) {
              return std::vector<Shape>{{n, m}, {n, 1}};
            },
            /*min_size=*/3));
    EXPECT_THAT(Describe(exe), HasSubstr(" 0 eager nodes, 2 size symbols"));
  }
}

// An extern (mm) inside a fused program: its output sizes are evaluated per
// call, kernels before and after it take the symbols.
TEST(DynamicConformanceTest, MatmulExternBetweenKernels) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("mlp");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    ASSERT_TRUE(b.AddPlaceholder("w").ok());
    ASSERT_TRUE(b.AddPlaceholder("bias").ok());
    AddNode(b, "xs", "aten.tanh.default", {Arg::Ref("x")});
    AddNode(b, "h", "aten.mm.default", {Arg::Ref("xs"), Arg::Ref("w")});
    AddNode(b, "hb", "aten.add.Tensor", {Arg::Ref("h"), Arg::Ref("bias")});
    AddNode(b, "r", "aten.relu.default", {Arg::Ref("hb")});
    AddNode(b, "s", "aten._softmax.default",
            {Arg::Ref("r"), Arg::Int(1), Arg::Bool(false)});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("s"), Arg::Ref("h")}).ok());
    // x [n, k] @ w [k, 5]: n and k symbolic (k shared by x and w).
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 11;
    for (const auto& [n, k] : kSizes) {
      if (n == 1 || k == 1) continue;
      calls.push_back({RandomTensor(dtype, {n, k}, seed++),
                       RandomTensor(dtype, {k, 5}, seed++),
                       RandomTensor(dtype, {5}, seed++)});
    }
    auto exe =
        ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}, {0, 1}, {1, 0}}, calls,
                                     dtype == DType::kFloat32 ? 1e-4 : 1e-10);
    // A device runs the product on cuBLASLt, stored by a kernel of its own;
    // on the host BLAS writes the output's destination in place; the SIMT
    // emulator's kernels leave it to the eager kernel.
    const bool device = absl::StartsWith(SharedJitBackend(), "cuda:");
    const bool host = *SharedJitBackend() == '\0';
    EXPECT_THAT(
        Describe(exe),
        ::testing::StartsWith(
            device || host
                ? "jit: 3 fused kernels, 0 eager nodes, 2 size symbols"
                : "jit: 2 fused kernels, 1 eager nodes, 2 size symbols"));
    if (host) {
      EXPECT_THAT(Describe(exe),
                  ::testing::HasSubstr(
                      "'h' (aten.mm.default) on BLAS writing its result"));
    }
    if (!device) {
      EXPECT_THAT(Describe(exe),
                  ::testing::Not(::testing::HasSubstr("outputs copied: 1")));
    }
  }
}

// A dynamic entry made by a transposed call is planned for transposed
// strides over its symbols, at compile time: later sizes compile nothing
// and run the compiled program (ExpectNoUnplannedCalls).
TEST(DynamicConformanceTest, TransposedInputsArePlannedOnceOverSymbols) {
  GraphBuilder b("transposed");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "e", "aten.exp.default", {Arg::Ref("x")});
  AddNode(b, "s", "aten.sum.dim_IntList",
          {Arg::Ref("e"), Ints({1}), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  auto graph = Finish(b);
  std::vector<std::vector<Tensor>> calls;
  uint64_t seed = 21;
  for (const auto& [n, m] : kSizes) {
    if (n == 1 || m == 1) continue;
    // Memory laid out as [m, n], viewed as [n, m].
    const Tensor memory = RandomTensor(DType::kFloat32, {m, n}, seed++);
    calls.push_back({memory.AsStrided({n, m}, {1, n})});
  }
  auto exe = ExpectDynamicJitMatchesEager(
      graph, {{0, 0}, {0, 1}}, {calls.begin(), calls.begin() + 2}, 1e-4);
  ASSERT_NE(exe, nullptr);
  const int compiled = SharedJit().kernels().compiled();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok());
  for (const auto& call : calls) {
    auto actual = testing::RunOnSharedJit(*exe, call);
    ASSERT_TRUE(actual.ok()) << actual.status();
    auto expected = (*eager)->Run(call);
    ASSERT_TRUE(expected.ok());
    testing::ExpectTensor((*actual)[0], DType::kFloat32, (*expected)[0].sizes(),
                          testing::ToDoubles((*expected)[0]), 1e-4, 1e-4);
  }
  EXPECT_EQ(SharedJit().kernels().compiled(), compiled);
  testing::ExpectNoUnplannedCalls(*exe);
}

// GJ_LOGS=codegen shows the dynamic kernels over their size parameters.
TEST(DynamicConformanceTest, CodegenLogShowsSizeParameters) {
  std::string log;
  SetLogTopics("codegen");
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    if (topic == LogTopic::kCodegen) log += std::string(message);
  });
  GraphBuilder b("logged");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "s", "aten._softmax.default",
          {Arg::Ref("x"), Arg::Int(1), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  auto exe = ExpectDynamicJitMatchesEager(
      Finish(b), {{0, 0}, {0, 1}},
      Calls(DType::kFloat32, [](int64_t n, int64_t m) {
        return std::vector<Shape>{{n, m}};
      }));
  SetLogSink(nullptr);
  SetLogTopics("");
  EXPECT_THAT(log, HasSubstr("s0: int64, s1: int64"));
  EXPECT_THAT(log, HasSubstr("for i0 < s0"));
  EXPECT_THAT(log, HasSubstr("i1 < s1"));
}

// Reshapes over a symbolic batch divide by no symbol: a reshape of
// contiguous memory stays memory, and a reshape of a computed value maps its
// outermost dim without a modulo.
TEST(DynamicConformanceTest, ReshapesOverASymbolicBatchDivideByNoSymbol) {
  GraphBuilder b("reshapes");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "m", "aten.view.default", {Arg::Ref("x"), Ints({-1, 4})});
  AddNode(b, "e", "aten.exp.default", {Arg::Ref("m")});
  AddNode(b, "v", "aten.view.default", {Arg::Ref("e"), Ints({-1, 8, 4})});
  AddNode(b, "s", "aten.add.Tensor", {Arg::Ref("v"), Arg::Ref("x")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  auto graph = Finish(b);
  const auto calls = Calls(DType::kFloat32, [](int64_t n, int64_t) {
    return std::vector<Shape>{{n, 8, 4}};
  });
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(graph, calls[0], {{0, 0}});
  ASSERT_NE(entry.graph, nullptr);
  auto plan = SharedJit().PlanFor(*entry.graph, entry.spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->ToString(), ::testing::Not(HasSubstr("% s0")));
  EXPECT_THAT(plan->ToString(), ::testing::Not(HasSubstr("// s0")));
  auto exe = ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls);
  EXPECT_EQ(Describe(exe),
            "jit: 1 fused kernels, 0 eager nodes, 1 size symbols");
}

// What the JIT leaves to eager kernels inside a dynamic program (integer
// division) runs there at each call's sizes. Still matches eager.
TEST(DynamicConformanceTest, EagerStepsRunAtEachCallsSizes) {
  GraphBuilder b("int_div");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "a", "aten.add.Scalar", {Arg::Ref("x"), Arg::Int(7)});
  AddNode(b, "d", "aten.div.Tensor_mode", {Arg::Ref("a"), Arg::Int(3)},
          {{"rounding_mode", Arg::String("floor")}});
  AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("d"), Arg::Ref("x")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("m")}).ok());
  auto exe = ExpectDynamicJitMatchesEager(
      Finish(b), {{0, 0}, {0, 1}},
      Calls(DType::kInt32, [](int64_t n, int64_t m) {
        return std::vector<Shape>{{n, m}};
      }));
  EXPECT_EQ(Describe(exe),
            "jit: 2 fused kernels, 1 eager nodes, 2 size symbols");
}

// Nodes computing sizes (what torch.export emits for x.view(b, t, ...) with
// a dynamic b) are lowered from their values' expressions over the symbols:
// view sizes, integer arithmetic, and a size read as a tensor operand.
TEST(DynamicConformanceTest, SizeNodesCompileFromTheirExpressions) {
  GraphBuilder b("sized");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)});
  AddNode(b, "m", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(1)});
  AddNode(b, "nm", "operator.mul", {Arg::Ref("n"), Arg::Ref("m")});
  AddNode(b, "v", "aten.view.default",
          {Arg::Ref("x"), Arg::OfList({Arg::Ref("nm")})});
  AddNode(b, "e", "aten.exp.default", {Arg::Ref("v")});
  AddNode(b, "w", "aten.view.default",
          {Arg::Ref("e"), Arg::OfList({Arg::Ref("m"), Arg::Ref("n")})});
  AddNode(b, "s", "aten.mul.Tensor", {Arg::Ref("w"), Arg::Ref("n")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  auto exe = ExpectDynamicJitMatchesEager(
      Finish(b), {{0, 0}, {0, 1}},
      Calls(DType::kFloat32, [](int64_t n, int64_t m) {
        return std::vector<Shape>{{n, m}};
      }));
  EXPECT_EQ(Describe(exe),
            "jit: 1 fused kernels, 0 eager nodes, 2 size symbols");
}

// A lowering that would read a symbolic size as a literal (hardtanh's
// bound) leaves that node to its eager kernel, which reads the size per
// call; the rest of the graph is compiled around it.
TEST(DynamicConformanceTest, SymbolicLiteralArgumentsStayEager) {
  GraphBuilder b("clamped_to_n");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)});
  AddNode(b, "y", "aten.mul.Scalar", {Arg::Ref("x"), Arg::Float(3)});
  AddNode(b, "h", "aten.hardtanh.default",
          {Arg::Ref("y"), Arg::Float(-1), Arg::Ref("n")});
  AddNode(b, "s", "aten.add.Tensor", {Arg::Ref("h"), Arg::Ref("x")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  auto exe = ExpectDynamicJitMatchesEager(
      Finish(b), {{0, 0}, {0, 1}},
      Calls(DType::kFloat32, [](int64_t n, int64_t m) {
        return std::vector<Shape>{{n, m}};
      }));
  EXPECT_THAT(Describe(exe), HasSubstr(", 1 eager nodes, 2 size symbols"));
}

}  // namespace
}  // namespace guardjit
