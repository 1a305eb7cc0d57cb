// _assert_tensor_metadata: a node with no outputs that checks dtype and
// sizes (the error names the node and the argument); the graph's other
// nodes run as usual. _assert_scalar: the same for a size comparison.

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;

// x -> _assert_tensor_metadata(x, size, dtype=dtype); out = neg(x).
absl::StatusOr<std::vector<Tensor>> RunChecked(const Tensor& x, Arg size,
                                               Arg dtype) {
  GraphBuilder b("checked");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  auto check = b.AddNode("check", "aten._assert_tensor_metadata.default",
                         {Arg::Ref("x"), std::move(size)},
                         {{"dtype", std::move(dtype)}});
  if (!check.ok()) return check.status();
  EXPECT_TRUE(b.AddNode("y", "aten.neg.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = b.Finish();
  if (!graph.ok()) return graph.status();
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*std::move(graph)));
  if (!interp.ok()) return interp.status();
  return (*interp)->Run({x});
}

Arg Ints(std::vector<int64_t> v) {
  Arg::List items;
  for (int64_t i : v) items.push_back(Arg::Int(i));
  return Arg::OfList(std::move(items));
}

TEST(AssertTensorMetadataTest, MatchingMetadataRunsTheGraph) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunChecked(x, Ints({2, 3}), Arg::OfDType(DType::kFloat32));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat32, {2, 3}, {-1, -2, -3, -4, -5, -6});
  // Nothing given: nothing to check.
  auto none = RunChecked(x, Arg(), Arg());
  ASSERT_TRUE(none.ok()) << none.status();
}

TEST(AssertTensorMetadataTest, MismatchesNameTheNodeAndTheArgument) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto dtype = RunChecked(x, Arg(), Arg::OfDType(DType::kInt64));
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(dtype.status().message());
  EXPECT_NE(message.find("node 'check'"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 'dtype'"), std::string::npos) << message;
  EXPECT_NE(message.find("Expected: int64, Got: float32"), std::string::npos)
      << message;
  for (const std::vector<int64_t>& size :
       {std::vector<int64_t>{3, 2}, std::vector<int64_t>{2, 3, 1}}) {
    auto sizes = RunChecked(x, Ints(size), Arg());
    ASSERT_FALSE(sizes.ok());
    EXPECT_NE(sizes.status().message().find("argument 'size'"),
              std::string::npos)
        << sizes.status();
    EXPECT_NE(sizes.status().message().find("Tensor sizes mismatch"),
              std::string::npos)
        << sizes.status();
  }
}

// n = sym_size(x, 0); _assert_scalar(n >= 2, msg); out = neg(x).
absl::StatusOr<std::vector<Tensor>> RunAsserted(const Tensor& x) {
  GraphBuilder b("asserted");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(
      b.AddNode("n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}).ok());
  EXPECT_TRUE(
      b.AddNode("ge", "operator.ge", {Arg::Ref("n"), Arg::Int(2)}).ok());
  auto check = b.AddNode(
      "check", "aten._assert_scalar.default",
      {Arg::Ref("ge"),
       Arg::String("Runtime assertion failed for expression u0 >= 2")});
  if (!check.ok()) return check.status();
  EXPECT_TRUE(b.AddNode("y", "aten.neg.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = b.Finish();
  if (!graph.ok()) return graph.status();
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*std::move(graph)));
  if (!interp.ok()) return interp.status();
  return (*interp)->Run({x});
}

TEST(AssertScalarTest, ATrueAssertionRunsTheGraphAndAFalseOneFails) {
  auto ok = RunAsserted(MakeTensor(DType::kFloat32, {3}, {1, 2, 3}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  ExpectTensor((*ok)[0], DType::kFloat32, {3}, {-1, -2, -3});
  auto failed = RunAsserted(MakeTensor(DType::kFloat32, {1}, {1}));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(failed.status().message());
  EXPECT_NE(message.find("node 'check'"), std::string::npos) << message;
  EXPECT_NE(message.find("argument 'self': Runtime assertion failed for "
                         "expression u0 >= 2"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace guardjit
