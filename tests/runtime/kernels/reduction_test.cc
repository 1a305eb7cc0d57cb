// Reductions run through the graph builder and the eager interpreter, checked
// against reductions computed here by plain index arithmetic.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using ::guardjit::testing::kAllDTypes;
const DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16,
                              DType::kFloat32, DType::kFloat64};

// Which dims a dim list reduces (empty: all), normalized independently of
// the library.
std::vector<bool> MaskOf(int rank, const std::vector<int64_t>& dims) {
  std::vector<bool> mask(rank, dims.empty());
  for (int64_t d : dims) mask[d < 0 ? d + rank : d] = true;
  return mask;
}

Shape ReducedSizes(IntSpan sizes, const std::vector<bool>& mask, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d])
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// The input values of every output element, in row-major order of both the
// output and the reduced dims, by walking every index of `t`.
std::vector<std::vector<double>> Groups(const Tensor& t,
                                        const std::vector<bool>& mask) {
  const std::vector<double> values = ToDoubles(t);
  int64_t num_groups = 1;
  for (int d = 0; d < t.dim(); ++d) {
    if (!mask[d]) num_groups *= t.size(d);
  }
  std::vector<std::vector<double>> groups(num_groups);
  std::vector<int64_t> index(t.dim(), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t group = 0;
    for (int d = 0; d < t.dim(); ++d) {
      if (!mask[d]) group = group * t.size(d) + index[d];
    }
    groups[group].push_back(values[i]);
    for (int d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return groups;
}

std::vector<double> Apply(
    const std::vector<std::vector<double>>& groups,
    const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(f(g));
  return out;
}

double SumOf(const std::vector<double>& g) {
  return std::accumulate(g.begin(), g.end(), 0.0);
}
double ProdOf(const std::vector<double>& g) {
  return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<double>());
}
double MeanOf(const std::vector<double>& g) {
  return SumOf(g) / static_cast<double>(g.size());
}
double MaxOf(const std::vector<double>& g) {
  double m = -kInf;
  for (double v : g) m = std::isnan(v) || std::isnan(m) ? kNaN : std::max(m, v);
  return m;
}
double MinOf(const std::vector<double>& g) {
  double m = kInf;
  for (double v : g) m = std::isnan(v) || std::isnan(m) ? kNaN : std::min(m, v);
  return m;
}
double ArgMaxOf(const std::vector<double>& g) {
  return static_cast<double>(std::max_element(g.begin(), g.end()) - g.begin());
}
double ArgMinOf(const std::vector<double>& g) {
  return static_cast<double>(std::min_element(g.begin(), g.end()) - g.begin());
}
double VarOf(const std::vector<double>& g, double correction) {
  const double mean = MeanOf(g);
  double ss = 0.0;
  for (double v : g) ss += (v - mean) * (v - mean);
  return ss / std::max(0.0, static_cast<double>(g.size()) - correction);
}
double AnyOf(const std::vector<double>& g) {
  return std::any_of(g.begin(), g.end(), [](double v) { return v != 0.0; })
             ? 1.0
             : 0.0;
}
double AllOf(const std::vector<double>& g) {
  return std::all_of(g.begin(), g.end(), [](double v) { return v != 0.0; })
             ? 1.0
             : 0.0;
}

// Tolerances for a result stored as `dtype` (the reduction rounds once).
double TolFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1e-2;
    case DType::kFloat32:
      return 1e-5;
    default:
      return 1e-9;
  }
}

void ExpectClose(const Tensor& got, DType dtype, IntSpan sizes,
                 const std::vector<double>& expected) {
  ExpectTensor(got, dtype, sizes, expected, TolFor(dtype), TolFor(dtype));
}

absl::Status RunStatus(const std::string& target, std::vector<OpArg> args,
                       std::vector<std::pair<std::string, OpArg>> kwargs = {}) {
  return RunOp(target, std::move(args), std::move(kwargs)).status();
}

void ExpectInvalid(const absl::Status& status, const std::string& argument,
                   const std::string& detail) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_NE(message.find("argument '" + argument + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find(detail), std::string::npos) << message;
}

const std::vector<std::vector<int64_t>> kDimLists = {
    {0}, {1}, {2}, {-1}, {-2}, {0, 2}, {-1, 0}, {2, 1}, {0, 1, 2}, {}};

