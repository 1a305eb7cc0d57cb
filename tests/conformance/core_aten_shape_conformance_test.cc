// The Core ATen shape/view/pad/resample ops of issue #16 part A through the
// JIT against the eager kernels: flip, repeat, diagonal, as_strided, copy,
// fill.Scalar, empty.memory_format/empty_strided, native_dropout,
// reflection/replication pads, upsample_nearest2d/upsample_bilinear2d,
// select_scatter and slice_scatter on random shapes, dtypes and layouts,
// read from an input directly and from a computed value (fused with a
// producer and a consumer), static and dynamic entries. Each plan must have
// no eager step left (EagerSteps == 0).

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::EagerSteps;
using testing::ExpectDynamicJitMatchesEager;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using ::testing::HasSubstr;
using testing::Ints;
using testing::NonContiguousCopy;
using testing::RandomTensor;

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                             DType::kInt64,   DType::kBool,    DType::kFloat16,
                             DType::kBFloat16};

bool Accepts(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) metas.push_back(TensorMeta::Of(t));
  return InferShapes(graph, metas).ok();
}

Arg Floats(std::vector<double> v) {
  Arg::List list;
  for (double x : v) list.push_back(Arg::Float(x));
  return Arg::OfList(std::move(list));
}

// op(x0, x1.., rest...) read from the inputs directly.
std::shared_ptr<const Graph> Direct(const std::string& target,
                                    std::vector<Arg> rest, int inputs) {
  std::vector<Arg> args;
  for (int i = 0; i < inputs; ++i)
    args.push_back(Arg::Ref(absl::StrCat("x", i)));
  for (Arg& a : rest) args.push_back(std::move(a));
  return testing::OpGraph(target, args, inputs);
}

// m = x0 * x0; r = op(m, x1.., rest...); outputs (r * r, r): the op over a
// computed value, fused with its producer and its consumer.
std::shared_ptr<const Graph> Chained(const std::string& target,
                                     std::vector<Arg> rest, int inputs) {
  GraphBuilder b(absl::StrCat("chained_", target));
  for (int i = 0; i < inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("x0"), Arg::Ref("x0")});
  std::vector<Arg> args = {Arg::Ref("m")};
  for (int i = 1; i < inputs; ++i)
    args.push_back(Arg::Ref(absl::StrCat("x", i)));
  for (Arg& a : rest) args.push_back(std::move(a));
  AddNode(b, "r", target, args);
  AddNode(b, "out", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Ref("r")});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("out"), Arg::Ref("r")}).ok());
  return Finish(b);
}

// Runs `target` with `rest` on `inputs` directly and chained, contiguous
// and (when `any_layout`) non-contiguous; every plan fully compiled.
// Returns false when eager mode rejects the case.
bool Check(const std::string& target, const std::vector<Arg>& rest,
           const std::vector<Tensor>& inputs, bool any_layout = true) {
  const int n = static_cast<int>(inputs.size());
  auto direct = Direct(target, rest, n);
  if (!Accepts(*direct, inputs)) return false;
  auto chained = Chained(target, rest, n);
  for (const auto& graph : {direct, chained}) {
    EXPECT_EQ(EagerSteps(graph, inputs), 0) << graph->name();
    ExpectJitMatchesEager(graph, inputs);
    if (any_layout) {
      std::vector<Tensor> strided;
      for (const Tensor& t : inputs) strided.push_back(NonContiguousCopy(t));
      ExpectJitMatchesEager(graph, strided, -1, &inputs);
    }
  }
  return true;
}

