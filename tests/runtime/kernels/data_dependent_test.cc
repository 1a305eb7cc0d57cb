// Tests of the ops whose output sizes depend on input values: nonzero,
// masked_select, _unique2, unique_consecutive and _local_scalar_dense (their
// kernels size their own results; their shape rules are a graph break).

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectError;
using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::kAllDTypes;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The three outputs of a unique op.
std::vector<Tensor> RunUnique(const std::string& target,
                              std::vector<testing::OpArg> args) {
  auto out = RunOp(target, std::move(args));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ(out->size(), 3u);
  return *out;
}

TEST(DataDependentTest, OpsAreMarkedAndTheirShapeRulesAreAGraphBreak) {
  for (const char* target :
       {"aten.nonzero.default", "aten.masked_select.default",
        "aten._unique2.default", "aten.unique_consecutive.default",
        "aten._local_scalar_dense.default"}) {
    const OpDef* def = OpRegistry::Global().Find(target);
    ASSERT_NE(def, nullptr) << target;
    EXPECT_TRUE(def->data_dependent_output) << target;
  }
  EXPECT_FALSE(
      OpRegistry::Global().Find("aten.add.Tensor")->data_dependent_output);
  EXPECT_EQ(
      OpRegistry::Global().Find("aten._unique2.default")->schema.num_returns,
      3);
}

TEST(DataDependentTest, InferShapesStopsAtNonzeroNamingTheNode) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("nz")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const TensorMeta x{DType::kFloat32, std::vector<int64_t>{2, 3}};
  auto metas = InferShapes(**graph, {x});
  ExpectError(metas, absl::StatusCode::kUnimplemented,
              "node 'nz' (aten.nonzero.default): its output size depends on "
              "input values (a graph break)");
}

// A graph whose inputs carry metadata is shape-checked when built; the check
// ends at a graph break instead of failing there, but a bad node before it is
// still an error.
TEST(DataDependentTest, GraphBuilderChecksShapesUpToTheGraphBreak) {
  const TensorMeta x{DType::kFloat32, std::vector<int64_t>{2, 3}};
  const TensorMeta y{DType::kFloat32, std::vector<int64_t>{4}};
  auto build = [&](const TensorMeta& second) {
    GraphBuilder b("g");
    EXPECT_TRUE(b.AddPlaceholder("x", x).ok());
    EXPECT_TRUE(b.AddPlaceholder("y", second).ok());
    EXPECT_TRUE(
        b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")}).ok());
    EXPECT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("s")}).ok());
    EXPECT_TRUE(
        b.AddNode("bad", "aten.add.Tensor", {Arg::Ref("nz"), Arg::Ref("y")})
            .ok());
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("bad")}).ok());
    return b.Finish();
  };
  EXPECT_TRUE(build(y).ok());

  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("x", x).ok());
  ASSERT_TRUE(b.AddPlaceholder("y", y).ok());
  ASSERT_TRUE(
      b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  ASSERT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("s")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("nz")}).ok());
  ExpectError(b.Finish(), absl::StatusCode::kInvalidArgument,
              "node 's' (aten.add.Tensor)");
}

TEST(DataDependentTest, NonzeroGivesRowMajorIndicesForEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2, 3}, {0, 1, 0, 1, 0, 1});
    ExpectTensor(RunOp1("aten.nonzero.default", {x}), DType::kInt64, {3, 2},
                 {0, 1, 1, 0, 1, 2});
    Tensor v = MakeTensor(dtype, {4}, {1, 0, 0, 1});
    ExpectTensor(RunOp1("aten.nonzero.default", {v}), DType::kInt64, {2, 1},
                 {0, 3});
  }
  // NaN is nonzero, -0.0 is zero.
  Tensor f = MakeTensor(DType::kFloat32, {4}, {kNan, -0.0, 0.0, -2.5});
  ExpectTensor(RunOp1("aten.nonzero.default", {f}), DType::kInt64, {2, 1},
               {0, 3});
  Tensor cube = MakeTensor(DType::kInt32, {2, 2, 2}, {0, 0, 0, 7, 0, 0, 9, 0});
  ExpectTensor(RunOp1("aten.nonzero.default", {cube}), DType::kInt64, {2, 3},
               {0, 1, 1, 1, 1, 0});
}