// ---------------------------------------------------------------------------
// Dim lists, keepdim and values, float64 input (no rounding in the way).

TEST(ReductionDims, DimListOpsMatchLoops) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 3, 4}, 1);
  struct Op {
    std::string target;
    std::function<double(const std::vector<double>&)> f;
  };
  const std::vector<Op> ops = {
      {"aten.sum.dim_IntList", SumOf},
      {"aten.mean.dim", MeanOf},
      {"aten.amax.default", MaxOf},
      {"aten.amin.default", MinOf},
      {"aten.var.correction", [](const auto& g) { return VarOf(g, 1.0); }},
      {"aten.any.dims", AnyOf},
      {"aten.all.dims", AllOf},
  };
  for (const Op& op : ops) {
    for (const auto& dims : kDimLists) {
      if (dims.empty() && op.target.find(".dims") != std::string::npos)
        continue;
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(op.target + " dims " + ::testing::PrintToString(dims) +
                     " keepdim " + (keepdim ? "true" : "false"));
        const std::vector<bool> mask = MaskOf(3, dims);
        const bool is_any_all = op.target.find("any") != std::string::npos ||
                                op.target.find("all") != std::string::npos;
        // var.correction takes keepdim as a keyword (after `*`).
        const Tensor got =
            op.target == "aten.var.correction"
                ? RunOp1(op.target, {x, OpArg(dims)}, {{"keepdim", keepdim}})
                : RunOp1(op.target, {x, OpArg(dims), keepdim});
        ExpectClose(got, is_any_all ? DType::kBool : DType::kFloat64,
                    ReducedSizes(x.sizes(), mask, keepdim),
                    Apply(Groups(x, mask), op.f));
      }
    }
  }
}

TEST(ReductionDims, SingleDimOpsMatchLoops) {
  const Tensor x = RandomTensor(DType::kFloat64, {2, 3, 4}, 2);
  struct Op {
    std::string target;
    DType dtype;
    std::function<double(const std::vector<double>&)> f;
  };
  const std::vector<Op> ops = {
      {"aten.prod.dim_int", DType::kFloat64, ProdOf},
      {"aten.argmax.default", DType::kInt64, ArgMaxOf},
      {"aten.argmin.default", DType::kInt64, ArgMinOf},
      {"aten.any.dim", DType::kBool, AnyOf},
      {"aten.all.dim", DType::kBool, AllOf},
  };
  for (const Op& op : ops) {
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(op.target + " dim " + std::to_string(dim));
        const std::vector<bool> mask = MaskOf(3, {dim});
        ExpectClose(RunOp1(op.target, {x, dim, keepdim}), op.dtype,
                    ReducedSizes(x.sizes(), mask, keepdim),
                    Apply(Groups(x, mask), op.f));
      }
    }
  }
}

TEST(ReductionDims, WholeTensorOverloads) {
  const Tensor x = RandomTensor(DType::kFloat64, {3, 5}, 3);
  const auto all = Groups(x, MaskOf(2, {}));
  ExpectClose(RunOp1("aten.sum.default", {x}), DType::kFloat64, {},
              Apply(all, SumOf));
  ExpectClose(RunOp1("aten.mean.default", {x}), DType::kFloat64, {},
              Apply(all, MeanOf));
  ExpectClose(RunOp1("aten.prod.default", {x}), DType::kFloat64, {},
              Apply(all, ProdOf));
  ExpectClose(RunOp1("aten.amax.default", {x}), DType::kFloat64, {},
              Apply(all, MaxOf));
  ExpectClose(RunOp1("aten.amin.default", {x}), DType::kFloat64, {},
              Apply(all, MinOf));
  ExpectClose(RunOp1("aten.argmax.default", {x}), DType::kInt64, {},
              Apply(all, ArgMaxOf));
  ExpectClose(RunOp1("aten.argmin.default", {x}), DType::kInt64, {},
              Apply(all, ArgMinOf));
  ExpectClose(RunOp1("aten.var.correction", {x}), DType::kFloat64, {},
              {VarOf(all[0], 1.0)});
  ExpectClose(RunOp1("aten.any.default", {x}), DType::kBool, {},
              Apply(all, AnyOf));
  ExpectClose(RunOp1("aten.all.default", {x}), DType::kBool, {},
              Apply(all, AllOf));
  // dim=None on the dim overloads also reduces everything.
  const OpArg none = Arg::None();
  ExpectClose(RunOp1("aten.sum.dim_IntList", {x, none}), DType::kFloat64, {},
              Apply(all, SumOf));
  ExpectClose(RunOp1("aten.mean.dim", {x, none, true}), DType::kFloat64, {1, 1},
              Apply(all, MeanOf));
  ExpectClose(RunOp1("aten.any.dims", {x, none}), DType::kBool, {},
              Apply(all, AnyOf));
  // argmax with dim=None and keepdim keeps the rank with size-1 dims.
  ExpectClose(RunOp1("aten.argmax.default", {x, none, true}), DType::kInt64,
              {1, 1}, Apply(all, ArgMaxOf));
}

