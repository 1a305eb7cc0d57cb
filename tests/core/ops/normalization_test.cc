// Shape and dtype rules of the normalizations (core/ops/normalization.cc):
// softmax's half_to_float, layer/group/batch norm's statistics (their sizes,
// and float32 for a float16/bfloat16 input with float32 parameters), and
// the checks with the argument they name.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

std::vector<Arg> Refs(int n) {
  std::vector<Arg> refs;
  for (int i = 0; i < n; ++i) refs.push_back(Arg::Ref("x" + std::to_string(i)));
  return refs;
}

// native_layer_norm(x0, normalized_shape, x1?, x2?, eps).
absl::StatusOr<std::vector<TensorMeta>> LayerNorm(
    const std::vector<TensorMeta>& inputs, const std::vector<int64_t>& shape) {
  const std::vector<Arg> refs = Refs(static_cast<int>(inputs.size()));
  return OpMetas(
      "aten.native_layer_norm.default", inputs,
      {refs[0], Ints(shape), inputs.size() > 1 ? refs[1] : Arg::None(),
       inputs.size() > 2 ? refs[2] : Arg::None(), Arg::Float(1e-5)});
}

TEST(NormalizationMetaTest, SoftmaxKeepsTheInputUnlessHalfToFloat) {
  auto out = OpMetas("aten._log_softmax.default",
                     {TensorMeta(DType::kBFloat16, Shape{2, 5})},
                     {Arg::Ref("x0"), Arg::Int(-1), Arg::Bool(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kBFloat16);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 5}));
  // half_to_float exists for CUDA float16 inputs only.
  out = OpMetas(
      "aten._softmax.default",
      {TensorMeta(DType::kFloat16, Shape{2, 5}, Device{DeviceType::kCUDA, 0})},
      {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kFloat32);
  ExpectError(OpMetas("aten._softmax.default",
                      {TensorMeta(DType::kFloat16, Shape{2, 5})},
                      {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(true)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'half_to_float': softmax with half to float "
              "conversion is not supported on CPU");
  ExpectError(
      OpMetas("aten._softmax.default", {TensorMeta(DType::kInt64, Shape{2, 5})},
              {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': softmax expects a floating point input, got "
      "int64");
  ExpectError(OpMetas("aten._softmax.default",
                      {TensorMeta(DType::kFloat32, Shape{2, 5})},
                      {Arg::Ref("x0"), Arg::Int(2), Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument, "argument 'dim': ");
}

TEST(NormalizationMetaTest, LayerNormStatistics) {
  auto out = LayerNorm({TensorMeta(DType::kFloat16, Shape{4, 3, 8}),
                        TensorMeta(DType::kFloat32, Shape{3, 8})},
                       {3, 8});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].dtype, DType::kFloat16);
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 3, 8}));
  // mean and rstd: leading dims kept, normalized dims 1; float32 (mixed).
  for (int i : {1, 2}) {
    EXPECT_EQ((*out)[i].shape(), (Shape{4, 1, 1}));
    EXPECT_EQ((*out)[i].dtype, DType::kFloat32);
  }
  ExpectError(LayerNorm({TensorMeta(DType::kFloat32, Shape{4, 3, 8})}, {3, 4}),
              absl::StatusCode::kInvalidArgument,
              "argument 'normalized_shape': Given normalized_shape=[3, 4], "
              "expected input with shape [*, 3, 4], but got input of size"
              "[4, 3, 8]");
  ExpectError(LayerNorm({TensorMeta(DType::kFloat32, Shape{4, 8}),
                         TensorMeta(DType::kFloat32, Shape{4})},
                        {8}),
              absl::StatusCode::kInvalidArgument,
              "argument 'weight': Expected weight to be of same shape as "
              "normalized_shape, but got weight of shape [4] and "
              "normalized_shape = [8]");
  ExpectError(LayerNorm({TensorMeta(DType::kFloat32, Shape{4, 8}),
                         TensorMeta(DType::kFloat32, Shape{8}),
                         TensorMeta(DType::kFloat64, Shape{8})},
                        {8}),
              absl::StatusCode::kInvalidArgument,
              "argument 'bias': expected dtype float32 (the input's dtype), "
              "got float64");
}

TEST(NormalizationMetaTest, GroupNormStatisticsAndChecks) {
  auto group_norm = [](const TensorMeta& input, int64_t n, int64_t c,
                       int64_t hxw, int64_t group) {
    return OpMetas(
        "aten.native_group_norm.default", {input},
        {Arg::Ref("x0"), Arg::None(), Arg::None(), Arg::Int(n), Arg::Int(c),
         Arg::Int(hxw), Arg::Int(group), Arg::Float(1e-5)});
  };
  const TensorMeta x(DType::kFloat64, Shape{2, 6, 3, 3});
  auto out = group_norm(x, 2, 6, 9, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6, 3, 3}));
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 3}));
  EXPECT_EQ((*out)[2].dtype, DType::kFloat64);
  ExpectError(group_norm(x, 2, 6, 9, 4), absl::StatusCode::kInvalidArgument,
              "argument 'group': Expected number of channels in input to be "
              "divisible by num_groups, but got input of shape [2, 6, 3, 3] "
              "and num_groups=4");
  ExpectError(group_norm(x, 2, 6, 8, 3), absl::StatusCode::kInvalidArgument,
              "argument 'input': expected N=2, C=6, HxW=8, got input of shape "
              "[2, 6, 3, 3]");
  ExpectError(group_norm(x, 2, 6, 9, 0), absl::StatusCode::kInvalidArgument,
              "argument 'group': expected a positive number of groups, got 0");
}

