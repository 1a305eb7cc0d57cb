// Tests of index_select, embedding and gather.

#include <cstdint>
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
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;

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

Tensor Index(IntSpan sizes, const std::vector<double>& values,
             DType dtype = DType::kInt64) {
  return MakeTensor(dtype, sizes, values);
}

Tensor Empty(DType dtype, IntSpan sizes) {
  return *Tensor::Empty(dtype, sizes);
}

TEST(IndexingTest, IndexSelectAlongEachDim) {
  Tensor x = IotaTensor({3, 4});
  ExpectTensor(
      RunOp1("aten.index_select.default", {x, 0, Index({3}, {2, 0, 2})}),
      DType::kFloat32, {3, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  Tensor cols = Index({2}, {3, 1}, DType::kInt32);
  ExpectTensor(RunOp1("aten.index_select.default", {x, 1, cols}),
               DType::kFloat32, {3, 2}, {3, 1, 7, 5, 11, 9});
  ExpectTensor(RunOp1("aten.index_select.default", {x, -1, cols}),
               DType::kFloat32, {3, 2}, {3, 1, 7, 5, 11, 9});
  // A 0-dim index keeps the dim, with size 1; so does a literal index.
  ExpectTensor(RunOp1("aten.index_select.default", {x, 0, Index({}, {1})}),
               DType::kFloat32, {1, 4}, {4, 5, 6, 7});
  ExpectTensor(RunOp1("aten.index_select.default", {x, 1, int64_t{2}}),
               DType::kFloat32, {3, 1}, {2, 6, 10});
}

TEST(IndexingTest, IndexSelectNonContiguousOperands) {
  Tensor x = NonContiguousCopy(IotaTensor({3, 4}));
  Tensor base = Index({6}, {2, 9, 0, 9, 1, 9});
  Tensor every_other = base.AsStrided({3}, {2});  // {2, 0, 1}
  ExpectTensor(RunOp1("aten.index_select.default", {x, 1, every_other}),
               DType::kFloat32, {3, 3}, {2, 0, 1, 6, 4, 5, 10, 8, 9});
  Tensor offset = base.AsStrided({2}, {2}, 2);  // {0, 1}
  ExpectTensor(RunOp1("aten.index_select.default", {x, 0, offset}),
               DType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(IndexingTest, IndexSelectEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor x = MakeTensor(dtype, {2, 2}, {0, 1, 1, 0});
    ExpectTensor(
        RunOp1("aten.index_select.default", {x, 1, Index({3}, {1, 1, 0})}),
        dtype, {2, 3}, {1, 1, 0, 0, 0, 1});
  }
}

TEST(IndexingTest, IndexSelectEmptyAndZeroDim) {
  Tensor x = IotaTensor({3, 4});
  ExpectTensor(RunOp1("aten.index_select.default", {x, 0, Index({0}, {})}),
               DType::kFloat32, {0, 4}, {});
  ExpectTensor(RunOp1("aten.index_select.default",
                      {Empty(DType::kInt8, {0, 2}), 0, Index({0}, {})}),
               DType::kInt8, {0, 2}, {});
  ExpectError(RunOp("aten.index_select.default",
                    {Empty(DType::kInt8, {0, 2}), 0, Index({1}, {0})}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  Tensor scalar = MakeTensor(DType::kFloat64, {}, {2.5});
  ExpectTensor(
      RunOp1("aten.index_select.default", {scalar, 0, Index({1}, {0})}),
      DType::kFloat64, {}, {2.5});
  ExpectTensor(
      RunOp1("aten.index_select.default", {scalar, -1, Index({}, {0})}),
      DType::kFloat64, {}, {2.5});
  ExpectError(RunOp("aten.index_select.default", {scalar, 0, Index({1}, {1})}),
              absl::StatusCode::kInvalidArgument, "index 1");
  ExpectError(
      RunOp("aten.index_select.default", {scalar, 0, Index({2}, {0, 0})}),
      absl::StatusCode::kInvalidArgument, "argument 'index'");
}

TEST(IndexingTest, IndexSelectErrors) {
  Tensor x = IotaTensor({3, 4});
  ExpectError(RunOp("aten.index_select.default",
                    {x, 0, Index({1}, {0}, DType::kFloat32)}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(RunOp("aten.index_select.default",
                    {x, 0, Index({1}, {0}, DType::kInt16)}),
              absl::StatusCode::kInvalidArgument, "int16");
  ExpectError(RunOp("aten.index_select.default", {x, 0, Index({1, 1}, {0})}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(RunOp("aten.index_select.default", {x, 0, Index({2}, {1, 3})}),
              absl::StatusCode::kInvalidArgument, "argument 'index': index 3");
  ExpectError(RunOp("aten.index_select.default", {x, 1, Index({1}, {-1})}),
              absl::StatusCode::kInvalidArgument, "index -1");
  ExpectError(RunOp("aten.index_select.default", {x, 2, Index({1}, {0})}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
}

TEST(IndexingTest, EmbeddingLooksUpRows) {
  Tensor weight = IotaTensor({4, 3});
  ExpectTensor(
      RunOp1("aten.embedding.default", {weight, Index({2, 2}, {3, 0, 1, 3})}),
      DType::kFloat32, {2, 2, 3}, {9, 10, 11, 0, 1, 2, 3, 4, 5, 9, 10, 11});
  ExpectTensor(RunOp1("aten.embedding.default",
                      {weight, Index({2}, {2, 2}, DType::kInt32)}),
               DType::kFloat32, {2, 3}, {6, 7, 8, 6, 7, 8});
  ExpectTensor(RunOp1("aten.embedding.default", {weight, Index({}, {1})}),
               DType::kFloat32, {3}, {3, 4, 5});
  // padding_idx only matters for the gradient.
  ExpectTensor(RunOp1("aten.embedding.default", {weight, Index({1}, {0})},
                      {{"padding_idx", 0},
                       {"scale_grad_by_freq", true},
                       {"sparse", false}}),
               DType::kFloat32, {1, 3}, {0, 1, 2});
  ExpectTensor(RunOp1("aten.embedding.default", {weight, Index({2, 0}, {})}),
               DType::kFloat32, {2, 0, 3}, {});
}

TEST(IndexingTest, EmbeddingNonContiguousAndEveryDType) {
  Tensor weight = NonContiguousCopy(IotaTensor({3, 2}));
  Tensor indices = NonContiguousCopy(Index({2, 2}, {2, 1, 0, 2}));
  ExpectTensor(RunOp1("aten.embedding.default", {weight, indices}),
               DType::kFloat32, {2, 2, 2}, {4, 5, 2, 3, 0, 1, 4, 5});
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor w = MakeTensor(dtype, {2, 2}, {1, 0, 0, 1});
    ExpectTensor(RunOp1("aten.embedding.default", {w, Index({3}, {1, 0, 1})}),
                 dtype, {3, 2}, {0, 1, 1, 0, 0, 1});
  }
}

TEST(IndexingTest, EmbeddingErrors) {
  Tensor weight = IotaTensor({4, 3});
  ExpectError(
      RunOp("aten.embedding.default", {IotaTensor({4}), Index({1}, {0})}),
      absl::StatusCode::kInvalidArgument, "argument 'weight'");
  ExpectError(RunOp("aten.embedding.default",
                    {weight, Index({1}, {0}, DType::kFloat64)}),
              absl::StatusCode::kInvalidArgument, "argument 'indices'");
  ExpectError(RunOp("aten.embedding.default", {weight, Index({2}, {0, 4})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'indices': index 4");
  ExpectError(RunOp("aten.embedding.default",
                    {weight, Index({1}, {-1}, DType::kInt32)}),
              absl::StatusCode::kInvalidArgument, "index -1");
}

TEST(IndexingTest, GatherAlongEachDim) {
  Tensor x = IotaTensor({2, 3});
  Tensor idx = Index({2, 2}, {2, 0, 1, 1});
  ExpectTensor(RunOp1("aten.gather.default", {x, 1, idx}), DType::kFloat32,
               {2, 2}, {2, 0, 4, 4});
  ExpectTensor(
      RunOp1("aten.gather.default", {x, -1, idx}, {{"sparse_grad", false}}),
      DType::kFloat32, {2, 2}, {2, 0, 4, 4});
  ExpectTensor(RunOp1("aten.gather.default",
                      {x, 0, Index({1, 3}, {1, 0, 1}, DType::kInt32)}),
               DType::kFloat32, {1, 3}, {3, 1, 5});
  // The index may be longer than self along `dim`.
  ExpectTensor(
      RunOp1("aten.gather.default", {x, 1, Index({1, 4}, {2, 2, 1, 0})}),
      DType::kFloat32, {1, 4}, {2, 2, 1, 0});
}

TEST(IndexingTest, GatherNonContiguousAndEveryDType) {
  Tensor x = NonContiguousCopy(IotaTensor({3, 3}));
  Tensor idx = NonContiguousCopy(Index({2, 3}, {2, 1, 0, 0, 2, 1}));
  ExpectTensor(RunOp1("aten.gather.default", {x, 0, idx}), DType::kFloat32,
               {2, 3}, {6, 4, 2, 0, 7, 5});
  Tensor base = IotaTensor({4, 5});
  Tensor window = base.AsStrided({2, 3}, {5, 1}, 6);  // {6,7,8},{11,12,13}
  ExpectTensor(
      RunOp1("aten.gather.default", {window, 1, Index({2, 1}, {2, 0})}),
      DType::kFloat32, {2, 1}, {8, 11});
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor t = MakeTensor(dtype, {2, 2}, {1, 0, 0, 1});
    ExpectTensor(
        RunOp1("aten.gather.default", {t, 1, Index({2, 2}, {1, 1, 1, 0})}),
        dtype, {2, 2}, {0, 0, 1, 0});
  }
}

TEST(IndexingTest, GatherZeroDimAndEmpty) {
  Tensor scalar = MakeTensor(DType::kInt16, {}, {7});
  ExpectTensor(RunOp1("aten.gather.default", {scalar, 0, Index({}, {0})}),
               DType::kInt16, {}, {7});
  ExpectTensor(
      RunOp1("aten.gather.default", {scalar, -1, Index({3}, {0, 0, 0})}),
      DType::kInt16, {3}, {7, 7, 7});
  ExpectError(RunOp("aten.gather.default", {scalar, 0, Index({1}, {1})}),
              absl::StatusCode::kInvalidArgument, "index 1");
  // PyTorch checks neither the dtype nor the shape of an empty index.
  Tensor x = IotaTensor({2, 2});
  ExpectTensor(
      RunOp1("aten.gather.default", {x, 0, Empty(DType::kFloat32, {0})}),
      DType::kFloat32, {0}, {});
  ExpectTensor(
      RunOp1("aten.gather.default", {x, 1, Empty(DType::kInt64, {0, 5})}),
      DType::kFloat32, {0, 5}, {});
  ExpectError(RunOp("aten.gather.default",
                    {Empty(DType::kFloat32, {2, 0}), 1, Index({2, 1}, {0, 0})}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
}

TEST(IndexingTest, GatherErrors) {
  Tensor x = IotaTensor({2, 3});
  ExpectError(
      RunOp("aten.gather.default", {x, 1, Index({1, 1}, {0}, DType::kUInt8)}),
      absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(RunOp("aten.gather.default", {x, 1, Index({2}, {0, 0})}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(RunOp("aten.gather.default", {x, 1, Index({3, 1}, {0, 0, 0})}),
              absl::StatusCode::kInvalidArgument, "exceeds");
  ExpectError(RunOp("aten.gather.default", {x, 1, Index({1, 2}, {0, 3})}),
              absl::StatusCode::kInvalidArgument, "argument 'index': index 3");
  ExpectError(
      RunOp("aten.gather.default", {x, 0, Index({1, 1}, {-1}, DType::kInt32)}),
      absl::StatusCode::kInvalidArgument, "index -1");
  ExpectError(RunOp("aten.gather.default", {x, -3, Index({1, 1}, {0})}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
}

}  // namespace
}  // namespace guardjit