TEST(ReductionDims, AnyAllWithEmptyDimListReduceNothing) {
  // ATen's allow_empty_dims: any.dims/all.dims with dim=[] keep every dim.
  const Tensor x = MakeTensor(DType::kFloat32, {2, 2}, {0.0, 2.0, kNaN, -0.0});
  ExpectTensor(RunOp1("aten.any.dims", {x, OpArg(std::vector<int64_t>{})}),
               DType::kBool, {2, 2}, {0, 1, 1, 0});
  ExpectTensor(
      RunOp1("aten.all.dims", {x, OpArg(std::vector<int64_t>{}), true}),
      DType::kBool, {2, 2}, {0, 1, 1, 0});
}

TEST(ReductionDims, ZeroDimTensor) {
  const Tensor x = MakeTensor(DType::kFloat32, {}, {5.0});
  for (int64_t dim : {0, -1}) {
    ExpectTensor(RunOp1("aten.sum.dim_IntList", {x, OpArg({dim}), true}),
                 DType::kFloat32, {}, {5.0});
    ExpectTensor(RunOp1("aten.argmax.default", {x, dim}), DType::kInt64, {},
                 {0});
    ExpectTensor(RunOp1("aten.prod.dim_int", {x, dim}), DType::kFloat32, {},
                 {5.0});
    ExpectTensor(RunOp1("aten.amax.default", {x, OpArg({dim})}),
                 DType::kFloat32, {}, {5.0});
  }
  ExpectTensor(RunOp1("aten.var.correction", {x}), DType::kFloat32, {}, {kNaN});
  ExpectInvalid(RunStatus("aten.sum.dim_IntList", {x, OpArg({1})}), "dim",
                "out of range");
  ExpectInvalid(RunStatus("aten.amin.default", {x, OpArg({0, -1})}), "dim",
                "appears multiple times");
}

// ---------------------------------------------------------------------------
// Dtypes.

TEST(ReductionDTypes, SumAndProdOfEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 4}, 4, -3.0, 3.0);
    const DType out = IsFloating(dtype) ? dtype : DType::kInt64;
    for (int64_t dim : {0, 1}) {
      const auto groups = Groups(x, MaskOf(2, {dim}));
      ExpectClose(RunOp1("aten.sum.dim_IntList", {x, OpArg({dim})}), out,
                  {dim == 0 ? 4 : 3}, Apply(groups, SumOf));
      ExpectClose(RunOp1("aten.prod.dim_int", {x, dim}), out,
                  {dim == 0 ? 4 : 3}, Apply(groups, ProdOf));
    }
    ExpectClose(RunOp1("aten.sum.default", {x}), out, {},
                {SumOf(ToDoubles(x))});
  }
}

