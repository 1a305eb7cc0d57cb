// Tests of cat, clone, _to_copy, split_with_sizes and constant_pad_nd.

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectError;
using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

using ::guardjit::testing::kAllDTypes;

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

Tensor IotaTensor(IntSpan sizes, DType dtype = DType::kFloat32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return MakeTensor(dtype, sizes, Iota(n));
}

Tensor Empty(DType dtype, IntSpan sizes) {
  return *Tensor::Empty(dtype, sizes);
}

Shape Strides(const Tensor& t) {
  return Shape(t.strides().begin(), t.strides().end());
}

void ExpectViewOf(const Tensor& view, const Tensor& base, int64_t offset) {
  EXPECT_EQ(view.data(),
            static_cast<char*>(base.data()) + offset * base.item_size());
}

// Issue #19: cat added sizes without an overflow check ("negative size
// -9223372036854775801" from a later allocation).
TEST(ShapeTest, CatSizesAddingPastInt64AreOutOfRange) {
  GraphBuilder b("cat");
  ASSERT_TRUE(b.AddPlaceholder("a").ok());
  ASSERT_TRUE(
      b.AddNode("c", "aten.cat.default",
                {Arg::OfList({Arg::Ref("a"), Arg::Ref("a"), Arg::Ref("a")})})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("c")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const TensorMeta huge{DType::kFloat32, {SymInt(int64_t{1} << 62)}};
  auto metas = InferShapes(**graph, {huge});
  EXPECT_EQ(metas.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(std::string(metas.status().message()).find("past 2^63"),
            std::string::npos)
      << metas.status();
}

TEST(ShapeTest, CatAlongEachDim) {
  Tensor a = IotaTensor({2, 2});
  Tensor b = MakeTensor(DType::kFloat32, {2, 1}, {10, 11});
  ExpectTensor(RunOp1("aten.cat.default", {std::vector<Tensor>{a, b}, 1}),
               DType::kFloat32, {2, 3}, {0, 1, 10, 2, 3, 11});
  ExpectTensor(RunOp1("aten.cat.default", {std::vector<Tensor>{b, a, b}, -1}),
               DType::kFloat32, {2, 4}, {10, 0, 1, 10, 11, 2, 3, 11});
  Tensor c = MakeTensor(DType::kFloat32, {1, 2}, {20, 21});
  Tensor out = RunOp1("aten.cat.default", {std::vector<Tensor>{a, c}});
  ExpectTensor(out, DType::kFloat32, {3, 2}, {0, 1, 2, 3, 20, 21});
  EXPECT_TRUE(out.is_contiguous());
  ExpectTensor(RunOp1("aten.cat.default", {std::vector<Tensor>{a}}),
               DType::kFloat32, {2, 2}, {0, 1, 2, 3});
}

TEST(ShapeTest, CatPromotesLikeResultType) {
  auto cat = [](Tensor x, Tensor y) {
    return RunOp1("aten.cat.default", {std::vector<Tensor>{x, y}});
  };
  ExpectTensor(cat(MakeTensor(DType::kInt32, {2}, {1, 2}),
                   MakeTensor(DType::kFloat32, {1}, {0.5})),
               DType::kFloat32, {3}, {1, 2, 0.5});
  ExpectTensor(cat(MakeTensor(DType::kBool, {2}, {1, 0}),
                   MakeTensor(DType::kInt8, {1}, {-3})),
               DType::kInt8, {3}, {1, 0, -3});
  ExpectTensor(cat(MakeTensor(DType::kUInt8, {1}, {200}),
                   MakeTensor(DType::kInt8, {1}, {-1})),
               DType::kInt16, {2}, {200, -1});
  ExpectTensor(cat(MakeTensor(DType::kInt64, {1}, {5}),
                   MakeTensor(DType::kFloat16, {1}, {1.5})),
               DType::kFloat16, {2}, {5, 1.5});
  ExpectTensor(cat(MakeTensor(DType::kBFloat16, {1}, {2}),
                   MakeTensor(DType::kFloat16, {1}, {3})),
               DType::kFloat32, {2}, {2, 3});
}

TEST(ShapeTest, CatEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor a = MakeTensor(dtype, {1, 2}, {1, 0});
    Tensor b = MakeTensor(dtype, {2, 2}, {0, 1, 1, 1});
    ExpectTensor(RunOp1("aten.cat.default", {std::vector<Tensor>{b, a}, -2}),
                 dtype, {3, 2}, {0, 1, 1, 1, 1, 0});
  }
}

TEST(ShapeTest, CatSkipsLegacyEmptyTensors) {
  Tensor legacy = Empty(DType::kFloat64, {0});
  Tensor x = MakeTensor(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  // The empty input still takes part in type promotion, and `dim` wraps
  // against the first tensor that is not skipped.
  ExpectTensor(
      RunOp1("aten.cat.default", {std::vector<Tensor>{legacy, x, legacy}, -1}),
      DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  ExpectTensor(RunOp1("aten.cat.default",
                      {std::vector<Tensor>{Empty(DType::kInt32, {0, 2}), x}}),
               DType::kInt32, {2, 2}, {1, 2, 3, 4});
  ExpectTensor(
      RunOp1("aten.cat.default",
             {std::vector<Tensor>{legacy, Empty(DType::kInt8, {0})}, 5}),
      DType::kFloat64, {0}, {});
  ExpectError(RunOp("aten.cat.default",
                    {std::vector<Tensor>{Empty(DType::kInt32, {0, 3}), x}}),
              absl::StatusCode::kInvalidArgument, "tensor number 1");
}

TEST(ShapeTest, CatNonContiguousAndOffsetInputs) {
  Tensor a = NonContiguousCopy(IotaTensor({2, 3}));
  Tensor base = IotaTensor({4, 5});
  Tensor b = base.AsStrided({2, 2}, {5, 2}, 6);  // rows 1-2, cols 1 and 3
  ExpectTensor(RunOp1("aten.cat.default", {std::vector<Tensor>{a, b}, 1}),
               DType::kFloat32, {2, 5}, {0, 1, 2, 6, 8, 3, 4, 5, 11, 13});
}

TEST(ShapeTest, CatErrors) {
  Tensor x = IotaTensor({2, 3});
  ExpectError(RunOp("aten.cat.default",
                    {std::vector<Tensor>{x, x, IotaTensor({2, 2})}}),
              absl::StatusCode::kInvalidArgument, "tensor number 2");
  ExpectError(
      RunOp("aten.cat.default", {std::vector<Tensor>{x, IotaTensor({2, 2})}}),
      absl::StatusCode::kInvalidArgument, "argument 'tensors'");
  ExpectError(
      RunOp("aten.cat.default", {std::vector<Tensor>{x, IotaTensor({6})}}),
      absl::StatusCode::kInvalidArgument, "same number of dimensions");
  ExpectError(
      RunOp("aten.cat.default",
            {std::vector<Tensor>{x, MakeTensor(DType::kFloat32, {}, {1})}}),
      absl::StatusCode::kInvalidArgument, "position 1");
  ExpectError(RunOp("aten.cat.default", {std::vector<Tensor>{x, x}, 2}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(RunOp("aten.cat.default", {std::vector<Tensor>{}}),
              absl::StatusCode::kInvalidArgument, "argument 'tensors'");
}

TEST(ShapeTest, CloneCopiesEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = NonContiguousCopy(MakeTensor(dtype, {2, 3}, {1, 0, 1, 1, 1, 0}));
    Tensor y = RunOp1("aten.clone.default", {x});
    ExpectTensor(y, dtype, {2, 3}, {1, 0, 1, 1, 1, 0});
    EXPECT_TRUE(y.is_contiguous());
    EXPECT_NE(y.storage(), x.storage());
  }
  Tensor scalar = MakeTensor(DType::kInt64, {}, {-7});
  ExpectTensor(
      RunOp1("aten.clone.default", {scalar}, {{"memory_format", Arg::None()}}),
      DType::kInt64, {}, {-7});
  ExpectTensor(RunOp1("aten.clone.default", {true}), DType::kBool, {}, {1});
  ExpectTensor(RunOp1("aten.clone.default", {Empty(DType::kFloat16, {0, 4})}),
               DType::kFloat16, {0, 4}, {});
  Tensor base = IotaTensor({3, 3});
  ExpectTensor(RunOp1("aten.clone.default", {base.AsStrided({2}, {4}, 1)}),
               DType::kFloat32, {2}, {1, 5});
}

TEST(ShapeTest, ToCopyConvertsBetweenEveryDTypePair) {
  for (DType from : kAllDTypes) {
    Tensor x = NonContiguousCopy(MakeTensor(from, {2, 2}, {0, 1, 2, 5}));
    const std::vector<double> values = ToDoubles(x);
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(absl::StrCat(DTypeName(from), " -> ", DTypeName(to)));
      std::vector<double> expected = values;
      if (to == DType::kBool) {
        for (double& v : expected) v = v != 0;
      }
      Tensor y = RunOp1("aten._to_copy.default", {x}, {{"dtype", to}});
      ExpectTensor(y, to, {2, 2}, expected);
      EXPECT_NE(y.storage(), x.storage());
    }
  }
}

TEST(ShapeTest, ToCopyFollowsPyTorchConversions) {
  Tensor f = MakeTensor(DType::kFloat32, {4}, {-1.7, 2.9, 0.5, -0.0});
  ExpectTensor(RunOp1("aten._to_copy.default", {f}, {{"dtype", DType::kInt32}}),
               DType::kInt32, {4}, {-1, 2, 0, 0});
  ExpectTensor(RunOp1("aten._to_copy.default", {f}, {{"dtype", DType::kBool}}),
               DType::kBool, {4}, {1, 1, 1, 0});
  Tensor i = MakeTensor(DType::kInt32, {2}, {2049, 300});
  ExpectTensor(
      RunOp1("aten._to_copy.default", {i}, {{"dtype", DType::kFloat16}}),
      DType::kFloat16, {2}, {2048, 300});
  ExpectTensor(RunOp1("aten._to_copy.default", {i}, {{"dtype", DType::kInt8}}),
               DType::kInt8, {2}, {1, 44});
  // No dtype: a plain copy; the other keywords are accepted.
  Tensor y = RunOp1("aten._to_copy.default", {i},
                    {{"device", "cpu"},
                     {"layout", Arg::None()},
                     {"pin_memory", false},
                     {"non_blocking", true},
                     {"memory_format", Arg::None()}});
  ExpectTensor(y, DType::kInt32, {2}, {2049, 300});
  EXPECT_NE(y.data(), i.data());
  ExpectTensor(RunOp1("aten._to_copy.default", {Empty(DType::kInt8, {3, 0})},
                      {{"dtype", DType::kFloat64}}),
               DType::kFloat64, {3, 0}, {});
}

TEST(ShapeTest, ToCopyToAnotherDeviceIsUnimplemented) {
  ExpectError(
      RunOp("aten._to_copy.default", {IotaTensor({2})}, {{"device", "cuda:0"}}),
      absl::StatusCode::kUnimplemented, "argument 'device'");
}

TEST(ShapeTest, SplitWithSizesReturnsViews) {
  Tensor x = IotaTensor({5, 2});
  auto parts = RunOp("aten.split_with_sizes.default", {x, {2, 0, 3}}, {}, 3);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ExpectTensor((*parts)[0], DType::kFloat32, {2, 2}, {0, 1, 2, 3});
  ExpectTensor((*parts)[1], DType::kFloat32, {0, 2}, {});
  ExpectTensor((*parts)[2], DType::kFloat32, {3, 2}, {4, 5, 6, 7, 8, 9});
  ExpectViewOf((*parts)[0], x, 0);
  ExpectViewOf((*parts)[2], x, 4);

  Tensor nc = NonContiguousCopy(IotaTensor({2, 4}));
  auto cols = RunOp("aten.split_with_sizes.default", {nc, {1, 3}, -1}, {}, 2);
  ASSERT_TRUE(cols.ok()) << cols.status();
  ExpectTensor((*cols)[0], DType::kFloat32, {2, 1}, {0, 4});
  ExpectTensor((*cols)[1], DType::kFloat32, {2, 3}, {1, 2, 3, 5, 6, 7});
  ExpectViewOf((*cols)[1], nc, nc.stride(1));
  EXPECT_EQ(Strides((*cols)[1]), Strides(nc));
}

TEST(ShapeTest, SplitWithSizesErrors) {
  Tensor x = IotaTensor({5, 2});
  ExpectError(RunOp("aten.split_with_sizes.default", {x, {2, 2}}, {}, 2),
              absl::StatusCode::kInvalidArgument, "argument 'split_sizes'");
  ExpectError(RunOp("aten.split_with_sizes.default", {x, {6, -1}}, {}, 2),
              absl::StatusCode::kInvalidArgument, "non-negative");
  ExpectError(RunOp("aten.split_with_sizes.default", {x, {1, 1}, 2}, {}, 2),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  const int64_t max = std::numeric_limits<int64_t>::max();
  ExpectError(RunOp("aten.split_with_sizes.default", {x, {max, max, 7}}, {}, 3),
              absl::StatusCode::kInvalidArgument, "argument 'split_sizes'");
  ExpectError(RunOp("aten.split_with_sizes.default",
                    {MakeTensor(DType::kInt32, {}, {1}), {1}}, {}, 1),
              absl::StatusCode::kInvalidArgument, "argument 'self'");
}

TEST(ShapeTest, ConstantPadPadsFromTheLastDim) {
  Tensor v = MakeTensor(DType::kFloat32, {3}, {1, 2, 3});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {v, {1, 2}, 9.0}),
               DType::kFloat32, {6}, {9, 1, 2, 3, 9, 9});
  Tensor m = MakeTensor(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  // (left, right) of the last dim, then (top, bottom) of the one before.
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {m, {1, 0, 0, 1}}),
               DType::kFloat32, {3, 3}, {0, 1, 2, 0, 3, 4, 0, 0, 0});
  Tensor nc = NonContiguousCopy(IotaTensor({2, 3}));
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {nc, {0, 0, 1, 0}, -1}),
               DType::kFloat32, {3, 3}, {-1, -1, -1, 0, 1, 2, 3, 4, 5});
}