TEST(DataDependentTest, NonzeroOfStridedInputs) {
  Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {0, 5, 0, 6, 0, 7});
  // The same values stored transposed, padded and at an offset.
  ExpectTensor(RunOp1("aten.nonzero.default", {NonContiguousCopy(x)}),
               DType::kInt64, {3, 2}, {0, 1, 1, 0, 1, 2});
  // A transposed view [3, 2]: {0, 6}, {5, 0}, {0, 7}.
  Tensor t = x.AsStrided({3, 2}, {1, 3});
  ExpectTensor(RunOp1("aten.nonzero.default", {t}), DType::kInt64, {3, 2},
               {0, 1, 1, 0, 2, 1});
  Tensor every_other = x.AsStrided({3}, {2}, 1);  // {5, 6, 7}
  ExpectTensor(RunOp1("aten.nonzero.default", {every_other}), DType::kInt64,
               {3, 1}, {0, 1, 2});
  Tensor broadcast = x.AsStrided({3, 2}, {0, 1}, 1);  // rows {5, 0}
  ExpectTensor(RunOp1("aten.nonzero.default", {broadcast}), DType::kInt64,
               {3, 2}, {0, 0, 1, 0, 2, 0});
}

TEST(DataDependentTest, NonzeroOfEmptyAllZeroAndZeroDimInputs) {
  ExpectTensor(
      RunOp1("aten.nonzero.default",
             {MakeTensor(DType::kFloat32, {2, 3}, {0, 0, 0, 0, 0, 0})}),
      DType::kInt64, {0, 2}, {});
  ExpectTensor(RunOp1("aten.nonzero.default",
                      {*Tensor::Empty(DType::kInt64, {0, 3, 1})}),
               DType::kInt64, {0, 3}, {});
  ExpectTensor(
      RunOp1("aten.nonzero.default", {MakeTensor(DType::kFloat32, {}, {5})}),
      DType::kInt64, {1, 0}, {});
  ExpectTensor(
      RunOp1("aten.nonzero.default", {MakeTensor(DType::kBool, {}, {0})}),
      DType::kInt64, {0, 0}, {});
}

TEST(DataDependentTest, MaskedSelectForEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2, 3}, {1, 0, 1, 1, 1, 0});
    Tensor mask = MakeTensor(DType::kBool, {2, 3}, {1, 1, 0, 0, 1, 1});
    ExpectTensor(RunOp1("aten.masked_select.default", {x, mask}), dtype, {4},
                 {1, 0, 1, 0});
  }
  Tensor x = MakeTensor(DType::kFloat64, {2, 3}, {1.5, 2, 3, 4, 5, kNan});
  Tensor mask = MakeTensor(DType::kBool, {2, 3}, {0, 1, 0, 1, 0, 1});
  ExpectTensor(RunOp1("aten.masked_select.default", {x, mask}), DType::kFloat64,
               {3}, {2, 4, kNan});
}