TEST(ReductionDTypes, MinMaxAnyAllArgOfEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {3, 4}, 5, -3.0, 3.0);
    const DType any_dtype =
        dtype == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
    for (int64_t dim : {0, -1}) {
      const auto groups = Groups(x, MaskOf(2, {dim}));
      const Shape sizes = {dim == 0 ? 4 : 3};
      ExpectClose(RunOp1("aten.amax.default", {x, OpArg({dim})}), dtype, sizes,
                  Apply(groups, MaxOf));
      ExpectClose(RunOp1("aten.amin.default", {x, OpArg({dim})}), dtype, sizes,
                  Apply(groups, MinOf));
      ExpectClose(RunOp1("aten.any.dim", {x, dim}), any_dtype, sizes,
                  Apply(groups, AnyOf));
      ExpectClose(RunOp1("aten.all.dim", {x, dim}), any_dtype, sizes,
                  Apply(groups, AllOf));
      if (dtype != DType::kBool) {
        ExpectClose(RunOp1("aten.argmax.default", {x, dim}), DType::kInt64,
                    sizes, Apply(groups, ArgMaxOf));
        ExpectClose(RunOp1("aten.argmin.default", {x, dim}), DType::kInt64,
                    sizes, Apply(groups, ArgMinOf));
      }
    }
    ExpectClose(RunOp1("aten.any.default", {x}), any_dtype, {},
                {AnyOf(ToDoubles(x))});
    ExpectClose(RunOp1("aten.all.default", {x}), any_dtype, {},
                {AllOf(ToDoubles(x))});
  }
}

TEST(ReductionDTypes, MeanAndVarOfFloatDTypes) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {4, 5}, 6);
    for (int64_t dim : {0, 1}) {
      const auto groups = Groups(x, MaskOf(2, {dim}));
      const Shape sizes = {dim == 0 ? 5 : 4};
      ExpectClose(RunOp1("aten.mean.dim", {x, OpArg({dim})}), dtype, sizes,
                  Apply(groups, MeanOf));
      ExpectClose(RunOp1("aten.var.correction", {x, OpArg({dim})}), dtype,
                  sizes,
                  Apply(groups, [](const auto& g) { return VarOf(g, 1.0); }));
    }
  }
}

TEST(ReductionDTypes, DTypeArgumentConvertsTheInputFirst) {
  // sum(dtype=int32) of floats truncates every element before adding.
  const Tensor x = MakeTensor(DType::kFloat32, {3}, {1.5, 2.5, -0.5});
  ExpectTensor(RunOp1("aten.sum.default", {x}, {{"dtype", DType::kInt32}}),
               DType::kInt32, {}, {3});
  ExpectTensor(RunOp1("aten.sum.default", {x}, {{"dtype", DType::kFloat64}}),
               DType::kFloat64, {}, {3.5});
  ExpectTensor(RunOp1("aten.prod.default", {x}, {{"dtype", DType::kInt64}}),
               DType::kInt64, {}, {0});
  const Tensor ints = MakeTensor(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  ExpectTensor(
      RunOp1("aten.mean.dim", {ints, OpArg({1})}, {{"dtype", DType::kFloat32}}),
      DType::kFloat32, {2}, {1.5, 3.5});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {ints, OpArg({0}), true},
                      {{"dtype", DType::kFloat16}}),
               DType::kFloat16, {1, 2}, {4, 6});
  ExpectTensor(
      RunOp1("aten.prod.dim_int", {ints, 0}, {{"dtype", DType::kFloat64}}),
      DType::kFloat64, {2}, {3, 8});
}

