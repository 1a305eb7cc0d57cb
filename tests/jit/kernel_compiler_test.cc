#include "jit/kernel_compiler.h"

#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// out[i] = in[i] * scale over 4 elements.
Kernel Scale(double scale) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  k.outer = {{0, IndexExpr::Const(4)}};
  Stage store;
  store.buffer = 1;
  store.index = IndexExpr::Var(0);
  store.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat64, IndexExpr::Var(0)),
      ValueExpr::Const(DType::kFloat64, scale));
  k.stages = {store};
  return k;
}

TEST(KernelCompilerTest, IdenticalKernelsCompileOnceDifferentOnesDoNot) {
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const Kernel a = Scale(2.0);
  const Kernel a_again = Scale(2.0);
  const Kernel b = Scale(2.0 + 1e-12);
  // Two copies of one kernel in one batch compile once.
  auto first = (*compiler)->Compile({&a, &a_again});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0], (*first)[1]);
  EXPECT_EQ((*compiler)->compiled(), 1);
  auto second = (*compiler)->Compile({&a_again, &b});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)[0], (*first)[0]);
  EXPECT_NE((*second)[1], (*first)[0]);
  EXPECT_EQ((*compiler)->compiled(), 2);
  EXPECT_EQ((*compiler)->cache_hits(), 2);
  std::vector<double> in = {1, 2, 3, 4}, out(4);
  void* buffers[] = {in.data(), out.data()};
  (*second)[1](buffers, nullptr, 0, 4);
  EXPECT_EQ(out[3], 4 * (2.0 + 1e-12));
  EXPECT_NE((*compiler)->target().find("x86_64"), std::string::npos);
}

}  // namespace
}  // namespace guardjit
