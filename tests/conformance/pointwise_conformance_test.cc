// Every lowered pointwise op against the eager kernels, for each dtype the
// op's shape rule accepts, with broadcasting, contiguous and non-contiguous
// (transposed, storage offset) inputs; then random fused chains.

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::NonContiguousCopy;
using testing::RandomTensor;

// One argument: a tensor input of `shape` (dtype: the case's, unless
// forced) or a literal.
struct In {
  bool tensor = true;
  Shape shape;
  std::optional<DType> dtype;
  Arg literal;
};
In T(Shape shape) { return {true, std::move(shape), std::nullopt, Arg()}; }
In TBool(Shape shape) { return {true, std::move(shape), DType::kBool, Arg()}; }
In L(Arg a) { return {false, {}, std::nullopt, std::move(a)}; }

struct OpCase {
  std::string target;
  std::vector<In> args;
  Kwargs kwargs = {};
};

std::vector<OpCase> Cases() {
  std::vector<OpCase> cases;
  for (const char* op :
       {"abs",     "neg",         "exp",        "log",   "log1p",
        "sqrt",    "rsqrt",       "sin",        "cos",   "tanh",
        "sigmoid", "erf",         "reciprocal", "relu",  "silu",
        "floor",   "ceil",        "round",      "sign",  "logical_not",
        "isnan",   "bitwise_not", "expm1",      "log2",  "log10",
        "trunc",   "tan",         "sinh",       "cosh",  "asin",
        "acos",    "atan",        "asinh",      "acosh", "atanh",
        "isinf"}) {
    cases.push_back({absl::StrCat("aten.", op, ".default"), {T({3, 17})}});
  }
  cases.push_back({"aten.gelu.default", {T({3, 17})}});
  cases.push_back({"aten.gelu.default",
                   {T({3, 17})},
                   {{"approximate", Arg::String("tanh")}}});
  for (const char* op : {"add", "sub"}) {
    const std::string t = absl::StrCat("aten.", op, ".Tensor");
    cases.push_back({t, {T({3, 17}), T({17})}});
    cases.push_back({t, {T({3, 1}), T({17})}, {{"alpha", Arg::Int(3)}}});
    cases.push_back({absl::StrCat("aten.", op, ".Scalar"),
                     {T({3, 17}), L(Arg::Float(2.5))}});
    cases.push_back(
        {absl::StrCat("aten.", op, ".Scalar"), {T({3, 17}), L(Arg::Int(-4))}});
  }
  for (const char* op : {"mul", "div", "eq", "ne", "lt", "le", "gt", "ge",
                         "bitwise_and", "bitwise_or", "bitwise_xor"}) {
    cases.push_back(
        {absl::StrCat("aten.", op, ".Tensor"), {T({3, 17}), T({3, 1})}});
    cases.push_back({absl::StrCat("aten.", op, ".Scalar"),
                     {T({3, 17}), L(Arg::Float(0.5))}});
    cases.push_back(
        {absl::StrCat("aten.", op, ".Scalar"), {T({3, 17}), L(Arg::Int(1))}});
  }
  // rounding_mode=None is true division; "floor" runs eagerly in the
  // compiled program.
  cases.push_back({"aten.div.Tensor_mode",
                   {T({3, 17}), T({17})},
                   {{"rounding_mode", Arg()}}});
  cases.push_back({"aten.div.Tensor_mode",
                   {T({3, 17}), L(Arg::Float(0.75))},
                   {{"rounding_mode", Arg::String("floor")}}});
  cases.push_back({"aten.div.Scalar_mode",
                   {T({3, 17}), L(Arg::Float(-1.5))},
                   {{"rounding_mode", Arg()}}});
  cases.push_back({"aten.div.Scalar_mode",
                   {T({3, 17}), L(Arg::Int(3))},
                   {{"rounding_mode", Arg::String("trunc")}}});
  for (const char* op :
       {"maximum", "minimum", "logical_and", "logical_or", "logical_xor"}) {
    cases.push_back(
        {absl::StrCat("aten.", op, ".default"), {T({3, 17}), T({17})}});
  }
  cases.push_back({"aten.pow.Tensor_Tensor", {T({3, 17}), T({17})}});
  cases.push_back({"aten.atan2.default", {T({3, 17}), T({17})}});
  cases.push_back({"aten.hardtanh.default", {T({3, 17})}});
  cases.push_back({"aten.hardtanh.default",
                   {T({3, 17}), L(Arg::Float(-0.5)), L(Arg::Float(2.5))}});
  cases.push_back({"aten.leaky_relu.default", {T({3, 17})}});
  cases.push_back(
      {"aten.leaky_relu.default", {T({3, 17}), L(Arg::Float(0.2))}});
  cases.push_back({"aten.elu.default", {T({3, 17})}});
  cases.push_back({"aten.elu.default",
                   {T({3, 17}), L(Arg::Float(1.5)), L(Arg::Float(0.5)),
                    L(Arg::Float(2.0))}});
  cases.push_back({"aten.full_like.default", {T({3, 17}), L(Arg::Float(2.5))}});
  for (double e : {0.5, -0.5, 2.0, 3.0, 1.5}) {
    cases.push_back({"aten.pow.Tensor_Scalar", {T({3, 17}), L(Arg::Float(e))}});
  }
  cases.push_back({"aten.pow.Scalar", {L(Arg::Float(1.5)), T({3, 17})}});
  cases.push_back({"aten.where.self", {TBool({3, 17}), T({3, 17}), T({17})}});
  cases.push_back(
      {"aten.where.self", {TBool({17}), T({3, 1}), L(Arg::Float(0.25))}});
  cases.push_back({"aten.clamp.default",
                   {T({3, 17}), L(Arg::Float(-0.5)), L(Arg::Float(1.0))}});
  cases.push_back(
      {"aten.clamp.default", {T({3, 17}), L(Arg::Int(-1)), L(Arg())}});
  cases.push_back({"aten.clamp.Tensor", {T({3, 17}), T({17}), T({3, 1})}});
  cases.push_back({"aten.clamp.Tensor", {T({3, 17}), L(Arg()), T({3, 17})}});
  for (DType to : {DType::kFloat32, DType::kFloat64, DType::kInt32,
                   DType::kInt64, DType::kBool, DType::kUInt8, DType::kInt8}) {
    cases.push_back(
        {"aten._to_copy.default", {T({3, 17})}, {{"dtype", Arg::OfDType(to)}}});
  }
  cases.push_back({"aten.clone.default", {T({3, 17})}});
  for (const char* op : {"fmod", "remainder"}) {
    cases.push_back(
        {absl::StrCat("aten.", op, ".Tensor"), {T({3, 17}), T({17})}});
    cases.push_back({absl::StrCat("aten.", op, ".Scalar"),
                     {T({3, 17}), L(Arg::Float(-0.75))}});
    cases.push_back(
        {absl::StrCat("aten.", op, ".Scalar"), {T({3, 17}), L(Arg::Int(2))}});
  }
  for (int64_t decimals : {0, 2, -1}) {
    cases.push_back({"aten.round.decimals",
                     {T({3, 17})},
                     {{"decimals", Arg::Int(decimals)}}});
  }
  return cases;
}

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                             DType::kInt64,   DType::kBool,    DType::kFloat16,
                             DType::kBFloat16};