TEST(ReductionDTypes, BoolAndIntegerSumsGiveInt64AndWrap) {
  const Tensor b = MakeTensor(DType::kBool, {4}, {1, 1, 0, 1});
  ExpectTensor(RunOp1("aten.sum.default", {b}), DType::kInt64, {}, {3});
  ExpectTensor(RunOp1("aten.prod.default", {b}), DType::kInt64, {}, {0});
  const Tensor big = MakeTensor(DType::kInt64, {2}, {0, 1});
  big.data_as<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(RunOp1("aten.sum.default", {big}).data_as<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
  // int32 results with an explicit dtype wrap at 32 bits, as ATen's do.
  const Tensor i32 = MakeTensor(DType::kInt32, {2}, {2147483647.0, 1.0});
  EXPECT_EQ(RunOp1("aten.sum.default", {i32}, {{"dtype", DType::kInt32}})
                .data_as<int32_t>()[0],
            std::numeric_limits<int32_t>::min());
  const Tensor u8 = MakeTensor(DType::kUInt8, {3}, {200, 100, 250});
  ExpectTensor(RunOp1("aten.sum.default", {u8}), DType::kInt64, {}, {550});
}

// ---------------------------------------------------------------------------
// Layouts.

TEST(ReductionLayout, NonContiguousAndOffsetInputs) {
  const Tensor x = RandomTensor(DType::kFloat32, {3, 4, 5}, 7);
  const Tensor strided = NonContiguousCopy(x);
  // Every other row and column of a larger buffer, starting 7 elements in.
  const Tensor storage = RandomTensor(DType::kFloat32, {200}, 8);
  const Tensor sliced = storage.AsStrided({3, 4, 5}, {50, 11, 2}, 7);
  for (const Tensor& t : {strided, sliced}) {
    for (const auto& dims : kDimLists) {
      const std::vector<bool> mask = MaskOf(3, dims);
      const auto groups = Groups(t, mask);
      const Shape sizes = ReducedSizes(t.sizes(), mask, false);
      ExpectClose(RunOp1("aten.sum.dim_IntList", {t, OpArg(dims)}),
                  DType::kFloat32, sizes, Apply(groups, SumOf));
      ExpectClose(RunOp1("aten.amax.default", {t, OpArg(dims)}),
                  DType::kFloat32, sizes, Apply(groups, MaxOf));
      ExpectClose(
          RunOp1("aten.var.correction", {t, OpArg(dims)}, {{"correction", 0}}),
          DType::kFloat32, sizes,
          Apply(groups, [](const auto& g) { return VarOf(g, 0); }));
      if (!dims.empty()) {
        ExpectClose(RunOp1("aten.all.dims", {t, OpArg(dims)}), DType::kBool,
                    sizes, Apply(groups, AllOf));
      }
    }
    for (int64_t dim : {0, 1, 2}) {
      const auto groups = Groups(t, MaskOf(3, {dim}));
      ExpectClose(RunOp1("aten.argmin.default", {t, dim}), DType::kInt64,
                  ReducedSizes(t.sizes(), MaskOf(3, {dim}), false),
                  Apply(groups, ArgMinOf));
      ExpectClose(RunOp1("aten.prod.dim_int", {t, dim}), DType::kFloat32,
                  ReducedSizes(t.sizes(), MaskOf(3, {dim}), false),
                  Apply(groups, ProdOf));
    }
    // argmax(dim=None) indexes the flattened row-major tensor, not memory.
    ExpectClose(RunOp1("aten.argmax.default", {t}), DType::kInt64, {},
                {ArgMaxOf(ToDoubles(t))});
  }
}

TEST(ReductionLayout, BroadcastInputWithZeroStrides) {
  const Tensor row = MakeTensor(DType::kInt32, {3}, {1, 2, 3});
  const Tensor expanded = row.AsStrided({4, 3}, {0, 1});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {expanded, OpArg({0})}),
               DType::kInt64, {3}, {4, 8, 12});
  ExpectTensor(RunOp1("aten.argmax.default", {expanded, 1}), DType::kInt64, {4},
               {2, 2, 2, 2});
}

// ---------------------------------------------------------------------------
// Empty tensors.

TEST(ReductionEmpty, IdentitiesOverEmptyDims) {
  const Tensor x = *Tensor::Empty(DType::kFloat32, {0, 3});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {x, OpArg({0})}), DType::kFloat32,
               {3}, {0, 0, 0});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {x, OpArg({1})}), DType::kFloat32,
               {0}, {});
  ExpectTensor(RunOp1("aten.sum.default", {x}), DType::kFloat32, {}, {0});
  ExpectTensor(RunOp1("aten.prod.dim_int", {x, 0, true}), DType::kFloat32,
               {1, 3}, {1, 1, 1});
  ExpectTensor(RunOp1("aten.mean.dim", {x, OpArg({0})}), DType::kFloat32, {3},
               {kNaN, kNaN, kNaN});
  ExpectTensor(RunOp1("aten.var.correction", {x, OpArg({0})}), DType::kFloat32,
               {3}, {kNaN, kNaN, kNaN});
  ExpectTensor(RunOp1("aten.any.dim", {x, 0}), DType::kBool, {3}, {0, 0, 0});
  ExpectTensor(RunOp1("aten.all.dim", {x, 0}), DType::kBool, {3}, {1, 1, 1});
  ExpectTensor(RunOp1("aten.any.default", {x}), DType::kBool, {}, {0});
  ExpectTensor(RunOp1("aten.all.default", {x}), DType::kBool, {}, {1});
  // Reducing a non-empty dim of an empty tensor is fine for max/argmax too.
  ExpectTensor(RunOp1("aten.amax.default", {x, OpArg({1})}), DType::kFloat32,
               {0}, {});
  ExpectTensor(RunOp1("aten.argmin.default", {x, 1, true}), DType::kInt64,
               {0, 1}, {});
  const Tensor ints = *Tensor::Empty(DType::kInt16, {2, 0});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {ints, OpArg({1})}),
               DType::kInt64, {2}, {0, 0});
  ExpectTensor(RunOp1("aten.prod.default", {ints}), DType::kInt64, {}, {1});
}

