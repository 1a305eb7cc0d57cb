// reflection_pad{1,2,3}d and replication_pad{2,3}d's reference kernels
// (runtime/kernels/padding.cc): values by hand (the index formulas worked
// through) and the argument errors ATen raises.

#include <cstdint>
#include <numeric>
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
using ::guardjit::testing::Iota;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;

TEST(PaddingTest, ReflectionMirrorsWithoutTheEdge) {
  // i - 2 for i in 0..6 = -2..4 mirrors to 2 1 0 1 2 3 2.
  ExpectTensor(RunOp1("aten.reflection_pad1d.default", {Iota({1, 4}), {2, 1}}),
               DType::kFloat32, {1, 7}, {2, 1, 0, 1, 2, 3, 2});
  // A negative pad crops.
  ExpectTensor(RunOp1("aten.reflection_pad1d.default", {Iota({1, 4}), {-1, 2}}),
               DType::kFloat32, {1, 5}, {1, 2, 3, 2, 1});
  ExpectTensor(RunOp1("aten.reflection_pad2d.default",
                      {NonContiguousCopy(Iota({1, 3, 3})), {1, 1, 1, 1}}),
               DType::kFloat32, {1, 5, 5},
               {4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4,
                5, 4, 7, 6, 7, 8, 7, 4, 3, 4, 5, 4});
  ExpectTensor(RunOp1("aten.reflection_pad3d.default",
                      {Iota({1, 2, 2, 2}, DType::kInt64), {1, 0, 0, 0, 0, 1}}),
               DType::kInt64, {1, 3, 2, 3},
               {1, 0, 1, 3, 2, 3, 5, 4, 5, 7, 6, 7, 1, 0, 1, 3, 2, 3});
  // An empty batch is allowed.
  ExpectTensor(
      RunOp1("aten.reflection_pad1d.default", {Iota({0, 2, 3}), {1, 1}}),
      DType::kFloat32, {0, 2, 5}, {});
}

TEST(PaddingTest, ReplicationClampsToTheEdge) {
  ExpectTensor(
      RunOp1("aten.replication_pad2d.default", {Iota({1, 2, 2}), {1, 0, 0, 1}}),
      DType::kFloat32, {1, 3, 3}, {0, 0, 1, 2, 2, 3, 2, 2, 3});
  ExpectTensor(RunOp1("aten.replication_pad3d.default",
                      {Iota({2, 1, 1, 2}), {0, 1, 0, 0, 1, 0}}),
               DType::kFloat32, {2, 2, 1, 3},
               {0, 1, 1, 0, 1, 1, 2, 3, 3, 2, 3, 3});
  // Pads wider than the input are fine for replication.
  ExpectTensor(
      RunOp1("aten.replication_pad2d.default", {Iota({1, 1, 1}), {2, 2, 0, 0}}),
      DType::kFloat32, {1, 1, 5}, {0, 0, 0, 0, 0});
}

TEST(PaddingTest, Errors) {
  ExpectError(RunOp("aten.reflection_pad1d.default", {Iota({2, 3, 4}), {4, 0}}),
              absl::StatusCode::kInvalidArgument,
              "Padding size should be less than");
  ExpectError(RunOp("aten.reflection_pad1d.default", {Iota({4}), {1, 1}}),
              absl::StatusCode::kInvalidArgument, "Expected 2D or 3D");
  ExpectError(RunOp("aten.reflection_pad1d.default", {Iota({2, 0}), {1, 1}}),
              absl::StatusCode::kInvalidArgument, "non-zero dimensions");
  ExpectError(RunOp("aten.replication_pad2d.default",
                    {Iota({2, 3, 4}), {-2, -2, 0, 0}}),
              absl::StatusCode::kInvalidArgument, "must be >= 1");
  ExpectError(RunOp("aten.replication_pad3d.default",
                    {Iota({2, 3, 4}), {1, 1, 1, 1, 1, 1}}),
              absl::StatusCode::kInvalidArgument, "Expected 4D or 5D");
  ExpectError(RunOp("aten.replication_pad2d.default",
                    {Iota({2, 2, 3}, DType::kBool), {1, 1, 1, 1}}),
              absl::StatusCode::kInvalidArgument, "not implemented for bool");
}

}  // namespace
}  // namespace guardjit