TEST(PointwiseConformanceTest, EveryLoweredOpMatchesEager) {
  int compared = 0;
  uint64_t seed = 1;
  for (const OpCase& c : Cases()) {
    for (DType dtype : kDTypes) {
      SCOPED_TRACE(absl::StrCat(c.target, " ", DTypeName(dtype)));
      std::vector<Arg> args;
      std::vector<Tensor> inputs;
      for (const In& in : c.args) {
        if (!in.tensor) {
          args.push_back(in.literal);
          continue;
        }
        args.push_back(Arg::Ref(absl::StrCat("x", inputs.size())));
        // Large enough magnitudes to exercise NaN/inf paths (log of
        // negatives, overflowing exp) as well.
        inputs.push_back(RandomTensor(in.dtype.value_or(dtype), in.shape,
                                      seed++, -3.0, 3.0));
      }
      auto graph = testing::OpGraph(c.target, args,
                                    static_cast<int>(inputs.size()), c.kwargs);
      std::vector<TensorMeta> metas;
      for (const Tensor& t : inputs) metas.push_back(TensorMeta::Of(t));
      if (!InferShapes(*graph, metas).ok()) continue;  // eager rejects it too
      // Integer division by zero is an eager error, not a JIT case.
      ExpectJitMatchesEager(graph, inputs);
      // On the SIMT emulator (each compile a host compiler run) the strided
      // layouts' index math is checked for two dtypes, not seven.
      if (*testing::SharedJitBackend() != '\0' && dtype != DType::kFloat32 &&
          dtype != DType::kInt64) {
        ++compared;
        continue;
      }
      std::vector<Tensor> strided;
      for (const Tensor& t : inputs) strided.push_back(NonContiguousCopy(t));
      ExpectJitMatchesEager(graph, strided, -1, &inputs);
      ++compared;
    }
  }
  EXPECT_GT(compared, 350);
}