TEST(DataDependentTest, MaskedSelectBroadcasts) {
  Tensor x = MakeTensor(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // A mask over the columns selects in every row.
  Tensor cols = MakeTensor(DType::kBool, {3}, {1, 0, 1});
  ExpectTensor(RunOp1("aten.masked_select.default", {x, cols}), DType::kInt32,
               {4}, {1, 3, 4, 6});
  // self broadcasts to the mask's shape: its elements repeat.
  Tensor row = MakeTensor(DType::kInt32, {3}, {7, 8, 9});
  Tensor mask = MakeTensor(DType::kBool, {2, 3}, {1, 1, 0, 0, 1, 1});
  ExpectTensor(RunOp1("aten.masked_select.default", {row, mask}), DType::kInt32,
               {4}, {7, 8, 8, 9});
  // Both broadcast: [2, 1] and [1, 3] to [2, 3].
  Tensor column = MakeTensor(DType::kFloat32, {2, 1}, {10, 20});
  Tensor m13 = MakeTensor(DType::kBool, {1, 3}, {0, 1, 1});
  ExpectTensor(RunOp1("aten.masked_select.default", {column, m13}),
               DType::kFloat32, {4}, {10, 10, 20, 20});
  // A 0-dim self and a 0-dim mask.
  ExpectTensor(RunOp1("aten.masked_select.default",
                      {MakeTensor(DType::kFloat32, {}, {3}),
                       MakeTensor(DType::kBool, {}, {1})}),
               DType::kFloat32, {1}, {3});
  ExpectTensor(RunOp1("aten.masked_select.default",
                      {x, MakeTensor(DType::kBool, {}, {0})}),
               DType::kInt32, {0}, {});
}

TEST(DataDependentTest, MaskedSelectOfStridedAndEmptyInputs) {
  Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor mask = MakeTensor(DType::kBool, {2, 3}, {1, 0, 0, 1, 1, 0});
  ExpectTensor(RunOp1("aten.masked_select.default",
                      {NonContiguousCopy(x), NonContiguousCopy(mask)}),
               DType::kFloat32, {3}, {1, 4, 5});
  // Transposed self [3, 2] = {1, 4}, {2, 5}, {3, 6} under a [3, 2] mask.
  Tensor t = x.AsStrided({3, 2}, {1, 3});
  Tensor m32 = MakeTensor(DType::kBool, {3, 2}, {0, 1, 1, 0, 1, 1});
  ExpectTensor(RunOp1("aten.masked_select.default", {t, m32}), DType::kFloat32,
               {4}, {4, 2, 3, 6});
  // An offset mask view {0, 1, 1} of the flat mask.
  Tensor flat = MakeTensor(DType::kBool, {5}, {1, 0, 1, 1, 0});
  ExpectTensor(
      RunOp1("aten.masked_select.default", {x, flat.AsStrided({3}, {1}, 1)}),
      DType::kFloat32, {4}, {2, 3, 5, 6});
  ExpectTensor(RunOp1("aten.masked_select.default",
                      {*Tensor::Empty(DType::kInt64, {0, 3}),
                       MakeTensor(DType::kBool, {3}, {1, 1, 1})}),
               DType::kInt64, {0}, {});
}

TEST(DataDependentTest, MaskedSelectBadMaskNamesTheArgument) {
  Tensor x = MakeTensor(DType::kFloat32, {3}, {1, 2, 3});
  auto float_mask = RunOp("aten.masked_select.default",
                          {x, MakeTensor(DType::kFloat32, {3}, {1, 0, 1})});
  ExpectError(float_mask, absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.masked_select.default): argument 'mask': "
              "expected a bool tensor, got float32[3]");
  auto uint8_mask = RunOp("aten.masked_select.default",
                          {x, MakeTensor(DType::kUInt8, {3}, {1, 0, 1})});
  ExpectError(uint8_mask, absl::StatusCode::kInvalidArgument,
              "argument 'mask': expected a bool tensor, got uint8[3]");
  auto shapes = RunOp("aten.masked_select.default",
                      {x, MakeTensor(DType::kBool, {2}, {1, 0})});
  ExpectError(shapes, absl::StatusCode::kInvalidArgument,
              "argument 'mask': shapes [3] and [2] are not broadcastable");
}

TEST(DataDependentTest, Unique2SortsCountsAndInvertsForEveryDType) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {5}, {3, 1, 2, 3, 1});
    auto out = RunUnique("aten._unique2.default", {x, true, true, true});
    ASSERT_EQ(out.size(), 3u);
    ExpectTensor(out[0], dtype, {3}, {1, 2, 3});
    ExpectTensor(out[1], DType::kInt64, {5}, {2, 0, 1, 2, 0});
    ExpectTensor(out[2], DType::kInt64, {3}, {2, 1, 2});
  }
  Tensor b = MakeTensor(DType::kBool, {2, 2}, {1, 0, 1, 1});
  auto out = RunUnique("aten._unique2.default", {b, true, true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kBool, {2}, {0, 1});
  ExpectTensor(out[1], DType::kInt64, {2, 2}, {1, 0, 1, 1});
  ExpectTensor(out[2], DType::kInt64, {2}, {1, 3});
  // Signed values sort below zero; sorted=False sorts too (PyTorch's CPU
  // kernel always does).
  Tensor s = MakeTensor(DType::kInt8, {4}, {5, -3, 0, -3});
  out = RunUnique("aten._unique2.default", {s, false, false, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt8, {3}, {-3, 0, 5});
  ExpectTensor(out[2], DType::kInt64, {3}, {2, 1, 1});
}

TEST(DataDependentTest, Unique2OutputsNotAskedForAreEmpty) {
  Tensor x = MakeTensor(DType::kInt64, {2, 2}, {4, 4, 2, 4});
  auto out = RunUnique("aten._unique2.default", {x});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt64, {2}, {2, 4});
  ExpectTensor(out[1], DType::kInt64, {0}, {});
  ExpectTensor(out[2], DType::kInt64, {0}, {});
  out = RunUnique("aten._unique2.default", {x, true, true, false});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[1], DType::kInt64, {2, 2}, {1, 1, 0, 1});
  ExpectTensor(out[2], DType::kInt64, {0}, {});
}

