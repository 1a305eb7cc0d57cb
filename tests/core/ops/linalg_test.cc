// Shape rules of the matrix products and convolution (core/ops/linalg.cc):
// result sizes (plain, grouped, strided, dilated, padded and transposed
// convolutions over 1 to 3 spatial dims), addmm's one-way broadcast, and
// each check with the argument it names. Values: the kernel and
// conformance tests.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TensorMeta F32(Shape sizes) { return TensorMeta(DType::kFloat32, sizes); }

absl::StatusOr<std::vector<TensorMeta>> Product(
    const std::string& target, const std::vector<TensorMeta>& inputs) {
  std::vector<Arg> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args.push_back(Arg::Ref("x" + std::to_string(i)));
  }
  return OpMetas(target, inputs, std::move(args));
}

struct Conv {
  Shape input, weight;
  std::vector<int64_t> stride = {1}, padding = {0}, dilation = {1};
  bool transposed = false;
  std::vector<int64_t> output_padding = {0};
  int64_t groups = 1;
  std::optional<Shape> bias;
};

absl::StatusOr<std::vector<TensorMeta>> Convolution(const Conv& c) {
  std::vector<TensorMeta> inputs = {F32(c.input), F32(c.weight)};
  if (c.bias) inputs.push_back(F32(*c.bias));
  return OpMetas(
      "aten.convolution.default", inputs,
      {Arg::Ref("x0"), Arg::Ref("x1"), c.bias ? Arg::Ref("x2") : Arg::None(),
       Ints(c.stride), Ints(c.padding), Ints(c.dilation),
       Arg::Bool(c.transposed), Ints(c.output_padding), Arg::Int(c.groups)});
}

TEST(LinalgMetaTest, ProductSizes) {
  auto mm = Product("aten.mm.default", {F32({3, 4}), F32({4, 5})});
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_EQ((*mm)[0].shape(), (Shape{3, 5}));
  auto bmm = Product("aten.bmm.default", {F32({2, 3, 4}), F32({2, 4, 1})});
  ASSERT_TRUE(bmm.ok()) << bmm.status();
  EXPECT_EQ((*bmm)[0].shape(), (Shape{2, 3, 1}));
  // addmm's self broadcasts to the result: [5], [1, 5], [3, 1], [].
  for (const Shape& self : {Shape{5}, Shape{1, 5}, Shape{3, 1}, Shape{}}) {
    auto addmm =
        Product("aten.addmm.default", {F32(self), F32({3, 4}), F32({4, 5})});
    ASSERT_TRUE(addmm.ok()) << addmm.status();
    EXPECT_EQ((*addmm)[0].shape(), (Shape{3, 5}));
  }
}