TEST(ReductionEmpty, MaxMinArgmaxRefuseEmptyReducedDims) {
  const Tensor x = *Tensor::Empty(DType::kFloat32, {0, 3});
  ExpectInvalid(RunStatus("aten.amax.default", {x, OpArg({0})}), "dim",
                "amax(): Expected reduction dim 0 to have non-zero size");
  ExpectInvalid(RunStatus("aten.amin.default", {x, OpArg({-2}), true}), "dim",
                "Expected reduction dim 0 to have non-zero size");
  ExpectInvalid(
      RunStatus("aten.amax.default", {x}), "dim",
      "Expected reduction dim to be specified for input.numel() == 0");
  ExpectInvalid(RunStatus("aten.argmax.default", {x}), "dim",
                "argmax(): Expected reduction dim to be specified");
  ExpectInvalid(RunStatus("aten.argmin.default", {x, 0}), "dim",
                "argmin(): Expected reduction dim 0 to have non-zero size");
}

// ---------------------------------------------------------------------------
// Semantics: accuracy, NaN, ties, correction.

TEST(ReductionSemantics, LargeFloat32SumIsAccurate) {
  const int64_t n = 1 << 20;
  const Tensor x = RandomTensor(DType::kFloat32, {n}, 9, 0.0, 1.0);
  double exact = 0.0;
  for (double v : ToDoubles(x)) exact += v;
  const double got = ToDoubles(RunOp1("aten.sum.default", {x}))[0];
  EXPECT_NEAR(got, exact, 1e-6 * exact);
  const double mean = ToDoubles(RunOp1("aten.mean.default", {x}))[0];
  EXPECT_NEAR(mean, exact / n, 1e-6 * exact / n);
  // A float accumulator would drift far from 1e6 * 0.1f here.
  const Tensor tenths =
      MakeTensor(DType::kFloat32, {1000000}, std::vector<double>(1000000, 0.1));
  EXPECT_NEAR(ToDoubles(RunOp1("aten.sum.default", {tenths}))[0], 100000.0,
              0.1);
  const double var = ToDoubles(RunOp1("aten.var.correction", {x}))[0];
  EXPECT_NEAR(var, 1.0 / 12.0, 1e-3);  // uniform [0, 1)
}

TEST(ReductionSemantics, NaNPropagatesAndWinsArgmaxArgmin) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 4},
                              {1.0, kNaN, 3.0, kNaN, -1.0, 5.0, 5.0, -2.0});
  ExpectTensor(RunOp1("aten.amax.default", {x, OpArg({1})}), DType::kFloat32,
               {2}, {kNaN, 5.0});
  ExpectTensor(RunOp1("aten.amin.default", {x, OpArg({1})}), DType::kFloat32,
               {2}, {kNaN, -2.0});
  // First NaN, else first of tied extremes.
  ExpectTensor(RunOp1("aten.argmax.default", {x, 1}), DType::kInt64, {2},
               {1, 1});
  ExpectTensor(RunOp1("aten.argmin.default", {x, 1}), DType::kInt64, {2},
               {1, 3});
  ExpectTensor(RunOp1("aten.argmax.default", {x}), DType::kInt64, {}, {1});
  ExpectTensor(RunOp1("aten.sum.dim_IntList", {x, OpArg({1})}), DType::kFloat32,
               {2}, {kNaN, 7.0});
  const Tensor h = MakeTensor(DType::kFloat16, {3}, {2.0, kNaN, 7.0});
  ExpectTensor(RunOp1("aten.amax.default", {h}), DType::kFloat16, {}, {kNaN});
  ExpectTensor(RunOp1("aten.argmin.default", {h}), DType::kInt64, {}, {1});
  const Tensor inf = MakeTensor(DType::kFloat64, {3}, {-kInf, 1.0, kInf});
  ExpectTensor(RunOp1("aten.amax.default", {inf}), DType::kFloat64, {}, {kInf});
  ExpectTensor(RunOp1("aten.argmin.default", {inf}), DType::kInt64, {}, {0});
}

