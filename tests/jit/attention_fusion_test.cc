#include "jit/attention_fusion.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::Ints;
using testing::RandomTensor;
using testing::SharedJit;

constexpr int64_t kB = 1, kH = 4, kL = 6, kE = 8, kEv = 5;

Arg R(const char* name) { return Arg::Ref(name); }

// How the chain under test differs from torch.export's decomposition of
// F.scaled_dot_product_attention(q, k, v, is_causal=True).
struct Variant {
  enum class Mask { kCausalBias, kFloatInput, kBoolWhere, kNone };
  Mask mask = Mask::kCausalBias;
  bool safe_softmax = true;  // torch's _safe_softmax fix after the softmax
  bool softmax_is_output = false;   // the probabilities are an output too
  bool k_given_transposed = false;  // k^T as an input, not permute(k)
};

// q [B, H, L, E], k [B, H, L, E] (or k^T [B, H, E, L]), v [B, H, L, Ev]
// (and a mask input for kFloatInput [L, L] / kBoolWhere [L, L] bool) ->
// the chain's output viewed as [B, H, L, Ev].
std::shared_ptr<const Graph> Chain(const Variant& o) {
  GraphBuilder b("attention");
  for (const char* name : {"q", "k", "v"}) {
    EXPECT_TRUE(b.AddPlaceholder(name).ok());
  }
  if (o.mask == Variant::Mask::kFloatInput ||
      o.mask == Variant::Mask::kBoolWhere) {
    EXPECT_TRUE(b.AddPlaceholder("m").ok());
  }
  const double s = 0.5946035575013605;  // E^-1/4, on q and on k^T
  AddNode(b, "mul", "aten.mul.Scalar", {R("q"), Arg::Float(s)});
  if (o.k_given_transposed) {
    AddNode(b, "mul_1", "aten.mul.Scalar", {R("k"), Arg::Float(s)});
  } else {
    AddNode(b, "permute", "aten.permute.default", {R("k"), Ints({0, 1, 3, 2})});
    AddNode(b, "mul_1", "aten.mul.Scalar", {R("permute"), Arg::Float(s)});
  }
  AddNode(b, "expand", "aten.expand.default",
          {R("mul"), Ints({kB, kH, kL, kE})});
  AddNode(b, "view", "aten.view.default",
          {R("expand"), Ints({kB * kH, kL, kE})});
  AddNode(b, "expand_1", "aten.expand.default",
          {R("mul_1"), Ints({kB, kH, kE, kL})});
  AddNode(b, "view_1", "aten.view.default",
          {R("expand_1"), Ints({kB * kH, kE, kL})});
  AddNode(b, "bmm", "aten.bmm.default", {R("view"), R("view_1")});
  AddNode(b, "scores", "aten.view.default", {R("bmm"), Ints({kB, kH, kL, kL})});
  std::string x = "scores";
  switch (o.mask) {
    case Variant::Mask::kCausalBias: {
      AddNode(b, "full", "aten.full.default", {Ints({kL, kL}), Arg::Bool(true)},
              {{"dtype", Arg::OfDType(DType::kBool)}});
      AddNode(b, "arange", "aten.arange.start_step",
              {Arg::Int(0), Arg::Int(kL)});
      AddNode(b, "row", "aten.unsqueeze.default", {R("arange"), Arg::Int(-2)});
      AddNode(b, "col", "aten.unsqueeze.default", {R("arange"), Arg::Int(-1)});
      AddNode(b, "sub", "aten.sub.Tensor", {R("row"), R("col")});
      AddNode(b, "le", "aten.le.Scalar", {R("sub"), Arg::Int(0)});
      AddNode(b, "and", "aten.logical_and.default", {R("le"), R("full")});
      AddNode(b, "ninf", "aten.scalar_tensor.default", {Arg::Float(-INFINITY)},
              {{"dtype", Arg::OfDType(DType::kFloat32)}});
      AddNode(b, "zero", "aten.scalar_tensor.default", {Arg::Float(0.0)},
              {{"dtype", Arg::OfDType(DType::kFloat32)}});
      AddNode(b, "bias", "aten.where.self", {R("and"), R("zero"), R("ninf")});
      AddNode(b, "masked", "aten.add.Tensor", {R("scores"), R("bias")});
      x = "masked";
      break;
    }
    case Variant::Mask::kFloatInput:
      AddNode(b, "masked", "aten.add.Tensor", {R("m"), R("scores")});
      x = "masked";
      break;
    case Variant::Mask::kBoolWhere:
      AddNode(b, "ninf", "aten.scalar_tensor.default", {Arg::Float(-INFINITY)},
              {{"dtype", Arg::OfDType(DType::kFloat32)}});
      AddNode(b, "masked", "aten.where.self", {R("m"), R("scores"), R("ninf")});
      x = "masked";
      break;
    case Variant::Mask::kNone:
      break;
  }
  AddNode(b, "softmax", "aten._softmax.default",
          {R(x.c_str()), Arg::Int(-1), Arg::Bool(false)});
  std::string p = "softmax";
  if (o.safe_softmax) {
    AddNode(b, "eq", "aten.eq.Scalar", {R(x.c_str()), Arg::Float(-INFINITY)});
    AddNode(b, "ne", "aten.logical_not.default", {R("eq")});
    AddNode(b, "any", "aten.any.dim", {R("ne"), Arg::Int(-1), Arg::Bool(true)});
    AddNode(b, "none", "aten.logical_not.default", {R("any")});
    AddNode(b, "zeros", "aten.full_like.default", {R("softmax"), Arg::Int(0)});
    AddNode(b, "safe", "aten.where.self",
            {R("none"), R("zeros"), R("softmax")});
    p = "safe";
  }
  AddNode(b, "expand_2", "aten.expand.default",
          {R(p.c_str()), Ints({kB, kH, kL, kL})});
  AddNode(b, "view_2", "aten.view.default",
          {R("expand_2"), Ints({kB * kH, kL, kL})});
  AddNode(b, "expand_3", "aten.expand.default",
          {R("v"), Ints({kB, kH, kL, kEv})});
  AddNode(b, "view_3", "aten.view.default",
          {R("expand_3"), Ints({kB * kH, kL, kEv})});
  AddNode(b, "bmm_1", "aten.bmm.default", {R("view_2"), R("view_3")});
  AddNode(b, "out", "aten.view.default", {R("bmm_1"), Ints({kB, kH, kL, kEv})});
  std::vector<Arg> outputs = {R("out")};
  if (o.softmax_is_output) outputs.push_back(R("softmax"));
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return testing::Finish(b);
}