// Random graphs of 2-12 pointwise ops over broadcasting inputs; every value
// computed may be an output.
class RandomChain {
 public:
  RandomChain(uint64_t seed, DType dtype) : rng_(seed), dtype_(dtype) {}

  std::shared_ptr<const Graph> Build(std::vector<Tensor>* inputs) {
    GraphBuilder b(absl::StrCat("chain", rng_()));
    const Shape shapes[] = {{4, 1, 9}, {3, 9}, {9}, {4, 3, 9}};
    std::vector<std::string> values;
    const int num_inputs = 1 + Pick(3);
    for (int i = 0; i < num_inputs; ++i) {
      const std::string name = absl::StrCat("x", i);
      EXPECT_TRUE(b.AddPlaceholder(name).ok());
      inputs->push_back(RandomTensor(dtype_, shapes[Pick(4)], rng_()));
      values.push_back(name);
    }
    const int num_ops = 2 + Pick(11);
    std::vector<Arg> outputs;
    for (int i = 0; i < num_ops; ++i) {
      const std::string name = absl::StrCat("v", i);
      const Arg a = Arg::Ref(values[Pick(values.size())]);
      const Arg c = Arg::Ref(values[Pick(values.size())]);
      static const char* kUnary[] = {"neg",  "abs",     "relu",
                                     "tanh", "sigmoid", "sin"};
      static const char* kBinary[] = {"add.Tensor", "sub.Tensor", "mul.Tensor",
                                      "maximum.default", "minimum.default"};
      absl::Status status;
      switch (Pick(4)) {
        case 0:
          status =
              b.AddNode(name,
                        absl::StrCat("aten.", kUnary[Pick(6)], ".default"), {a})
                  .status();
          break;
        case 1:
          status =
              b.AddNode(name, "aten.mul.Scalar", {a, Arg::Float(0.5)}).status();
          break;
        default:
          status =
              b.AddNode(name, absl::StrCat("aten.", kBinary[Pick(5)]), {a, c})
                  .status();
          break;
      }
      EXPECT_TRUE(status.ok()) << status;
      values.push_back(name);
      if (Pick(4) == 0) outputs.push_back(Arg::Ref(name));
    }
    outputs.push_back(Arg::Ref(values.back()));
    EXPECT_TRUE(b.SetOutputs(outputs).ok());
    return std::shared_ptr<const Graph>(*b.Finish());
  }

 private:
  int Pick(size_t n) { return static_cast<int>(rng_() % n); }
  std::mt19937_64 rng_;
  DType dtype_;
};

TEST(PointwiseConformanceTest, RandomBroadcastingChainsMatchEager) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                          DType::kBFloat16};
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const DType dtype = dtypes[seed % 4];
    std::vector<Tensor> inputs;
    auto graph = RandomChain(seed, dtype).Build(&inputs);
    SCOPED_TRACE(absl::StrCat("seed ", seed, " ", DTypeName(dtype)));
    std::vector<TensorMeta> metas;
    for (const Tensor& t : inputs) metas.push_back(TensorMeta::Of(t));
    if (!InferShapes(*graph, metas).ok()) continue;  // shapes don't broadcast
    // Eager rounds float16/bfloat16 after each of up to 12 ops, the fused
    // kernel once at the end: up to 12 roundings apart, plus what the
    // chain's subtractions amplify.
    double rtol = -1;
    if (dtype == DType::kFloat16) rtol = 3e-2;
    if (dtype == DType::kBFloat16) rtol = 2.5e-1;
    ExpectJitMatchesEager(graph, inputs, rtol);
  }
}

}  // namespace
}  // namespace guardjit
