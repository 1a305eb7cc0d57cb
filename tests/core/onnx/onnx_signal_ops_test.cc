// ONNX's window functions (core/onnx/onnx_signal_ops.cc): Hann, Hamming and
// Blackman windows of a known size, periodic or symmetric, in the requested
// dtype, run by the eager interpreter against hand-computed values; the sizes
// they refuse.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// A model computing `op` of the constant size `size`; periodic and
// output_datatype set when given.
ModelProto WindowModel(const std::string& op, int64_t size, int periodic = -1,
                       int output_datatype = -1) {
  ModelProto m = Model(17);
  AddInt64Initializer(m, "size", {}, {size});
  NodeProto* n = AddNode(m, op, {"size"}, {"y"});
  if (periodic >= 0) SetInt(n, "periodic", periodic);
  if (output_datatype >= 0) SetInt(n, "output_datatype", output_datatype);
  AddOutput(m, "y");
  return m;
}

// Loads `m` and runs it without inputs; fails the test on error.
Tensor RunWindow(const ModelProto& m) {
  auto g = Load(m);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return *Tensor::Empty(DType::kFloat32, {0});
  EXPECT_TRUE((*g)->inputs().empty());
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*std::move(g)));
  EXPECT_TRUE(interp.ok()) << interp.status();
  if (!interp.ok()) return *Tensor::Empty(DType::kFloat32, {0});
  auto out = (*interp)->Run({});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1)
    return *Tensor::Empty(DType::kFloat32, {0});
  return (*out)[0];
}

TEST(OnnxSignalOpsTest, HannPeriodicByDefaultAndSymmetric) {
  ExpectTensor(RunWindow(WindowModel("HannWindow", 4)), DType::kFloat32, {4},
               {0.0, 0.5, 1.0, 0.5});
  // Symmetric: N = size - 1 = 3.
  ExpectTensor(RunWindow(WindowModel("HannWindow", 4, /*periodic=*/0)),
               DType::kFloat32, {4}, {0.0, 0.75, 0.75, 0.0});
}

TEST(OnnxSignalOpsTest, HammingCoefficients) {
  // a0 = 25/46, a1 = 21/46; cos(2 pi / 3) = -1/2.
  ExpectTensor(RunWindow(WindowModel("HammingWindow", 3)), DType::kFloat32, {3},
               {4.0 / 46, 35.5 / 46, 35.5 / 46});
}

TEST(OnnxSignalOpsTest, BlackmanSymmetricInDouble) {
  // N = 2: 0.42 - 0.5 cos(pi n) + 0.08 cos(2 pi n); output_datatype DOUBLE.
  ExpectTensor(RunWindow(WindowModel("BlackmanWindow", 3, /*periodic=*/0,
                                     TensorProto::DOUBLE)),
               DType::kFloat64, {3}, {0.0, 1.0, 0.0}, 1e-12, 1e-12);
}

TEST(OnnxSignalOpsTest, EmptyAndIntegerWindows) {
  ExpectTensor(RunWindow(WindowModel("HannWindow", 0)), DType::kFloat32, {0},
               {});
  // Rounded to int64 as a cast does (truncation): [0, 0.5, 1, 0.5].
  ExpectTensor(RunWindow(WindowModel("HannWindow", 4, /*periodic=*/1,
                                     TensorProto::INT64)),
               DType::kInt64, {4}, {0, 0, 1, 0});
}

TEST(OnnxSignalOpsTest, RefusesASymmetricWindowOfSizeOne) {
  auto g = Load(WindowModel("HannWindow", 1, /*periodic=*/0));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("a symmetric window of size 1"));
  // Periodic, size 1 is [a0 - a1] = [0].
  ExpectTensor(RunWindow(WindowModel("HannWindow", 1)), DType::kFloat32, {1},
               {0.0});
}

TEST(OnnxSignalOpsTest, RefusesNegativeAndNonScalarSizes) {
  auto g = Load(WindowModel("BlackmanWindow", -1));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument)
      << g.status();
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("size -1"));

  ModelProto m = Model(17);
  AddInt64Initializer(m, "size", {2}, {3, 4});
  AddNode(m, "HannWindow", {"size"}, {"y"});
  AddOutput(m, "y");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("size is not a scalar"));
}

}  // namespace
}  // namespace guardjit::testing
