// Tests of the view ops: results, strides, and that the results really are
// views of their inputs (same memory, at the expected element offset).

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

Shape Strides(const Tensor& t) {
  return Shape(t.strides().begin(), t.strides().end());
}

// `view` uses `base`'s memory, starting `offset` elements after base's start.
void ExpectViewOf(const Tensor& view, const Tensor& base, int64_t offset) {
  EXPECT_EQ(view.data(),
            static_cast<char*>(base.data()) + offset * base.item_size());
}

TEST(ViewTest, InfersSizeAndAliasesInput) {
  Tensor x = IotaTensor({2, 3, 4});
  Tensor y = RunOp1("aten.view.default", {x, {4, -1}});
  ExpectTensor(y, DType::kFloat32, {4, 6}, Iota(24));
  EXPECT_EQ(Strides(y), (Shape{6, 1}));
  ExpectViewOf(y, x, 0);
  Tensor z = RunOp1("aten.view.default", {x, {24}});
  ExpectTensor(z, DType::kFloat32, {24}, Iota(24));
  ExpectViewOf(z, x, 0);
}

TEST(ViewTest, AliasIsTheWholeTensorAsAView) {
  Tensor x = IotaTensor({2, 3, 4});
  Tensor y = RunOp1("aten.alias.default", {x});
  ExpectTensor(y, DType::kFloat32, {2, 3, 4}, Iota(24));
  ExpectViewOf(y, x, 0);
  // Strides and offset of a non-contiguous input are kept.
  Tensor t = x.AsStrided({3, 2}, {4, 12}, 1);
  Tensor z = RunOp1("aten.alias.default", {t});
  EXPECT_EQ(Strides(z), (Shape{4, 12}));
  ExpectViewOf(z, x, 1);
}

TEST(ViewTest, EveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2, 3}, {1, 0, 1, 1, 0, 1});
    Tensor y = RunOp1("aten.view.default", {x, {3, 1, 2}});
    ExpectTensor(y, dtype, {3, 1, 2}, {1, 0, 1, 1, 0, 1});
    ExpectViewOf(y, x, 0);
  }
}

TEST(ViewTest, ViewOpsEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2, 3}, {1, 0, 0, 1, 1, 0});
    Tensor t = RunOp1("aten.permute.default", {x, {1, 0}});
    ExpectTensor(t, dtype, {3, 2}, {1, 1, 0, 1, 0, 0});
    Tensor s = RunOp1("aten.slice.Tensor", {t, 0, 1});
    ExpectTensor(s, dtype, {2, 2}, {0, 1, 0, 0});
    Tensor e = RunOp1("aten.expand.default",
                      {RunOp1("aten.select.int", {s, 1, 1}), {2, 2}});
    ExpectTensor(e, dtype, {2, 2}, {1, 0, 1, 0});
    Tensor u = RunOp1("aten.squeeze.default",
                      {RunOp1("aten.unsqueeze.default", {e, 0})});
    ExpectTensor(u, dtype, {2, 2}, {1, 0, 1, 0});
    ExpectViewOf(u, x, 3 + 1);
  }
}

// A number literal in the `self` slot becomes a 0-dim tensor of its Python
// type, which views like any other.
TEST(ViewTest, WrappedNumberInput) {
  ExpectTensor(RunOp1("aten.unsqueeze.default", {int64_t{3}, 0}), DType::kInt64,
               {1}, {3});
  ExpectTensor(RunOp1("aten.expand.default", {2.5, {2}}), DType::kFloat64, {2},
               {2.5, 2.5});
}