// Random trials per dtype: a third on the SIMT CUDA emulator, which runs
// every kernel thread by thread (minutes for the full count).
int Trials(int n) {
  return std::string(testing::SharedJitBackend()).empty() ? n
                                                          : std::max(1, n / 3);
}
// A lower bound on the cases compared, scaled like the trials.
int AtLeast(int bound, int n) { return bound * Trials(n) / n; }

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int Pick(int n) { return static_cast<int>(rng_() % n); }
  uint64_t Seed() { return rng_(); }
  Shape RandomShape(int rank, int lo = 1, int hi = 5) {
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(lo + Pick(hi - lo + 1));
    return s;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(CoreAtenShapeConformanceTest, FlipAndRepeat) {
  Random r(11);
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < Trials(6); ++trial) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " trial ", trial));
      const int rank = r.Pick(4);
      const Shape shape = r.RandomShape(rank);
      const Tensor x = RandomTensor(dtype, shape, r.Seed());
      std::vector<int64_t> dims;
      for (int d = 0; d < std::max(rank, 1); ++d) {
        if (r.Pick(2)) dims.push_back(r.Pick(2) ? d : d - std::max(rank, 1));
      }
      compared += Check("aten.flip.default", {Ints(dims)}, {x});
      std::vector<int64_t> repeats;
      for (int d = 0; d < rank + r.Pick(3); ++d) repeats.push_back(r.Pick(4));
      compared += Check("aten.repeat.default", {Ints(repeats)}, {x});
    }
  }
  EXPECT_GT(compared, AtLeast(70, 6));
}

TEST(CoreAtenShapeConformanceTest, DiagonalAndAsStrided) {
  Random r(12);
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < Trials(6); ++trial) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " trial ", trial));
      const int rank = 2 + r.Pick(3);
      const Tensor x = RandomTensor(dtype, r.RandomShape(rank), r.Seed());
      const int d1 = r.Pick(rank);
      const int d2 = (d1 + 1 + r.Pick(rank - 1)) % rank;
      compared += Check("aten.diagonal.default",
                        {Arg::Int(r.Pick(7) - 3), Arg::Int(d1),
                         Arg::Int(r.Pick(2) ? d2 : d2 - rank)},
                        {x});
      // as_strided reads the storage: its input is contiguous here (a
      // non-contiguous one has another storage in eager mode).
      const int64_t numel = x.numel();
      const int64_t a = 1 + r.Pick(3), b = 1 + r.Pick(3);
      const int64_t s0 = r.Pick(4), s1 = r.Pick(3);
      const int64_t need = (a - 1) * s0 + (b - 1) * s1 + 1;
      if (need > numel) continue;
      const int64_t offset = r.Pick(static_cast<int>(numel - need + 1));
      compared += Check("aten.as_strided.default",
                        {Ints({a, b}), Ints({s0, s1}), Arg::Int(offset)}, {x},
                        /*any_layout=*/false);
    }
  }
  EXPECT_GT(compared, AtLeast(50, 6));
}

TEST(CoreAtenShapeConformanceTest, ScatterCopyFill) {
  Random r(13);
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < Trials(5); ++trial) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " trial ", trial));
      const int rank = 1 + r.Pick(3);
      const Shape shape = r.RandomShape(rank);
      const Tensor self = RandomTensor(dtype, shape, r.Seed());
      const int dim = r.Pick(rank);
      const int64_t size = shape[dim];
      // select_scatter: src the shape of self without `dim` (float64: a
      // conversion on the way in).
      Shape part = shape;
      part.erase(part.begin() + dim);
      const int64_t index = r.Pick(static_cast<int>(2 * size)) - size;
      compared += Check(
          "aten.select_scatter.default", {Arg::Int(dim), Arg::Int(index)},
          {self,
           RandomTensor(r.Pick(2) ? dtype : DType::kFloat64, part, r.Seed())});
      // slice_scatter over [start, end) with a step.
      const int64_t start = r.Pick(static_cast<int>(size + 1));
      const int64_t end = start + r.Pick(static_cast<int>(size - start + 1));
      const int64_t step = 1 + r.Pick(3);
      Shape sliced = shape;
      sliced[dim] = end <= start ? 0 : (end - start - 1) / step + 1;
      compared +=
          Check("aten.slice_scatter.default",
                {Arg::Int(dim), Arg::Int(start), Arg::Int(end), Arg::Int(step)},
                {self, RandomTensor(dtype, sliced, r.Seed())});
      // copy: src broadcast along some dims, another dtype.
      Shape bshape = shape;
      for (int d = 0; d < rank; ++d) {
        if (r.Pick(2)) bshape[d] = 1;
      }
      compared +=
          Check("aten.copy.default", {},
                {self, RandomTensor(r.Pick(2) ? DType::kFloat32 : DType::kInt32,
                                    bshape, r.Seed())});
      compared +=
          Check("aten.fill.Scalar",
                {r.Pick(2) ? Arg::Float(-1.5) : Arg::Int(r.Pick(3))}, {self});
    }
  }
  EXPECT_GT(compared, AtLeast(120, 5));
}