TEST(NormalizationMetaTest, BatchNormStatisticsAndChecks) {
  const TensorMeta x(DType::kBFloat16, Shape{2, 3, 4});
  const TensorMeta c3(DType::kFloat32, Shape{3});
  // Training: save_mean/save_invstd have C elements, float32 (mixed).
  auto out = OpMetas(
      "aten._native_batch_norm_legit.default", {x, c3, c3, c3, c3},
      {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2"), Arg::Ref("x3"),
       Arg::Ref("x4"), Arg::Bool(true), Arg::Float(0.1), Arg::Float(1e-5)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype, DType::kBFloat16);
  EXPECT_EQ((*out)[1].shape(), (Shape{3}));
  EXPECT_EQ((*out)[1].dtype, DType::kFloat32);
  // Evaluation: they are empty.
  out =
      OpMetas("aten._native_batch_norm_legit_no_training.default", {x, c3, c3},
              {Arg::Ref("x0"), Arg::None(), Arg::None(), Arg::Ref("x1"),
               Arg::Ref("x2"), Arg::Float(0.1), Arg::Float(1e-5)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[1].shape(), (Shape{0}));
  ExpectError(OpMetas("aten._native_batch_norm_legit.no_stats", {x},
                      {Arg::Ref("x0"), Arg::None(), Arg::None(),
                       Arg::Bool(false), Arg::Float(0.1), Arg::Float(1e-5)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'training': running_mean and running_var must be "
              "defined in evaluation mode");
  ExpectError(OpMetas("aten._native_batch_norm_legit_no_training.default",
                      {x, c3, TensorMeta(DType::kFloat32, Shape{4})},
                      {Arg::Ref("x0"), Arg::None(), Arg::None(), Arg::Ref("x1"),
                       Arg::Ref("x2"), Arg::Float(0.1), Arg::Float(1e-5)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'running_var': running_var should contain 3 elements "
              "not 4");
  ExpectError(OpMetas("aten._native_batch_norm_legit.no_stats",
                      {TensorMeta(DType::kFloat32, Shape{3})},
                      {Arg::Ref("x0"), Arg::None(), Arg::None(),
                       Arg::Bool(true), Arg::Float(0.1), Arg::Float(1e-5)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'input': batch_norm expects an input of at least 2 "
              "dims (N, C, ...), got [3]");
}

}  // namespace
}  // namespace guardjit::testing
