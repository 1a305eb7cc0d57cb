// The ops torch.export emits for CNNs (issue #16) inside compiled graphs:
// a resnet-like tail (inference batch norm, hardtanh, max_pool2d, adaptive
// average pooling) and an _assert_tensor_metadata check, compiled vs eager.
// Max pooling compiles (lowering_pooling.cc); average pooling runs as eager
// steps inside the compiled program; the check is
// enforced when a graph is specialized (guards keep it true afterwards).

#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using testing::Ints;
using testing::RandomTensor;

TEST(ModelOpsConformanceTest, BatchNormHardtanhPoolingChain) {
  GraphBuilder b("cnn_tail");
  for (const char* name : {"x", "mean", "var", "w", "bias"}) {
    ASSERT_TRUE(b.AddPlaceholder(name).ok());
  }
  AddNode(b, "check", "aten._assert_tensor_metadata.default",
          {Arg::Ref("x"), Ints({2, 3, 8, 8})},
          {{"dtype", Arg::OfDType(DType::kFloat32)}});
  AddNode(b, "bn", "aten._native_batch_norm_legit_no_training.default",
          {Arg::Ref("x"), Arg::Ref("w"), Arg::Ref("bias"), Arg::Ref("mean"),
           Arg::Ref("var"), Arg::Float(0.1), Arg::Float(1e-5)});
  AddNode(b, "bn0", "getitem", {Arg::Ref("bn"), Arg::Int(0)});
  AddNode(b, "act", "aten.hardtanh.default",
          {Arg::Ref("bn0"), Arg::Float(0.0), Arg::Float(6.0)});
  AddNode(b, "pool", "aten.max_pool2d_with_indices.default",
          {Arg::Ref("act"), Ints({3, 3}), Ints({2, 2}), Ints({1, 1})});
  AddNode(b, "pooled", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  AddNode(b, "idx", "getitem", {Arg::Ref("pool"), Arg::Int(1)});
  AddNode(b, "avg", "aten._adaptive_avg_pool2d.default",
          {Arg::Ref("pooled"), Ints({1, 1})});
  AddNode(b, "out", "aten.leaky_relu.default", {Arg::Ref("avg")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out"), Arg::Ref("idx")}).ok());
  auto graph = Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 3, 8, 8}, 1, -4, 4),
      RandomTensor(DType::kFloat32, {3}, 2),
      RandomTensor(DType::kFloat32, {3}, 3, 0.5, 2),
      RandomTensor(DType::kFloat32, {3}, 4),
      RandomTensor(DType::kFloat32, {3}, 5)};
  ExpectJitMatchesEager(graph, inputs);
  // An input that breaks the check misses the entry's guards (its sizes are
  // static) and fails when the graph is specialized for it: the shape rule
  // is the check. A compiled program trusts its guards, so the step reads
  // the compiled metadata.
  std::vector<TensorMeta> wrong;
  for (const Tensor& t : inputs) wrong.push_back(TensorMeta::Of(t));
  wrong[0].sizes[3] = 6;
  auto specialized = InferShapes(*graph, wrong);
  ASSERT_FALSE(specialized.ok());
  EXPECT_EQ(specialized.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(specialized.status().message().find("node 'check'"),
            std::string::npos)
      << specialized.status();
}

}  // namespace
}  // namespace guardjit
