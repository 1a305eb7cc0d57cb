#include "jit/jit_compiler.h"

#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::OpGraph;
using testing::RandomTensor;

TEST(JitCompilerTest, AddMatchesEager) {
  auto graph = OpGraph("aten.add.Tensor", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {4, 5}, 1),
                                RandomTensor(DType::kFloat32, {5}, 2)});
}

TEST(JitCompilerTest, SoftmaxMatchesEager) {
  auto graph = OpGraph("aten._softmax.default",
                       {Arg::Ref("x0"), Arg::Int(-1), Arg::Bool(false)}, 1);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {7, 33}, 3)});
}

}  // namespace
}  // namespace guardjit
