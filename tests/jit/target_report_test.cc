// The JIT's report for people (jit/target_report.h) on the CPU target: the
// plan and its LLVM IR, the emulated run checked against eager, and the
// refusals of bad targets and input metadata, naming what is wrong.

#include "jit/target_report.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/tensor_meta.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;

// relu(x + y) in graph 'addrelu'.
std::shared_ptr<const Graph> AddRelu() {
  GraphBuilder b("addrelu");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(
      b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("s")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return std::shared_ptr<const Graph>(std::move(*g));
}

const std::vector<TensorMeta> kInputs = {
    TensorMeta(DType::kFloat32, Shape{4, 8}),
    TensorMeta(DType::kFloat32, Shape{4, 8})};

TEST(EmulationToleranceTest, PerDType) {
  EXPECT_EQ(EmulationTolerance(DType::kFloat32), 2e-5);
  EXPECT_EQ(EmulationTolerance(DType::kFloat64), 1e-11);
  EXPECT_EQ(EmulationTolerance(DType::kFloat16), 2e-3);
  EXPECT_EQ(EmulationTolerance(DType::kBFloat16), 1.6e-2);
  EXPECT_EQ(EmulationTolerance(DType::kInt32), 0);
  EXPECT_EQ(EmulationTolerance(DType::kBool), 0);
}

TEST(MakeTargetReportTest, CpuReportNamesTheGraphAndShowsItsIr) {
  absl::StatusOr<TargetReport> r = MakeTargetReport(AddRelu(), kInputs, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->text.rfind("graph 'addrelu' for cpu (x: float32[4, 8], y: "
                          "float32[4, 8])\n",
                          0),
            0u)
      << r->text;
  EXPECT_NE(r->text.find("define"), std::string::npos) << r->text;
  EXPECT_FALSE(r->emulated);
}

TEST(MakeTargetReportTest, EmulatedCpuRunMatchesEager) {
  TargetReportOptions options;
  options.emulate = true;
  options.seed = 7;
  absl::StatusOr<TargetReport> r =
      MakeTargetReport(AddRelu(), kInputs, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->emulated);
  EXPECT_TRUE(r->run_status.ok()) << r->run_status;
  EXPECT_TRUE(r->within_tolerance);
  EXPECT_LE(r->max_abs_error, EmulationTolerance(DType::kFloat32));
}

TEST(MakeTargetReportTest, UnknownTargetIsQuoted) {
  TargetReportOptions options;
  options.target = "tpu:v5";
  ExpectError(MakeTargetReport(AddRelu(), kInputs, options),
              absl::StatusCode::kInvalidArgument,
              "unknown target 'tpu:v5': expected 'cpu' or a CUDA target");
}

TEST(MakeTargetReportTest, InputMetadataMustMatchTheGraph) {
  ExpectError(MakeTargetReport(AddRelu(), {kInputs[0]}, {}),
              absl::StatusCode::kInvalidArgument,
              "graph 'addrelu' has 2 inputs, got metadata for 1");
  ExpectError(MakeTargetReport(
                  AddRelu(),
                  {kInputs[0], TensorMeta(DType::kFloat32, Shape{4, -1})}, {}),
              absl::StatusCode::kInvalidArgument,
              "input 1 ('y'): sizes must be concrete and non-negative");
  // Shapes the graph's ops reject name the node.
  ExpectError(MakeTargetReport(
                  AddRelu(),
                  {kInputs[0], TensorMeta(DType::kFloat32, Shape{3, 8})}, {}),
              absl::StatusCode::kInvalidArgument, "'s'");
  ExpectError(MakeTargetReport(nullptr, {}, {}),
              absl::StatusCode::kInvalidArgument, "no graph");
}

}  // namespace
}  // namespace guardjit
