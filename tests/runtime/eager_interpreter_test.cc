#include "runtime/eager_interpreter.h"

#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::MakeTensor;
using testing::ToDoubles;

// Toy kernels for ToyOps: add adds float64 tensors of the same shape, trio
// returns (x, 2x, 3x), picky never runs (its shape rule fails).
const KernelRegistry& ToyKernels() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    auto scaled = [](const Tensor& x, double k) {
      Tensor out = *Tensor::Empty(DType::kFloat64, x.sizes());
      std::vector<double> v = ToDoubles(x);
      for (size_t i = 0; i < v.size(); ++i) out.data_as<double>()[i] = k * v[i];
      return out;
    };
    EXPECT_TRUE(
        reg->Register("aten.add.Tensor",
                      [](const KernelArgs& a, absl::Span<const TensorMeta>)
                          -> absl::StatusOr<std::vector<Tensor>> {
                        std::vector<double> x = ToDoubles(a.tensor(0));
                        std::vector<double> y = ToDoubles(a.tensor(1));
                        double alpha = a.scalar(2).to_double();
                        Tensor out = *Tensor::Empty(DType::kFloat64,
                                                    a.tensor(0).sizes());
                        for (size_t i = 0; i < x.size(); ++i) {
                          out.data_as<double>()[i] =
                              x[i] + alpha * y[y.size() == 1 ? 0 : i];
                        }
                        return std::vector<Tensor>{out};
                      })
            .ok());
    EXPECT_TRUE(reg->Register("aten.trio.default",
                              [scaled](const KernelArgs& a,
                                       absl::Span<const TensorMeta>)
                                  -> absl::StatusOr<std::vector<Tensor>> {
                                Tensor x = a.tensor(0);
                                return std::vector<Tensor>{
                                    scaled(x, 1), scaled(x, 2), scaled(x, 3)};
                              })
                    .ok());
    return reg;
  }();
  return *r;
}

std::shared_ptr<const Graph> BuildGraph() {
  GraphBuilder b("g", ToyOps());
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")},
                        {{"alpha", Arg::Int(10)}})
                  .ok());
  EXPECT_TRUE(b.AddNode("t", "aten.trio.default", {Arg::Ref("s")}).ok());
  EXPECT_TRUE(b.AddNode("t2", "getitem", {Arg::Ref("t"), Arg::Int(2)}).ok());
  EXPECT_TRUE(
      b.AddNode("plus1", "aten.add.Tensor", {Arg::Ref("t2"), Arg::Float(1.0)})
          .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("plus1"), Arg::Ref("s")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(EagerInterpreterTest, RunsNodesInOrderWithGetItemAndWrappedNumbers) {
  auto interp = EagerInterpreter::Create(BuildGraph(), ToyKernels());
  ASSERT_TRUE(interp.ok()) << interp.status();
  Tensor x = MakeTensor(DType::kFloat64, {3}, {1, 2, 3});
  Tensor y = MakeTensor(DType::kFloat64, {3}, {0.5, 0, -1});
  auto out = (*interp)->Run({x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(ToDoubles((*out)[1]), (std::vector<double>{6, 2, -7}));
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{19, 7, -20}));
}

TEST(EagerInterpreterTest, ErrorsNameTheNodeOrInput) {
  auto interp = EagerInterpreter::Create(BuildGraph(), ToyKernels());
  ASSERT_TRUE(interp.ok());
  Tensor x = MakeTensor(DType::kFloat64, {1}, {1});
  auto wrong_count = (*interp)->Run({x});
  EXPECT_EQ(wrong_count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_count.status().message()),
              HasSubstr("takes 2 inputs, got 1"));
  Tensor on_gpu = Tensor::Borrow(x.data(), DType::kFloat64, {1}, {1},
                                 Device{DeviceType::kCUDA, 0});
  auto gpu = (*interp)->Run({x, on_gpu});
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(gpu.status().message()),
              HasSubstr("input 'y' is on cuda:0"));
}

TEST(EagerInterpreterTest, MissingKernelIsUnimplementedAtCreate) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("p", "aten.pool.default", {Arg::Ref("x"), Arg::Int(2)}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("p")}).ok());
  auto interp = EagerInterpreter::Create(
      std::shared_ptr<const Graph>(*b.Finish()), ToyKernels());
  EXPECT_EQ(interp.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(interp.status().message()),
              HasSubstr("node 'p' (aten.pool.default): no reference kernel"));
}