std::vector<Tensor> Inputs(const Variant& o) {
  std::vector<Tensor> in = {
      RandomTensor(DType::kFloat32, {kB, kH, kL, kE}, 1),
      RandomTensor(
          DType::kFloat32,
          o.k_given_transposed ? Shape{kB, kH, kE, kL} : Shape{kB, kH, kL, kE},
          2),
      RandomTensor(DType::kFloat32, {kB, kH, kL, kEv}, 3)};
  if (o.mask == Variant::Mask::kFloatInput) {
    in.push_back(RandomTensor(DType::kFloat32, {kL, kL}, 4));
  } else if (o.mask == Variant::Mask::kBoolWhere) {
    // Row 2 fully masked: the safe softmax makes it zeros.
    std::vector<double> keep(kL * kL);
    for (int64_t i = 0; i < kL * kL; ++i) keep[i] = i / kL != 2 && i % 3 != 1;
    in.push_back(testing::MakeTensor(DType::kBool, {kL, kL}, keep));
  }
  return in;
}

// How many nodes of `graph` call `target`.
int Count(const Graph& graph, const std::string& target) {
  int n = 0;
  for (const Node& node : graph.nodes()) n += node.target == target;
  return n;
}

absl::StatusOr<FusedAttention> Fuse(std::shared_ptr<const Graph> graph,
                                    const std::vector<Tensor>& inputs) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) metas.push_back(TensorMeta::Of(t));
  absl::StatusOr<GraphMeta> m = InferShapes(*graph, metas);
  if (!m.ok()) return m.status();
  return FuseAttention(std::move(graph), *m);
}

// The chain fuses into one scaled_dot_product_attention that the compiled
// program runs as an attention step, and matches eager on the chain as
// written.
void ExpectFused(const Variant& o) {
  std::shared_ptr<const Graph> graph = Chain(o);
  const std::vector<Tensor> inputs = Inputs(o);
  absl::StatusOr<FusedAttention> fused = Fuse(graph, inputs);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->fused, 1);
  const Graph& g = *fused->graph;
  EXPECT_EQ(Count(g, "aten.scaled_dot_product_attention.default"), 1);
  EXPECT_EQ(Count(g, "aten.bmm.default"), 0);
  EXPECT_EQ(Count(g, "aten._softmax.default"), 0);
  EXPECT_EQ(Count(g, "aten.mul.Scalar"), 0);  // the scale moved into the op
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = SharedJit().Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_THAT((*exe)->Describe(), HasSubstr("as one attention step"));
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

TEST(AttentionFusionTest, TorchExportsCausalSdpaFuses) { ExpectFused({}); }

TEST(AttentionFusionTest, FloatMasksBoolMasksAndNoMaskFuse) {
  ExpectFused({.mask = Variant::Mask::kFloatInput});
  ExpectFused({.mask = Variant::Mask::kBoolWhere});
  ExpectFused({.mask = Variant::Mask::kNone});
  ExpectFused({.k_given_transposed = true});
}

TEST(AttentionFusionTest, ChainsItCannotReplaceExactlyStay) {
  // A plain softmax (a fully masked row would be NaN, not zeros), and
  // probabilities another output reads.
  for (const Variant& o :
       {Variant{.mask = Variant::Mask::kBoolWhere, .safe_softmax = false},
        Variant{.softmax_is_output = true}}) {
    std::shared_ptr<const Graph> graph = Chain(o);
    const std::vector<Tensor> inputs = Inputs(o);
    absl::StatusOr<FusedAttention> fused = Fuse(graph, inputs);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(fused->fused, 0);
    EXPECT_EQ(fused->graph.get(), graph.get());
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

}  // namespace
}  // namespace guardjit
