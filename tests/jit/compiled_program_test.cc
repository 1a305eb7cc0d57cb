// CompiledProgram's run contract: outputs written straight into the caller's
// destinations where nothing can fail after them, copies elsewhere.

#include <memory>
#include <vector>

#include "core/run_context.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::OpGraph;
using testing::RandomTensor;
using testing::ToDoubles;

std::unique_ptr<Executable> CompileFor(std::shared_ptr<const Graph> graph,
                                       const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto executable = testing::SharedJit().Compile(std::move(graph), spec);
  EXPECT_TRUE(executable.ok()) << executable.status();
  return executable.ok() ? *std::move(executable) : nullptr;
}

TEST(CompiledProgramTest, KernelOutputsAreWrittenIntoContiguousDestinations) {
  auto graph = OpGraph("aten.exp.default", {Arg::Ref("x0")}, 1);
  const Tensor x = RandomTensor(DType::kFloat32, {64, 33}, 1);
  auto executable = CompileFor(graph, {x});
  ASSERT_NE(executable, nullptr);
  const std::vector<double> expected = ToDoubles((*executable->Run({x}))[0]);

  Tensor dest = *Tensor::Zeros(DType::kFloat32, {64, 33});
  const Tensor* destinations[] = {&dest};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = executable->Run(ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data(), dest.data());  // in place, no copy
  EXPECT_EQ(ToDoubles(dest), expected);

  // A transposed destination is not the kernel's layout: a tensor to copy.
  Tensor base = *Tensor::Zeros(DType::kFloat32, {33, 64});
  Tensor transposed = base.AsStrided({64, 33}, {1, 64});
  destinations[0] = &transposed;
  out = executable->Run(ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].data(), transposed.data());
  EXPECT_EQ(ToDoubles(base), std::vector<double>(64 * 33, 0.0));

  // With a stop condition nothing is written before the run has finished.
  destinations[0] = &dest;
  int32_t cancel = 0;
  ctx.cancel = &cancel;
  out = executable->Run(ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].data(), dest.data());

  // A destination of the wrong shape fails before anything runs.
  ctx.cancel = nullptr;
  Tensor wrong = *Tensor::Zeros(DType::kFloat32, {64, 32});
  destinations[0] = &wrong;
  out = executable->Run(ctx, {x});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToDoubles(wrong), std::vector<double>(64 * 32, 0.0));
}

TEST(CompiledProgramTest, OutputsOfKernelsThatCanStillFailAreNotInPlace) {
  // embedding's index check may fail: its output must stay unwritten until
  // the whole run succeeded.
  auto graph =
      OpGraph("aten.embedding.default", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
  const Tensor weight = RandomTensor(DType::kFloat32, {10, 4}, 2);
  Tensor indices = *Tensor::Zeros(DType::kInt64, {3});
  auto executable = CompileFor(graph, {weight, indices});
  ASSERT_NE(executable, nullptr);
  ASSERT_EQ(testing::EagerSteps(graph, {weight, indices}), 0);
  indices.data_as<int64_t>()[1] = 10;  // out of range
  Tensor dest = *Tensor::Zeros(DType::kFloat32, {3, 4});
  const Tensor* destinations[] = {&dest};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = executable->Run(ctx, {weight, indices});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToDoubles(dest), std::vector<double>(12, 0.0));
}

}  // namespace
}  // namespace guardjit
