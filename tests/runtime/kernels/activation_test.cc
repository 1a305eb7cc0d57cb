// hardtanh, leaky_relu and elu through the graph builder and the eager
// interpreter, against hand-computed values (PyTorch's semantics: no
// promotion by the Scalar parameters, NaN propagation, integral hardtanh).

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ActivationTest, HardtanhClampsWithDefaultAndGivenBounds) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = MakeTensor(dtype, {6}, {-3, -0.5, 0.25, 2, kNaN, -kInf});
    ExpectTensor(RunOp1("aten.hardtanh.default", {x}), dtype, {6},
                 {-1, -0.5, 0.25, 1, kNaN, -1}, 0, 0);
    ExpectTensor(RunOp1("aten.hardtanh.default", {x, 0.0, 6.0}), dtype, {6},
                 {0, 0, 0.25, 2, kNaN, 0}, 0, 0);
  }
}

TEST(ActivationTest, HardtanhOnIntegersTruncatesBoundsAndKeepsDType) {
  const Tensor x = MakeTensor(DType::kInt64, {4}, {-5, 0, 3, 9});
  ExpectTensor(RunOp1("aten.hardtanh.default", {x, -2.7, 6.9}), DType::kInt64,
               {4}, {-2, 0, 3, 6}, 0, 0);
  const Tensor u = MakeTensor(DType::kUInt8, {2}, {1, 200});
  ExpectTensor(RunOp1("aten.hardtanh.default", {u, 0, 6}), DType::kUInt8, {2},
               {1, 6}, 0, 0);
}

TEST(ActivationTest, HardtanhErrorsNameTheArgument) {
  auto b = RunOp("aten.hardtanh.default", {MakeTensor(DType::kBool, {1}, {1})});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("argument 'self'"), std::string::npos)
      << b.status();
  EXPECT_NE(b.status().message().find("hardtanh"), std::string::npos);
  auto u =
      RunOp("aten.hardtanh.default", {MakeTensor(DType::kUInt8, {1}, {1})});
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("unsigned type with negative limits"),
            std::string::npos)
      << u.status();
}

TEST(ActivationTest, LeakyReluScalesNegativesAndKeepsNaN) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = MakeTensor(dtype, {5}, {-2, 0, 3, kNaN, -kInf});
    ExpectTensor(RunOp1("aten.leaky_relu.default", {x}), dtype, {5},
                 {-0.02, 0, 3, kNaN, -kInf}, 1e-7, 1e-6);
    ExpectTensor(RunOp1("aten.leaky_relu.default", {x, 0.5}), dtype, {5},
                 {-1, 0, 3, kNaN, -kInf}, 0, 0);
  }
  // Non-contiguous input, float16.
  const Tensor h =
      NonContiguousCopy(MakeTensor(DType::kFloat16, {2, 2}, {-4, 1, 2, -8}));
  const Tensor y = RunOp1("aten.leaky_relu.default", {h, 0.25});
  std::vector<double> expected;
  for (double v : ToDoubles(h)) expected.push_back(v > 0 ? v : v * 0.25);
  ExpectTensor(y, DType::kFloat16, {2, 2}, expected, 0, 0);
}

TEST(ActivationTest, EluMatchesDefinition) {
  const Tensor x =
      MakeTensor(DType::kFloat64, {6}, {-1, 0, 2, kNaN, -kInf, -1e-10});
  ExpectTensor(RunOp1("aten.elu.default", {x}), DType::kFloat64, {6},
               {std::expm1(-1.0), 0, 2, kNaN, -1, std::expm1(-1e-10)}, 0,
               1e-15);
  // alpha 2, scale 3, input_scale 0.5.
  ExpectTensor(RunOp1("aten.elu.default", {x, 2.0, 3.0, 0.5}), DType::kFloat64,
               {6},
               {std::expm1(-0.5) * 6, 0, 6, kNaN, -6, std::expm1(-0.5e-10) * 6},
               0, 1e-15);
}

TEST(ActivationTest, LeakyReluAndEluRejectIntegers) {
  for (const char* op : {"aten.leaky_relu.default", "aten.elu.default"}) {
    auto r = RunOp(op, {MakeTensor(DType::kInt32, {1}, {1})});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("argument 'self'"), std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find("int32"), std::string::npos)
        << r.status();
  }
}

}  // namespace
}  // namespace guardjit