TEST(ShapeTest, ConstantPadNegativePadsCrop) {
  Tensor x = IotaTensor({2, 3});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {x, {-1, 1}, -5}),
               DType::kFloat32, {2, 3}, {1, 2, -5, 4, 5, -5});
  Tensor cropped = RunOp1("aten.constant_pad_nd.default", {x, {0, -1, -1, 0}});
  ExpectTensor(cropped, DType::kFloat32, {1, 2}, {3, 4});
  EXPECT_NE(cropped.storage(), x.storage());
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {MakeTensor(DType::kInt8, {3}, {1, 2, 3}), {-3, 1}, 7}),
               DType::kInt8, {1}, {7});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {x, {-3, 0}}),
               DType::kFloat32, {2, 0}, {});
  // With nothing to fill, the value is never converted.
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {MakeTensor(DType::kInt8, {3}, {1, 2, 3}), {-1, 0}, 300}),
               DType::kInt8, {2}, {2, 3});
  Tensor scalar = MakeTensor(DType::kInt16, {}, {4});
  ExpectTensor(
      RunOp1("aten.constant_pad_nd.default", {scalar, std::vector<int64_t>{}}),
      DType::kInt16, {}, {4});
}

TEST(ShapeTest, ConstantPadEveryDTypeAndValue) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2}, {0, 1});
    ExpectTensor(RunOp1("aten.constant_pad_nd.default", {x, {1, 1}, 1}), dtype,
                 {4}, {1, 0, 1, 1});
    ExpectTensor(RunOp1("aten.constant_pad_nd.default", {x, {0, 1}, true}),
                 dtype, {3}, {0, 1, 1});
  }
  Tensor i = MakeTensor(DType::kInt32, {1}, {5});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default", {i, {1, 0}, 2.9}),
               DType::kInt32, {2}, {2, 5});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {MakeTensor(DType::kUInt8, {1}, {5}), {1, 0}, -1}),
               DType::kUInt8, {2}, {255, 5});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {MakeTensor(DType::kFloat16, {1}, {5}),
                       {1, 0},
                       std::numeric_limits<double>::infinity()}),
               DType::kFloat16, {2},
               {std::numeric_limits<double>::infinity(), 5});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {MakeTensor(DType::kFloat64, {1}, {5}), {0, 1}, NAN}),
               DType::kFloat64, {2}, {5, NAN});
}

