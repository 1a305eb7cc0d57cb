// Shape rules of the scatter ops and index_put (core/ops/scatter.cc): ATen's
// scatter_shape_check and dtype checks, scatter_reduce's reductions, and
// index_put's values broadcast to the indexing result, each naming its
// argument. Values: tests/runtime/kernels/scatter_test.cc.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

TensorMeta F32(Shape sizes) { return TensorMeta(DType::kFloat32, sizes); }
TensorMeta I64(Shape sizes) { return TensorMeta(DType::kInt64, sizes); }

// scatter.src(x0, dim, x1, x2).
absl::StatusOr<std::vector<TensorMeta>> Scatter(const TensorMeta& self,
                                                int64_t dim,
                                                const TensorMeta& index,
                                                const TensorMeta& src) {
  return OpMetas(
      "aten.scatter.src", {self, index, src},
      {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1"), Arg::Ref("x2")});
}

TEST(ScatterMetaTest, ScatterChecksTheIndexAgainstSelfAndSrc) {
  auto out = Scatter(F32({4, 5}), 0, I64({6, 2}), F32({6, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 5})) << "self's shape";
  ExpectError(Scatter(F32({4, 5}), 0, I64({6, 2}), F32({5, 3})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': Expected index [6, 2] to be no larger than "
              "self [4, 5] apart from dimension 0 and to be no larger size "
              "than src [5, 3]");
  ExpectError(Scatter(F32({4, 5}), 0, I64({2, 6}), F32({6, 6})),
              absl::StatusCode::kInvalidArgument, "apart from dimension 0");
  ExpectError(Scatter(F32({4, 5}), 0, TensorMeta(DType::kInt16, Shape{1, 1}),
                      F32({1, 1})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': scatter(): Expected dtype int32/int64 for "
              "index, got int16");
  ExpectError(Scatter(F32({4, 5}), 0, I64({1, 1}),
                      TensorMeta(DType::kFloat64, Shape{1, 1})),
              absl::StatusCode::kInvalidArgument,
              "argument 'src': scatter(): Expected self.dtype to be equal to "
              "src.dtype (self float32, src float64)");
  ExpectError(Scatter(F32({4, 5}), 0, I64({1}), F32({1, 1})),
              absl::StatusCode::kInvalidArgument,
              "argument 'index': Index tensor must have the same number of "
              "dimensions as self tensor (2), got 1");
  // An empty index is not checked further.
  EXPECT_TRUE(Scatter(F32({4, 5}), 0, I64({0}), F32({1, 1, 1})).ok());
}

TEST(ScatterMetaTest, ScatterReduceNamesItsReductions) {
  auto reduce = [](const std::string& how) {
    return OpMetas("aten.scatter_reduce.two", {F32({4}), I64({2}), F32({2})},
                   {Arg::Ref("x0"), Arg::Int(0), Arg::Ref("x1"), Arg::Ref("x2"),
                    Arg::String(how)});
  };
  for (const char* how : {"sum", "prod", "mean", "amax", "amin"}) {
    EXPECT_TRUE(reduce(how).ok()) << how;
  }
  ExpectError(reduce("max"), absl::StatusCode::kInvalidArgument,
              "argument 'reduce': reduce argument must be either sum, prod, "
              "mean, amax or amin, got max");
}

TEST(ScatterMetaTest, IndexPutValuesBroadcastToTheIndexingResult) {
  auto put = [](const TensorMeta& values) {
    // self[i, :] = values with i [2] over self [4, 3]: result [2, 3].
    return OpMetas(
        "aten.index_put.default", {F32({4, 3}), I64({2}), values},
        {Arg::Ref("x0"), Arg::OfList({Arg::Ref("x1")}), Arg::Ref("x2")});
  };
  for (const Shape& ok : {Shape{2, 3}, Shape{3}, Shape{1}, Shape{}}) {
    auto out = put(F32(ok));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{4, 3}));
  }
  ExpectError(put(F32({1, 2, 3})), absl::StatusCode::kInvalidArgument,
              "argument 'values': shape mismatch: value tensor of shape "
              "[1, 2, 3] cannot be broadcast to indexing result of shape "
              "[2, 3]");
  ExpectError(put(F32({4})), absl::StatusCode::kInvalidArgument,
              "cannot be broadcast to indexing result of shape [2, 3]");
  ExpectError(put(TensorMeta(DType::kFloat16, Shape{3})),
              absl::StatusCode::kInvalidArgument,
              "argument 'values': Index put requires the source and "
              "destination dtypes match, got float32 for the destination and "
              "float16 for the source");
}

}  // namespace
}  // namespace guardjit::testing