TEST(CoreAtenShapeConformanceTest, PadsAndEmpty) {
  Random r(14);
  int compared = 0;
  const std::pair<const char*, int> pads[] = {
      {"aten.reflection_pad1d.default", 1},
      {"aten.reflection_pad2d.default", 2},
      {"aten.reflection_pad3d.default", 3},
      {"aten.replication_pad2d.default", 2},
      {"aten.replication_pad3d.default", 3}};
  for (DType dtype : kDTypes) {
    if (dtype == DType::kBool) continue;  // ATen has no bool pads
    for (const auto& [target, dims] : pads) {
      for (int trial = 0; trial < Trials(3); ++trial) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", target, " ", trial));
        const int rank = dims + 1 + r.Pick(2);
        const Shape shape = r.RandomShape(rank, 1, 5);
        std::vector<int64_t> pad;
        for (int k = 0; k < dims; ++k) {
          const int64_t n = shape[rank - 1 - k];
          for (int side = 0; side < 2; ++side) {
            pad.push_back(r.Pick(static_cast<int>(2 * n - 1)) - (n - 1));
          }
        }
        compared +=
            Check(target, {Ints(pad)}, {RandomTensor(dtype, shape, r.Seed())});
      }
    }
    // empty / empty_strided give zeros in both.
    GraphBuilder b("empty");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddNode(b, "e", "aten.empty.memory_format", {Ints({2, 3})},
            {{"dtype", Arg::OfDType(dtype)}});
    AddNode(b, "s", "aten.empty_strided.default", {Ints({2, 3}), Ints({1, 2})},
            {{"dtype", Arg::OfDType(dtype)}});
    AddNode(b, "a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("e")});
    AddNode(b, "out", "aten.add.Tensor", {Arg::Ref("a"), Arg::Ref("s")});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
    auto graph = Finish(b);
    const std::vector<Tensor> inputs = {RandomTensor(dtype, {2, 3}, r.Seed())};
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
    ExpectJitMatchesEager(graph, inputs);
  }
  EXPECT_GT(compared, AtLeast(55, 3));  // 67 of 90 random pads are valid
}

TEST(CoreAtenShapeConformanceTest, NativeDropoutWithoutRandomness) {
  Random r(15);
  for (DType dtype : kDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, r.RandomShape(3), r.Seed());
    for (const auto& [p, train] : std::vector<std::pair<double, bool>>{
             {0.3, false}, {0.0, true}, {1.0, true}}) {
      auto graph = testing::OpGraph(
          "aten.native_dropout.default",
          {Arg::Ref("x0"), Arg::Float(p), Arg::Bool(train)}, 1, {}, 2);
      EXPECT_EQ(EagerSteps(graph, {x}), 0);
      ExpectJitMatchesEager(graph, {x});
      const std::vector<Tensor> contiguous = {x};
      ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, -1, &contiguous);
    }
  }
}

TEST(CoreAtenShapeConformanceTest, Upsample) {
  Random r(16);
  int compared = 0;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kBFloat16, DType::kUInt8}) {
    for (int trial = 0; trial < Trials(6); ++trial) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " trial ", trial));
      const Shape shape = {1 + r.Pick(2), 1 + r.Pick(3), 1 + r.Pick(6),
                           1 + r.Pick(6)};
      const Tensor x = RandomTensor(dtype, shape, r.Seed(), 0, 9);
      Arg size = Arg::None(), factors = Arg::None();
      if (r.Pick(2)) {
        size = Ints({1 + r.Pick(12), 1 + r.Pick(12)});
      } else {
        const double f[] = {0.5, 1.0, 1.5, 1.7, 2.0, 3.0, 2.3};
        factors = Floats({f[r.Pick(7)], f[r.Pick(7)]});
      }
      compared += Check("aten.upsample_nearest2d.vec", {size, factors}, {x});
      if (dtype == DType::kUInt8) continue;
      for (bool align : {false, true}) {
        compared += Check("aten.upsample_bilinear2d.vec",
                          {size, Arg::Bool(align), factors}, {x});
      }
    }
  }
  EXPECT_GT(compared, AtLeast(60, 6));
}