TEST(ReductionSemantics, VarCorrection) {
  const Tensor x = MakeTensor(DType::kFloat64, {4}, {1.0, 2.0, 3.0, 6.0});
  // mean 3, squared deviations 4 + 1 + 0 + 9 = 14.
  ExpectTensor(RunOp1("aten.var.correction", {x}), DType::kFloat64, {},
               {14.0 / 3});
  ExpectTensor(RunOp1("aten.var.correction", {x}, {{"correction", 0}}),
               DType::kFloat64, {}, {14.0 / 4});
  ExpectTensor(RunOp1("aten.var.correction", {x}, {{"correction", 2.5}}),
               DType::kFloat64, {}, {14.0 / 1.5});
  // Correction >= N divides by zero: inf for a spread, NaN for no spread.
  ExpectTensor(RunOp1("aten.var.correction", {x}, {{"correction", 4}}),
               DType::kFloat64, {}, {kInf});
  const Tensor one = MakeTensor(DType::kFloat32, {1, 2}, {7.0, 8.0});
  ExpectTensor(RunOp1("aten.var.correction", {one, OpArg({0})}),
               DType::kFloat32, {2}, {kNaN, kNaN});
  ExpectTensor(
      RunOp1("aten.var.correction", {one, OpArg({0})}, {{"correction", 0}}),
      DType::kFloat32, {2}, {0.0, 0.0});
  ExpectTensor(
      RunOp1("aten.var.correction", {one, OpArg({1})}, {{"keepdim", true}}),
      DType::kFloat32, {1, 1}, {0.5});
}

TEST(ReductionSemantics, AnyAllTreatNaNAsTrueAndKeepUInt8) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 2}, {kNaN, 0.0, 0.0, 0.0});
  ExpectTensor(RunOp1("aten.any.dim", {x, 1}), DType::kBool, {2}, {1, 0});
  ExpectTensor(RunOp1("aten.all.dim", {x, 0, true}), DType::kBool, {1, 2},
               {0, 0});
  const Tensor u8 = MakeTensor(DType::kUInt8, {3}, {0, 7, 255});
  ExpectTensor(RunOp1("aten.any.default", {u8}), DType::kUInt8, {}, {1});
  ExpectTensor(RunOp1("aten.all.default", {u8}), DType::kUInt8, {}, {0});
  ExpectTensor(RunOp1("aten.all.dims", {u8, OpArg({0})}), DType::kUInt8, {},
               {0});
}

TEST(ReductionSemantics, WrappedNumberInput) {
  // A number literal in the self slot is a 0-dim tensor of its own dtype.
  ExpectTensor(RunOp1("aten.sum.default", {OpArg(3)}), DType::kInt64, {}, {3});
  ExpectTensor(RunOp1("aten.mean.default", {OpArg(2.5)}), DType::kFloat64, {},
               {2.5});
}

// ---------------------------------------------------------------------------
// Errors.

TEST(ReductionErrors, BadDims) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 10);
  ExpectInvalid(RunStatus("aten.sum.dim_IntList", {x, OpArg({0, -2})}), "dim",
                "appears multiple times");
  ExpectInvalid(RunStatus("aten.mean.dim", {x, OpArg({2})}), "dim",
                "dimension 2 out of range [-2, 1]");
  ExpectInvalid(RunStatus("aten.amax.default", {x, OpArg({-3})}), "dim",
                "out of range");
  ExpectInvalid(RunStatus("aten.argmax.default", {x, 5}), "dim",
                "out of range");
  ExpectInvalid(RunStatus("aten.prod.dim_int", {x, -3}), "dim", "out of range");
  ExpectInvalid(RunStatus("aten.any.dims", {x, OpArg({1, 1})}), "dim",
                "appears multiple times");
  ExpectInvalid(RunStatus("aten.var.correction", {x, OpArg({1, -1})}), "dim",
                "appears multiple times");
}