TEST(LinalgMetaTest, ProductChecksNameTheArgument) {
  ExpectError(Product("aten.mm.default", {F32({3, 4}), F32({5, 4})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'mat2': self and mat2 shapes cannot be multiplied "
              "(3x4 and 5x4)");
  ExpectError(Product("aten.mm.default", {F32({3, 4, 1}), F32({4, 5})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'self': expected a 2-D tensor, got a 3-D tensor");
  ExpectError(Product("aten.mm.default",
                      {F32({3, 4}), TensorMeta(DType::kFloat64, Shape{4, 5})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'mat2': expected self and mat2 to have the same "
              "dtype, but got: float32 != float64");
  ExpectError(
      Product("aten.mm.default", {TensorMeta(DType::kBool, Shape{1, 1}),
                                  TensorMeta(DType::kBool, Shape{1, 1})}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': matrix products are not defined for bool");
  ExpectError(Product("aten.bmm.default", {F32({2, 3, 4}), F32({3, 4, 1})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'mat2': batch size 3 does not match self's batch "
              "size 2");
  // The result never broadcasts to self.
  ExpectError(
      Product("aten.addmm.default", {F32({2, 3, 5}), F32({3, 4}), F32({4, 5})}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': shape [2, 3, 5] cannot be broadcast to the "
      "result shape [3, 5]");
  ExpectError(
      Product("aten.addmm.default", {F32({4}), F32({3, 4}), F32({4, 5})}),
      absl::StatusCode::kInvalidArgument, "argument 'self': shape [4]");
}

TEST(LinalgMetaTest, ConvolutionOutputSizes) {
  struct Case {
    Conv conv;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           // (7 + 2 - 3) / 2 + 1 = 4; (9 + 2 - 3) / 2 + 1 = 5
           {{.input = {2, 3, 7, 9},
           .weight = {8, 3, 3, 3},
           .stride = {2},
           .padding = {1},
           .bias = Shape{8}},
            {2, 8, 4, 5}},
           // dilation 2: a 3-wide kernel spans 5; two groups of 2 channels
           {{.input = {1, 4, 10},
           .weight = {6, 2, 3},
           .dilation = {2},
           .groups = 2},
            {1, 6, 6}},
           // 3-D, per-dim strides
           {{.input = {1, 1, 4, 6, 8},
           .weight = {2, 1, 2, 2, 2},
           .stride = {1, 2, 3}},
            {1, 2, 3, 3, 3}},
           // transposed: (5 - 1) * 2 - 2 * 1 + 3 + 1 = 10 with weight
           // [in, out / groups, k], 2 groups of 3 output channels
           {{.input = {1, 4, 5},
           .weight = {4, 3, 3},
           .stride = {2},
           .padding = {1},
           .transposed = true,
           .output_padding = {1},
           .groups = 2},
            {1, 6, 10}},
       }) {
    auto out = Convolution(c.conv);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), c.out);
  }
}

TEST(LinalgMetaTest, ConvolutionChecksNameTheArgument) {
  const Conv base = {.input = {1, 4, 5, 5}, .weight = {6, 4, 3, 3}};
  Conv c = base;
  c.groups = 4;  // weight[1] * groups = 16 channels expected
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'weight': given groups=4, expected weight to be "
              "divisible by 4 at dimension 0, but got weight of size "
              "[6, 4, 3, 3]");
  c = base;
  c.weight = {6, 2, 3, 3};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'input': given groups=1, weight of size [6, 2, 3, 3], "
              "expected input[1, 4, 5, 5] to have 2 channels, but got 4 "
              "channels instead");
  c = base;
  c.bias = Shape{5};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'bias': expected a 1-D tensor with 6 elements, got "
              "[5]");
  c = base;
  c.input = {1, 4, 2, 2};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'input': calculated padded input size per channel: "
              "(2 x 2). Kernel size: (3 x 3). Kernel size can't be greater "
              "than actual input size");
  c = base;
  c.stride = {1, 1, 1};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'stride': expected a single value or a list of 2 "
              "values to match the convolution dimensions, got [1, 1, 1]");
  c = base;
  c.padding = {-1};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'padding': negative padding is not supported, got "
              "[-1, -1]");
  c = base;
  c.transposed = true;
  c.weight = {4, 6, 3, 3};
  c.output_padding = {1};
  ExpectError(Convolution(c), absl::StatusCode::kInvalidArgument,
              "argument 'output_padding': output padding must be smaller "
              "than either stride or dilation, got output_padding=[1, 1], "
              "stride=[1, 1], dilation=[1, 1]");
  // Absurd paddings are out of range, not an overflowed size.
  c = base;
  c.padding = {int64_t{1} << 62};
  ExpectError(Convolution(c), absl::StatusCode::kOutOfRange,
              "argument 'padding': padded input sizes");
  ExpectError(
      OpMetas("aten.convolution.default",
              {TensorMeta(DType::kInt32, Shape{1, 1, 3}),
               TensorMeta(DType::kInt32, Shape{1, 1, 1})},
              {Arg::Ref("x0"), Arg::Ref("x1"), Arg::None(), Ints({1}),
               Ints({0}), Ints({1}), Arg::Bool(false), Ints({0}), Arg::Int(1)}),
      absl::StatusCode::kInvalidArgument,
      "argument 'input': convolution is defined for floating dtypes "
      "only, got int32");
}

}  // namespace
}  // namespace guardjit::testing