TEST(EagerInterpreterTest, ShapeRuleErrorsNameTheNode) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("pk", "aten.picky.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("pk")}).ok());
  KernelRegistry kernels;
  ASSERT_TRUE(kernels
                  .Register("aten.picky.default",
                            [](const KernelArgs&, absl::Span<const TensorMeta>)
                                -> absl::StatusOr<std::vector<Tensor>> {
                              return std::vector<Tensor>{};
                            })
                  .ok());
  auto interp = EagerInterpreter::Create(
      std::shared_ptr<const Graph>(*b.Finish()), kernels);
  ASSERT_TRUE(interp.ok());
  auto out = (*interp)->Run({MakeTensor(DType::kFloat32, {1}, {1})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(out.status().message()),
      HasSubstr("node 'pk' (aten.picky.default): argument 'self': too picky"));
}

// x -> nonzero -> float32 -> + 1: the data-dependent node's kernel sizes its
// result and the nodes after it are inferred from that result.
std::shared_ptr<const Graph> NonzeroPlusOneGraph() {
  GraphBuilder b("nonzero_plus_one");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddNode("nz", "aten.nonzero.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.AddNode("f", "aten._to_copy.default", {Arg::Ref("nz")},
                        {{"dtype", Arg::OfDType(DType::kFloat32)}})
                  .ok());
  EXPECT_TRUE(
      b.AddNode("plus1", "aten.add.Tensor", {Arg::Ref("f"), Arg::Float(1.0)})
          .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("plus1")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(EagerInterpreterTest, DataDependentOpSizesItsOutputFromTheValues) {
  auto interp = EagerInterpreter::Create(NonzeroPlusOneGraph());
  ASSERT_TRUE(interp.ok()) << interp.status();
  struct Case {
    std::vector<double> x;  // [2, 3]
    Shape shape;
    std::vector<double> expected;
  };
  const Case cases[] = {
      {{0, 1, 0, 0, 0, 2}, {2, 2}, {1, 2, 2, 3}},
      {{1, 1, 1, 1, 1, 1}, {6, 2}, {1, 1, 1, 2, 1, 3, 2, 1, 2, 2, 2, 3}},
      {{0, 0, 0, 0, 0, 0}, {0, 2}, {}},
      {{0, 0, 0, 0, 3, 0}, {1, 2}, {2, 2}},
  };
  for (const Case& c : cases) {
    auto out = (*interp)->Run({MakeTensor(DType::kFloat32, {2, 3}, c.x)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    const Tensor& y = (*out)[0];
    EXPECT_EQ(y.dtype(), DType::kFloat32);
    EXPECT_EQ(Shape(y.sizes().begin(), y.sizes().end()), c.shape);
    EXPECT_EQ(ToDoubles(y), c.expected);
  }
}

TEST(EagerInterpreterTest, ItemFeedsTheNextNodeAsAWrappedNumber) {
  GraphBuilder b("item");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(b.AddNode("s", "aten.sum.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("v", "aten._local_scalar_dense.default", {Arg::Ref("s")}).ok());
  ASSERT_TRUE(
      b.AddNode("out", "aten.add.Tensor", {Arg::Ref("y"), Arg::Ref("v")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*b.Finish()));
  ASSERT_TRUE(interp.ok()) << interp.status();
  auto out = (*interp)->Run({MakeTensor(DType::kInt64, {3}, {1, 2, 4}),
                             MakeTensor(DType::kFloat16, {2}, {0.5, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // An int64 wrapped number does not promote a float16 tensor.
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat16);
  EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{7.5, 6}));
}

TEST(EagerInterpreterTest, DataDependentOpCannotRunFromPlannedMetadata) {
  auto interp = EagerInterpreter::Create(NonzeroPlusOneGraph());
  ASSERT_TRUE(interp.ok()) << interp.status();
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {0, 1, 0, 0, 0, 2});
  GraphMeta planned((*interp)->graph().nodes().size());
  planned[0] = {TensorMeta::Of(x)};
  auto out = (*interp)->Run({x}, &planned);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("node 'nz' (aten.nonzero.default): its output size "
                        "depends on input values"));
}

}  // namespace
}  // namespace guardjit