TEST(ReductionErrors, BadDTypes) {
  const Tensor ints = MakeTensor(DType::kInt64, {2}, {1, 2});
  ExpectInvalid(
      RunStatus("aten.mean.default", {ints}), "self",
      "mean(): could not infer output dtype. Input dtype must be either a "
      "floating point or complex dtype. Got: int64");
  ExpectInvalid(RunStatus("aten.mean.dim", {ints, OpArg({0})}), "self",
                "could not infer output dtype");
  const Tensor f = MakeTensor(DType::kFloat32, {2}, {1, 2});
  ExpectInvalid(
      RunStatus("aten.mean.default", {f}, {{"dtype", DType::kInt32}}), "dtype",
      "Optional dtype must be either a floating point or complex dtype. Got: "
      "int32");
  ExpectInvalid(RunStatus("aten.var.correction", {ints}), "self",
                "std and var only support floating point");
  const Tensor b = MakeTensor(DType::kBool, {2}, {1, 0});
  ExpectInvalid(RunStatus("aten.argmax.default", {b}), "self",
                "argmax(): not implemented");
  ExpectInvalid(RunStatus("aten.argmin.default", {b, 0}), "self",
                "argmin(): not implemented");
}

TEST(ReductionValuesIndices, MaxMinDimFirstTieAndFirstNaN) {
  Tensor x = NonContiguousCopy(MakeTensor(
      DType::kFloat32, {2, 5}, {1, 3, 3, kNaN, kNaN, 2, 0, 0, 5, 5}));
  auto max = RunOp("aten.max.dim", {x, 1});
  ASSERT_TRUE(max.ok()) << max.status();
  ExpectTensor((*max)[0], DType::kFloat32, {2}, {kNaN, 5});
  ExpectTensor((*max)[1], DType::kInt64, {2}, {3, 3});
  auto min = RunOp("aten.min.dim", {x, -1, true});
  ASSERT_TRUE(min.ok()) << min.status();
  ExpectTensor((*min)[0], DType::kFloat32, {2, 1}, {kNaN, 0});
  ExpectTensor((*min)[1], DType::kInt64, {2, 1}, {3, 1});
  // Integers and bool keep their dtype.
  Tensor i = MakeTensor(DType::kInt32, {2, 3}, {2, 1, 1, 0, 5, 0});
  auto imin = RunOp("aten.min.dim", {i, 1, true});
  ASSERT_TRUE(imin.ok()) << imin.status();
  ExpectTensor((*imin)[0], DType::kInt32, {2, 1}, {1, 0});
  ExpectTensor((*imin)[1], DType::kInt64, {2, 1}, {1, 0});
  Tensor b = MakeTensor(DType::kBool, {3}, {0, 1, 1});
  auto bmax = RunOp("aten.max.dim", {b, 0});
  ASSERT_TRUE(bmax.ok()) << bmax.status();
  ExpectTensor((*bmax)[0], DType::kBool, {}, {1});
  ExpectTensor((*bmax)[1], DType::kInt64, {}, {1});
  ExpectInvalid(
      RunStatus("aten.max.dim", {MakeTensor(DType::kFloat32, {2, 0}, {}), 1}),
      "dim", "max(): Expected reduction dim 1 to have non-zero size");
  ExpectInvalid(RunStatus("aten.min.dim", {x, 2}), "dim", "");
}

TEST(ReductionValuesIndices, VarDimUnbiasedAndBiased) {
  Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 4, 0, 0, 3});
  ExpectTensor(RunOp1("aten.var.dim", {x, std::vector<int64_t>{1}, true, true}),
               DType::kFloat32, {2, 1}, {7.0 / 3.0, 3.0});
  ExpectTensor(RunOp1("aten.var.dim", {x, std::vector<int64_t>{1}, false}),
               DType::kFloat32, {2}, {14.0 / 9.0, 2.0});
  // dim=None reduces everything.
  ExpectTensor(RunOp1("aten.var.dim", {x, Arg::None(), false}), DType::kFloat32,
               {}, {20.0 / 9.0});
  ExpectInvalid(
      RunStatus("aten.var.dim", {MakeTensor(DType::kInt32, {2}, {1, 2}),
                                 std::vector<int64_t>{0}}),
      "self", "std and var only support floating point");
}

}  // namespace
}  // namespace guardjit