TEST(DataDependentTest, Unique2KeepsEachNanAndMergesSignedZeros) {
  Tensor x = MakeTensor(DType::kFloat32, {6}, {kNan, 1, -0.0, kNan, 1, 0.0});
  auto out = RunUnique("aten._unique2.default", {x, true, true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kFloat32, {4}, {0, 1, kNan, kNan});
  ExpectTensor(out[1], DType::kInt64, {6}, {2, 1, 0, 3, 1, 0});
  ExpectTensor(out[2], DType::kInt64, {4}, {2, 2, 1, 1});
}

TEST(DataDependentTest, Unique2OfStridedEmptyAndZeroDimInputs) {
  Tensor x = MakeTensor(DType::kFloat64, {2, 3}, {5, 1, 5, 2, 1, 9});
  auto out = RunUnique("aten._unique2.default",
                       {NonContiguousCopy(x), true, true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kFloat64, {4}, {1, 2, 5, 9});
  ExpectTensor(out[1], DType::kInt64, {2, 3}, {2, 0, 2, 1, 0, 3});
  ExpectTensor(out[2], DType::kInt64, {4}, {2, 1, 2, 1});
  // Transposed [3, 2]: {5, 2}, {1, 1}, {5, 9}; the inverse has its shape.
  out = RunUnique("aten._unique2.default",
                  {x.AsStrided({3, 2}, {1, 3}), true, true, false});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[1], DType::kInt64, {3, 2}, {2, 1, 0, 0, 2, 3});

  Tensor empty = *Tensor::Empty(DType::kInt32, {0, 3});
  out = RunUnique("aten._unique2.default", {empty, true, true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt32, {0}, {});
  ExpectTensor(out[1], DType::kInt64, {0, 3}, {});
  ExpectTensor(out[2], DType::kInt64, {0}, {});

  Tensor scalar = MakeTensor(DType::kFloat16, {}, {2.5});
  out = RunUnique("aten._unique2.default", {scalar, true, true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kFloat16, {1}, {2.5});
  ExpectTensor(out[1], DType::kInt64, {}, {0});
  ExpectTensor(out[2], DType::kInt64, {1}, {1});
}

TEST(DataDependentTest, UniqueConsecutiveCollapsesRuns) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {7}, {1, 1, 0, 0, 1, 0, 0});
    auto out = RunUnique("aten.unique_consecutive.default", {x, true, true});
    ASSERT_EQ(out.size(), 3u);
    ExpectTensor(out[0], dtype, {4}, {1, 0, 1, 0});
    ExpectTensor(out[1], DType::kInt64, {7}, {0, 0, 1, 1, 2, 3, 3});
    ExpectTensor(out[2], DType::kInt64, {4}, {2, 2, 1, 2});
  }
  // Flattened in row-major order whatever the strides; NaNs never merge.
  Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {2, 2, kNan, kNan, 3, 3});
  auto out = RunUnique("aten.unique_consecutive.default",
                       {NonContiguousCopy(x), true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kFloat32, {4}, {2, kNan, kNan, 3});
  ExpectTensor(out[1], DType::kInt64, {2, 3}, {0, 0, 1, 2, 3, 3});
  ExpectTensor(out[2], DType::kInt64, {4}, {2, 1, 1, 2});
  out = RunUnique("aten.unique_consecutive.default", {x});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[1], DType::kInt64, {0}, {});
  ExpectTensor(out[2], DType::kInt64, {0}, {});
  // Empty: the inverse still has self's shape when asked for.
  out = RunUnique("aten.unique_consecutive.default",
                  {*Tensor::Empty(DType::kInt64, {2, 0}), true, true});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt64, {0}, {});
  ExpectTensor(out[1], DType::kInt64, {2, 0}, {});
  ExpectTensor(out[2], DType::kInt64, {0}, {});
}