// Any pad value converts to bool, as in torch: 2.0 pads with true.
TEST(ShapeTest, ConstantPadOfBoolTakesAnyValue) {
  ExpectTensor(
      RunOp1("aten.constant_pad_nd.default",
             {MakeTensor(DType::kBool, {1, 3}, {1, 0, 1}), {1, 2}, 2.0}),
      DType::kBool, {1, 6}, {1, 1, 0, 1, 1, 1});
  ExpectTensor(
      RunOp1("aten.constant_pad_nd.default",
             {MakeTensor(DType::kBool, {1, 3}, {1, 0, 1}), {1, 2}, 0.0}),
      DType::kBool, {1, 6}, {0, 1, 0, 1, 0, 0});
}

TEST(ShapeTest, ConstantPadEmptyInputs) {
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {Empty(DType::kInt64, {0}), {1, 1}, 3}),
               DType::kInt64, {2}, {3, 3});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {Empty(DType::kFloat32, {0, 2}), {1, 1}}),
               DType::kFloat32, {0, 4}, {});
  // A padded dim may stay empty, as in torch 2.15 (which returns [3, 0]).
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {Empty(DType::kFloat32, {2, 0}), {0, 0, 1, 0}}),
               DType::kFloat32, {3, 0}, {});
  ExpectTensor(RunOp1("aten.constant_pad_nd.default",
                      {IotaTensor({2, 3}), {-3, 0, 1, 0}}),
               DType::kFloat32, {3, 0}, {});
}