// One dynamic entry (batch and width symbolic) for flip, a reflection pad
// over the symbolic width, repeat, diagonal and slice_scatter along a
// static dim, fused, at several sizes.
TEST(CoreAtenShapeConformanceTest, DynamicEntry) {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("dynamic_core_aten_shape");
    for (const char* x : {"x", "src"}) ASSERT_TRUE(b.AddPlaceholder(x).ok());
    AddNode(b, "m", "aten.neg.default", {Arg::Ref("x")});
    AddNode(b, "f", "aten.flip.default", {Arg::Ref("m"), Ints({0, -1})});
    AddNode(b, "p", "aten.reflection_pad2d.default",
            {Arg::Ref("f"), Ints({1, 2, 1, 0})});
    AddNode(b, "rep", "aten.repeat.default", {Arg::Ref("p"), Ints({2, 1, 1})});
    AddNode(b, "s", "aten.slice_scatter.default",
            {Arg::Ref("rep"), Arg::Ref("src"), Arg::Int(1), Arg::Int(1),
             Arg::Int(4), Arg::Int(2)});
    AddNode(b, "d", "aten.diagonal.default",
            {Arg::Ref("s"), Arg::Int(0), Arg::Int(0), Arg::Int(1)});
    AddNode(b, "out", "aten.mul.Tensor", {Arg::Ref("d"), Arg::Ref("d")});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("out"), Arg::Ref("s")}).ok());
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 1;
    for (const auto& [n, w] : std::vector<std::pair<int64_t, int64_t>>{
             {3, 4}, {4, 5}, {9, 7}, {17, 3}, {5, 30}}) {
      calls.push_back({RandomTensor(dtype, {n, 3, w}, seed++),
                       RandomTensor(dtype, {2 * n, 2, w + 3}, seed++)});
    }
    auto exe = ExpectDynamicJitMatchesEager(
        Finish(b), {{0, 0}, {0, 2}, {1, 0}, {1, 2}}, calls);
    ASSERT_NE(exe, nullptr);
    EXPECT_THAT(exe->Describe(), HasSubstr("0 eager nodes"));
  }
}

// Upsampling over a symbolic H and W: integer factors keep the output
// symbolic (nearest's shortcuts and float scale decided in the kernel), a
// fixed output size makes the scales in-kernel float divisions.
TEST(CoreAtenShapeConformanceTest, DynamicUpsample) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    for (bool align : {false, true}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " align ", align));
      GraphBuilder b("dynamic_upsample");
      ASSERT_TRUE(b.AddPlaceholder("x").ok());
      AddNode(b, "m", "aten.neg.default", {Arg::Ref("x")});
      AddNode(b, "n", "aten.upsample_nearest2d.vec",
              {Arg::Ref("m"), Arg::None(), Floats({2.0, 3.0})});
      AddNode(b, "f", "aten.upsample_nearest2d.vec",
              {Arg::Ref("m"), Ints({5, 7}), Arg::None()});
      AddNode(b, "l", "aten.upsample_bilinear2d.vec",
              {Arg::Ref("m"), Ints({5, 7}), Arg::Bool(align), Arg::None()});
      AddNode(
          b, "k", "aten.upsample_bilinear2d.vec",
          {Arg::Ref("m"), Arg::None(), Arg::Bool(align), Floats({2.0, 1.0})});
      ASSERT_TRUE(b.SetOutputs({Arg::Ref("n"), Arg::Ref("f"), Arg::Ref("l"),
                                Arg::Ref("k")})
                      .ok());
      std::vector<std::vector<Tensor>> calls;
      uint64_t seed = 1;
      for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{
               {3, 4}, {5, 7}, {2, 9}, {10, 3}, {6, 14}}) {
        calls.push_back({RandomTensor(dtype, {2, 3, h, w}, seed++)});
      }
      auto exe =
          ExpectDynamicJitMatchesEager(Finish(b), {{0, 2}, {0, 3}}, calls);
      ASSERT_NE(exe, nullptr);
      EXPECT_THAT(exe->Describe(), HasSubstr("0 eager nodes"));
    }
  }
}

}  // namespace
}  // namespace guardjit