TEST(ViewTest, ZeroDimAndEmpty) {
  Tensor scalar = MakeTensor(DType::kInt64, {}, {7});
  Tensor y = RunOp1("aten.view.default", {scalar, {1, -1}});
  ExpectTensor(y, DType::kInt64, {1, 1}, {7});
  EXPECT_EQ(Strides(y), (Shape{1, 1}));
  Tensor back = RunOp1("aten.view.default", {y, std::vector<int64_t>{}});
  ExpectTensor(back, DType::kInt64, {}, {7});
  ExpectViewOf(back, scalar, 0);

  Tensor empty = *Tensor::Empty(DType::kFloat32, {0, 3});
  ExpectTensor(RunOp1("aten.view.default", {empty, {3, 0}}), DType::kFloat32,
               {3, 0}, {});
  ExpectTensor(RunOp1("aten.view.default", {empty, {-1}}), DType::kFloat32, {0},
               {});
  ExpectError(RunOp("aten.view.default", {empty, {0, -1}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
}

// The strides PyTorch's computeStride gives, on inputs that are not
// contiguous but still viewable.
TEST(ViewTest, NonContiguousInputsThatCanBeViewed) {
  // Columns 0..3 of a [4, 6] tensor: rows are one chunk each.
  Tensor base = IotaTensor({4, 6});
  Tensor cols = base.AsStrided({4, 4}, {6, 1}, 1);
  Tensor y = RunOp1("aten.view.default", {cols, {4, 2, 2}});
  EXPECT_EQ(Strides(y), (Shape{6, 2, 1}));
  ExpectViewOf(y, base, 1);
  ExpectTensor(y, DType::kFloat32, {4, 2, 2},
               {1, 2, 3, 4, 7, 8, 9, 10, 13, 14, 15, 16, 19, 20, 21, 22});
  Tensor z = RunOp1("aten.view.default", {cols, {2, 2, 4}});
  EXPECT_EQ(Strides(z), (Shape{12, 6, 1}));

  // A transposed [3, 4]: each dim is its own chunk and may be split.
  Tensor t = IotaTensor({3, 4}).AsStrided({4, 3}, {1, 4});
  Tensor split = RunOp1("aten.view.default", {t, {2, 2, 3}});
  EXPECT_EQ(Strides(split), (Shape{2, 1, 4}));
  ExpectTensor(split, DType::kFloat32, {2, 2, 3}, ToDoubles(t));
  Tensor unit = RunOp1("aten.view.default", {t, {4, 1, 3}});
  EXPECT_EQ(Strides(unit)[0], 1);
  EXPECT_EQ(Strides(unit)[2], 4);

  // An expanded tensor keeps its stride-0 dims.
  Tensor column = IotaTensor({3, 1});
  Tensor expanded = column.AsStrided({3, 4}, {1, 0});
  Tensor e = RunOp1("aten.view.default", {expanded, {3, 2, 2}});
  EXPECT_EQ(Strides(e), (Shape{1, 0, 0}));
  ExpectTensor(e, DType::kFloat32, {3, 2, 2},
               {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2});
}

TEST(ViewTest, NonContiguousInputsThatCannotBeViewed) {
  Tensor t = IotaTensor({3, 4}).AsStrided({4, 3}, {1, 4});
  ExpectError(RunOp("aten.view.default", {t, {12}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  ExpectError(RunOp("aten.view.default", {t, {6, 2}}),
              absl::StatusCode::kInvalidArgument, "reshape");
  Tensor padded = NonContiguousCopy(IotaTensor({2, 3}));
  ExpectError(RunOp("aten.view.default", {padded, {-1}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  Tensor expanded = IotaTensor({3, 1}).AsStrided({3, 4}, {1, 0});
  ExpectError(RunOp("aten.view.default", {expanded, {12}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
}

TEST(ViewTest, BadSizes) {
  Tensor x = IotaTensor({2, 3});
  ExpectError(RunOp("aten.view.default", {x, {4, 2}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  ExpectError(RunOp("aten.view.default", {x, {4, -1}}),
              absl::StatusCode::kInvalidArgument,
              "invalid for input of size 6");
  ExpectError(RunOp("aten.view.default", {x, {-1, -1}}),
              absl::StatusCode::kInvalidArgument, "only one dimension");
  ExpectError(RunOp("aten.view.default", {x, {-2, -3}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  const int64_t big = int64_t{1} << 40;
  ExpectError(RunOp("aten.view.default", {x, {big, big, 0, -1}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  ExpectError(RunOp("aten.view.default", {x, {big, big, 6}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
}

TEST(ViewTest, UnsafeViewViewsOrCopies) {
  Tensor x = IotaTensor({2, 6});
  Tensor y = RunOp1("aten._unsafe_view.default", {x, {3, 4}});
  ExpectViewOf(y, x, 0);
  ExpectTensor(y, DType::kFloat32, {3, 4}, Iota(12));
  // Not viewable: reshape's copy, with the transposed values.
  Tensor t = IotaTensor({3, 4}).AsStrided({4, 3}, {1, 4});
  Tensor r = RunOp1("aten._unsafe_view.default", {t, {-1}});
  EXPECT_NE(r.storage(), t.storage());
  ExpectTensor(r, DType::kFloat32, {12}, ToDoubles(t));
  EXPECT_TRUE(r.is_contiguous());
  ExpectError(RunOp("aten._unsafe_view.default", {t, {5}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
}

TEST(ViewTest, PermuteReordersDims) {
  Tensor x = IotaTensor({2, 3, 4});
  Tensor y = RunOp1("aten.permute.default", {x, {2, 0, -2}});
  EXPECT_EQ(Strides(y), (Shape{1, 12, 4}));
  ExpectViewOf(y, x, 0);
  std::vector<double> expected;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) expected.push_back(i * 12 + j * 4 + k);
    }
  }
  ExpectTensor(y, DType::kFloat32, {4, 2, 3}, expected);
  // Permuting a non-contiguous input composes the strides.
  Tensor nc = NonContiguousCopy(IotaTensor({2, 3}));
  Tensor t = RunOp1("aten.permute.default", {nc, {1, 0}});
  ExpectTensor(t, DType::kFloat32, {3, 2}, {0, 3, 1, 4, 2, 5});
  ExpectViewOf(t, nc, 0);
  Tensor scalar = MakeTensor(DType::kBool, {}, {1});
  ExpectTensor(RunOp1("aten.permute.default", {scalar, std::vector<int64_t>{}}),
               DType::kBool, {}, {1});
}

TEST(ViewTest, PermuteErrors) {
  Tensor x = IotaTensor({2, 3});
  ExpectError(RunOp("aten.permute.default", {x, {0}}),
              absl::StatusCode::kInvalidArgument, "argument 'dims'");
  ExpectError(RunOp("aten.permute.default", {x, {0, -2}}),
              absl::StatusCode::kInvalidArgument, "repeated");
  ExpectError(RunOp("aten.permute.default", {x, {0, 2}}),
              absl::StatusCode::kInvalidArgument, "argument 'dims'");
}

TEST(ViewTest, ExpandBroadcastsWithZeroStrides) {
  Tensor x = MakeTensor(DType::kInt32, {3, 1}, {1, 2, 3});
  Tensor y = RunOp1("aten.expand.default", {x, {2, -1, 4}});
  EXPECT_EQ(Strides(y), (Shape{0, 1, 0}));
  ExpectViewOf(y, x, 0);
  std::vector<double> expected;
  for (int b = 0; b < 2; ++b) {
    for (double v : {1, 2, 3}) expected.insert(expected.end(), 4, v);
  }
  ExpectTensor(y, DType::kInt32, {2, 3, 4}, expected);
  // A new leading dim of size 1 and implicit=True change nothing else.
  Tensor z =
      RunOp1("aten.expand.default", {x, {1, 3, 2}}, {{"implicit", true}});
  ExpectTensor(z, DType::kInt32, {1, 3, 2}, {1, 1, 2, 2, 3, 3});
  // A size-1 dim may expand to 0.
  ExpectTensor(RunOp1("aten.expand.default", {x, {3, 0}}), DType::kInt32,
               {3, 0}, {});
  Tensor scalar = MakeTensor(DType::kFloat16, {}, {2.5});
  Tensor s = RunOp1("aten.expand.default", {scalar, {2, 2}});
  EXPECT_EQ(Strides(s), (Shape{0, 0}));
  ExpectTensor(s, DType::kFloat16, {2, 2}, {2.5, 2.5, 2.5, 2.5});
  // An offset, non-contiguous input keeps its strides on kept dims.
  Tensor nc = NonContiguousCopy(MakeTensor(DType::kInt32, {1, 3}, {4, 5, 6}));
  Tensor e = RunOp1("aten.expand.default", {nc, {2, 3}});
  EXPECT_EQ(Strides(e)[0], 0);
  EXPECT_EQ(Strides(e)[1], nc.stride(1));
  ExpectViewOf(e, nc, 0);
  ExpectTensor(e, DType::kInt32, {2, 3}, {4, 5, 6, 4, 5, 6});
}

TEST(ViewTest, ExpandErrors) {
  Tensor x = IotaTensor({3, 2});
  ExpectError(RunOp("aten.expand.default", {x, {3, 4}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  ExpectError(RunOp("aten.expand.default", {x, {2}}),
              absl::StatusCode::kInvalidArgument, "number of sizes");
  ExpectError(RunOp("aten.expand.default", {x, {-1, 3, 2}}),
              absl::StatusCode::kInvalidArgument, "leading, non-existing");
  ExpectError(RunOp("aten.expand.default", {IotaTensor({1}), {-2}}),
              absl::StatusCode::kInvalidArgument, "argument 'size'");
  ExpectError(
      RunOp("aten.expand.default", {MakeTensor(DType::kInt64, {}, {1}), {-1}}),
      absl::StatusCode::kInvalidArgument, "argument 'size'");
}

TEST(ViewTest, UnsqueezeInsertsUnitDim) {
  Tensor x = IotaTensor({2, 3});
  Tensor a = RunOp1("aten.unsqueeze.default", {x, 0});
  EXPECT_EQ(Strides(a), (Shape{6, 3, 1}));
  ExpectTensor(a, DType::kFloat32, {1, 2, 3}, Iota(6));
  Tensor b = RunOp1("aten.unsqueeze.default", {x, -1});
  EXPECT_EQ(Strides(b), (Shape{3, 1, 1}));
  ExpectTensor(b, DType::kFloat32, {2, 3, 1}, Iota(6));
  Tensor c = RunOp1("aten.unsqueeze.default", {x, -2});
  EXPECT_EQ(Strides(c), (Shape{3, 3, 1}));
  ExpectTensor(c, DType::kFloat32, {2, 1, 3}, Iota(6));
  ExpectViewOf(c, x, 0);
  Tensor scalar = MakeTensor(DType::kUInt8, {}, {9});
  ExpectTensor(RunOp1("aten.unsqueeze.default", {scalar, -1}), DType::kUInt8,
               {1}, {9});
  ExpectError(RunOp("aten.unsqueeze.default", {x, 3}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(RunOp("aten.unsqueeze.default", {x, -4}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
}

TEST(ViewTest, SqueezeOverloads) {
  Tensor x = IotaTensor({1, 3, 1, 2});
  Tensor all = RunOp1("aten.squeeze.default", {x});
  ExpectTensor(all, DType::kFloat32, {3, 2}, Iota(6));
  ExpectViewOf(all, x, 0);
  ExpectTensor(RunOp1("aten.squeeze.dim", {x, -2}), DType::kFloat32, {1, 3, 2},
               Iota(6));
  // A dim whose size is not 1 is left alone.
  ExpectTensor(RunOp1("aten.squeeze.dim", {x, 1}), DType::kFloat32,
               {1, 3, 1, 2}, Iota(6));
  ExpectTensor(RunOp1("aten.squeeze.dims", {x, {0, 1, -2}}), DType::kFloat32,
               {3, 2}, Iota(6));
  ExpectTensor(RunOp1("aten.squeeze.dims", {x, std::vector<int64_t>{}}),
               DType::kFloat32, {1, 3, 1, 2}, Iota(6));
  Tensor scalar = MakeTensor(DType::kInt16, {}, {4});
  ExpectTensor(RunOp1("aten.squeeze.dim", {scalar, -1}), DType::kInt16, {},
               {4});
  ExpectTensor(RunOp1("aten.squeeze.default", {scalar}), DType::kInt16, {},
               {4});
  // Squeezing keeps the strides of the kept dims of an offset input.
  Tensor base = IotaTensor({4, 5});
  Tensor col = base.AsStrided({4, 1}, {5, 1}, 2);
  Tensor s = RunOp1("aten.squeeze.dim", {col, 1});
  EXPECT_EQ(Strides(s), (Shape{5}));
  ExpectViewOf(s, base, 2);
  ExpectTensor(s, DType::kFloat32, {4}, {2, 7, 12, 17});
  ExpectError(RunOp("aten.squeeze.dim", {x, 4}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(RunOp("aten.squeeze.dims", {x, {0, -4}}),
              absl::StatusCode::kInvalidArgument, "multiple times");
}

TEST(ViewTest, SliceClampsLikePython) {
  Tensor x = IotaTensor({10});
  auto slice = [&](OpArg start, OpArg end, int64_t step) {
    return RunOp1("aten.slice.Tensor", {x, 0, start, end, step});
  };
  ExpectTensor(slice(2, 5, 1), DType::kFloat32, {3}, {2, 3, 4});
  ExpectTensor(slice(-3, Arg::None(), 1), DType::kFloat32, {3}, {7, 8, 9});
  ExpectTensor(slice(Arg::None(), -7, 1), DType::kFloat32, {3}, {0, 1, 2});
  ExpectTensor(slice(1, 100, 3), DType::kFloat32, {3}, {1, 4, 7});
  ExpectTensor(slice(-100, 2, 1), DType::kFloat32, {2}, {0, 1});
  ExpectTensor(slice(7, 3, 1), DType::kFloat32, {0}, {});
  ExpectTensor(slice(12, 20, 1), DType::kFloat32, {0}, {});
  ExpectTensor(slice(0, std::numeric_limits<int64_t>::max(), 4),
               DType::kFloat32, {3}, {0, 4, 8});
  ExpectTensor(slice(std::numeric_limits<int64_t>::max(), 2, 1),
               DType::kFloat32, {2}, {0, 1});
  ExpectTensor(slice(0, 10, std::numeric_limits<int64_t>::max()),
               DType::kFloat32, {1}, {0});
  Tensor s = slice(3, 9, 2);
  EXPECT_EQ(Strides(s), (Shape{2}));
  ExpectViewOf(s, x, 3);
  // Defaults: dim 0, whole range, step 1.
  ExpectTensor(RunOp1("aten.slice.Tensor", {x}), DType::kFloat32, {10},
               Iota(10));
}

TEST(ViewTest, SliceNonContiguousAndErrors) {
  Tensor nc = NonContiguousCopy(IotaTensor({3, 4}));
  Tensor s = RunOp1("aten.slice.Tensor", {nc, -1, 1, 3});
  ExpectTensor(s, DType::kFloat32, {3, 2}, {1, 2, 5, 6, 9, 10});
  ExpectViewOf(s, nc, nc.stride(1));
  ExpectError(RunOp("aten.slice.Tensor", {nc, 0, 0, 2, 0}),
              absl::StatusCode::kInvalidArgument, "argument 'step'");
  ExpectError(RunOp("aten.slice.Tensor", {nc, 0, 0, 2, -1}),
              absl::StatusCode::kInvalidArgument, "argument 'step'");
  ExpectError(RunOp("aten.slice.Tensor", {nc, 2}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(RunOp("aten.slice.Tensor", {MakeTensor(DType::kInt8, {}, {1})}),
              absl::StatusCode::kInvalidArgument, "argument 'self'");
}

TEST(ViewTest, SelectDropsDim) {
  Tensor x = IotaTensor({3, 4});
  Tensor row = RunOp1("aten.select.int", {x, 0, -1});
  ExpectTensor(row, DType::kFloat32, {4}, {8, 9, 10, 11});
  ExpectViewOf(row, x, 8);
  Tensor col = RunOp1("aten.select.int", {x, -1, 2});
  ExpectTensor(col, DType::kFloat32, {3}, {2, 6, 10});
  EXPECT_EQ(Strides(col), (Shape{4}));
  ExpectViewOf(col, x, 2);
  Tensor nc = NonContiguousCopy(x);
  ExpectTensor(RunOp1("aten.select.int", {nc, 1, 1}), DType::kFloat32, {3},
               {1, 5, 9});
  Tensor v = MakeTensor(DType::kBFloat16, {2}, {1.5, -2});
  ExpectTensor(RunOp1("aten.select.int", {v, 0, 1}), DType::kBFloat16, {},
               {-2});
  ExpectError(RunOp("aten.select.int", {x, 0, 3}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(RunOp("aten.select.int", {x, 1, -5}),
              absl::StatusCode::kInvalidArgument, "index -5");
  ExpectError(RunOp("aten.select.int", {x, 2, 0}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(
      RunOp("aten.select.int", {*Tensor::Empty(DType::kFloat32, {0}), 0, 0}),
      absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(
      RunOp("aten.select.int", {MakeTensor(DType::kInt8, {}, {1}), 0, 0}),
      absl::StatusCode::kInvalidArgument, "argument 'self'");
}

// Each op of a chain works on the previous view's strides and offset, and
// the end result still points into the first input.
TEST(ViewTest, ChainsOfViewsStayViews) {
  Tensor x = IotaTensor({4, 5, 6});
  Tensor a = RunOp1("aten.slice.Tensor", {x, 1, 1, 5, 2});    // [4, 2, 6]
  Tensor b = RunOp1("aten.permute.default", {a, {2, 0, 1}});  // [6, 4, 2]
  Tensor c = RunOp1("aten.select.int", {b, 0, 3});            // [4, 2]
  Tensor d = RunOp1("aten.unsqueeze.default", {c, 1});        // [4, 1, 2]
  Tensor e = RunOp1("aten.expand.default", {d, {4, 3, 2}});
  Tensor f = RunOp1("aten.view.default", {e, {2, 2, 3, 2}});
  EXPECT_EQ(Strides(f), (Shape{60, 30, 0, 12}));
  ExpectViewOf(f, x, 6 + 3);
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i) {
    for (int r = 0; r < 3; ++r) {
      for (int j : {1, 3}) expected.push_back(i * 30 + j * 6 + 3);
    }
  }
  ExpectTensor(f, DType::kFloat32, {2, 2, 3, 2}, expected);
}

}  // namespace
}  // namespace guardjit