TEST(ShapeTest, ConstantPadErrors) {
  Tensor x = IotaTensor({2, 3});
  ExpectError(RunOp("aten.constant_pad_nd.default", {x, {1, 1, 1}}),
              absl::StatusCode::kInvalidArgument, "argument 'pad'");
  ExpectError(RunOp("aten.constant_pad_nd.default", {x, {1, 1, 1, 1, 1, 1}}),
              absl::StatusCode::kInvalidArgument, "argument 'pad'");
  ExpectError(RunOp("aten.constant_pad_nd.default", {x, {-4, 2}}),
              absl::StatusCode::kInvalidArgument, "crop");
  ExpectError(RunOp("aten.constant_pad_nd.default", {x, {-2, -2}}),
              absl::StatusCode::kInvalidArgument, "crop");
  const int64_t max = std::numeric_limits<int64_t>::max();
  ExpectError(RunOp("aten.constant_pad_nd.default", {x, {max, 1}}),
              absl::StatusCode::kInvalidArgument, "argument 'pad'");
  auto pad_value = [](DType dtype, OpArg value) {
    return RunOp("aten.constant_pad_nd.default",
                 {MakeTensor(dtype, {1}, {1}), {1, 0}, std::move(value)});
  };
  ExpectError(pad_value(DType::kInt8, 300), absl::StatusCode::kInvalidArgument,
              "argument 'value'");
  ExpectError(pad_value(DType::kUInt8, -1.0),
              absl::StatusCode::kInvalidArgument, "argument 'value'");
  ExpectError(pad_value(DType::kUInt8, -256),
              absl::StatusCode::kInvalidArgument, "argument 'value'");
  ExpectError(pad_value(DType::kFloat16, 1e5),
              absl::StatusCode::kInvalidArgument, "argument 'value'");
  ExpectError(pad_value(DType::kFloat32, 1e300),
              absl::StatusCode::kInvalidArgument, "argument 'value'");
  ExpectError(pad_value(DType::kInt32, NAN), absl::StatusCode::kInvalidArgument,
              "argument 'value'");
}

}  // namespace
}  // namespace guardjit