TEST(DataDependentTest, UniqueConsecutiveAlongADim) {
  // Rows {1, 1}, {1, 1}, {2, 3}, {1, 1}.
  Tensor x = MakeTensor(DType::kInt32, {4, 2}, {1, 1, 1, 1, 2, 3, 1, 1});
  auto out = RunUnique("aten.unique_consecutive.default",
                       {x, false, false, int64_t{0}});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt32, {3, 2}, {1, 1, 2, 3, 1, 1});
  // Along a dim the inverse and counts come whatever the flags say.
  ExpectTensor(out[1], DType::kInt64, {4}, {0, 0, 1, 2});
  ExpectTensor(out[2], DType::kInt64, {3}, {2, 1, 1});
  // The transposed view [2, 4] has columns {1, 1}, {1, 1}, {2, 3}, {1, 1}.
  out = RunUnique("aten.unique_consecutive.default",
                  {x.AsStrided({2, 4}, {1, 2}), true, true, int64_t{-1}});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt32, {2, 3}, {1, 2, 1, 1, 3, 1});
  ExpectTensor(out[1], DType::kInt64, {4}, {0, 0, 1, 2});
  ExpectTensor(out[2], DType::kInt64, {3}, {2, 1, 1});
  // dim 0 of a 1-D tensor is the flat case.
  Tensor v = MakeTensor(DType::kFloat32, {3}, {4, 4, 5});
  out = RunUnique("aten.unique_consecutive.default",
                  {v, false, false, int64_t{0}});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kFloat32, {2}, {4, 5});
  ExpectTensor(out[1], DType::kInt64, {0}, {});
  ExpectTensor(out[2], DType::kInt64, {0}, {});
  // An empty dim gives self's shape back.
  out = RunUnique(
      "aten.unique_consecutive.default",
      {*Tensor::Empty(DType::kInt64, {0, 3}), true, true, int64_t{0}});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensor(out[0], DType::kInt64, {0, 3}, {});
  ExpectTensor(out[1], DType::kInt64, {0}, {});
  ExpectError(
      RunOp("aten.unique_consecutive.default", {x, false, false, int64_t{2}}),
      absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(
      RunOp("aten.unique_consecutive.default",
            {*Tensor::Empty(DType::kInt64, {0, 3}), false, false, int64_t{1}}),
      absl::StatusCode::kInvalidArgument, "argument 'self'");
}

TEST(DataDependentTest, LocalScalarDenseReadsTheOneElement) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const double value = dtype == DType::kBool    ? 1
                         : dtype == DType::kUInt8 ? 200
                                                  : -3;
    for (const Tensor& x :
         {MakeTensor(dtype, {}, {value}), MakeTensor(dtype, {1, 1}, {value}),
          NonContiguousCopy(MakeTensor(dtype, {1}, {value}))}) {
      Tensor item = RunOp1("aten._local_scalar_dense.default", {x});
      ExpectTensor(item, dtype, {}, {value});
      EXPECT_TRUE(item.is_wrapped_number());
    }
  }
  Tensor x = MakeTensor(DType::kFloat32, {3}, {1.5, 2.25, 3});
  ExpectTensor(
      RunOp1("aten._local_scalar_dense.default", {x.AsStrided({}, {}, 1)}),
      DType::kFloat32, {}, {2.25});
}

TEST(DataDependentTest, LocalScalarDenseNeedsExactlyOneElement) {
  ExpectError(RunOp("aten._local_scalar_dense.default",
                    {MakeTensor(DType::kFloat32, {3}, {1, 2, 3})}),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten._local_scalar_dense.default): argument 'self': "
              "a Tensor with 3 elements cannot be converted to Scalar");
  ExpectError(RunOp("aten._local_scalar_dense.default",
                    {*Tensor::Empty(DType::kInt64, {0})}),
              absl::StatusCode::kInvalidArgument,
              "a Tensor with 0 elements cannot be converted to Scalar");
}

}  // namespace
}  // namespace guardjit
