#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "runtime/eager_interpreter.h"
#include "runtime/tensor_copy.h"

namespace guardjit::testing {

Tensor MakeTensor(DType dtype, IntSpan sizes,
                  const std::vector<double>& values) {
  Tensor f64 = *Tensor::Empty(DType::kFloat64, sizes);
  EXPECT_EQ(static_cast<int64_t>(values.size()), f64.numel())
      << "MakeTensor: value count does not match the shape";
  for (int64_t i = 0;
       i < f64.numel() && i < static_cast<int64_t>(values.size()); ++i) {
    f64.data_as<double>()[i] = values[i];
  }
  return *CopyAs(f64, dtype);
}

std::vector<double> ToDoubles(const Tensor& t) {
  Tensor f64 = *CopyAs(t, DType::kFloat64);
  return std::vector<double>(f64.data_as<double>(),
                             f64.data_as<double>() + f64.numel());
}

Tensor RandomTensor(DType dtype, IntSpan sizes, uint64_t seed, double lo,
                    double hi) {
  std::mt19937_64 rng(seed);
  Tensor f64 = *Tensor::Empty(DType::kFloat64, sizes);
  std::uniform_real_distribution<double> uni(lo, hi);
  for (int64_t i = 0; i < f64.numel(); ++i) {
    double v = uni(rng);
    if (dtype == DType::kBool)
      v = v > (lo + hi) / 2 ? 1 : 0;
    else if (IsIntegral(dtype, false))
      v = std::floor(v);
    if (dtype == DType::kUInt8) v = std::fabs(v);
    f64.data_as<double>()[i] = v;
  }
  return *CopyAs(f64, dtype);
}

Tensor Iota(IntSpan sizes, DType dtype) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return MakeTensor(dtype, sizes, v);
}

Tensor NonContiguousCopy(const Tensor& t) {
  // Store dims reversed with one padding element between rows, then view back.
  const int rank = t.dim();
  const int64_t offset = 3;
  Shape strides(rank);
  int64_t s = 1;
  for (int d = 0; d < rank; ++d) {  // dim 0 fastest: transposed storage
    strides[d] = s;
    s *= t.size(d) + 1;
  }
  auto storage = *Tensor::Empty(t.dtype(), {s + offset});
  Tensor view = storage.AsStrided(t.sizes(), strides, offset);
  CopyInto(view, t);
  return view;
}

OpArg::OpArg(std::initializer_list<int64_t> ints) {
  Arg::List items;
  for (int64_t i : ints) items.push_back(Arg::Int(i));
  v_ = Arg::OfList(std::move(items));
}

OpArg::OpArg(const std::vector<int64_t>& ints) {
  Arg::List items;
  for (int64_t i : ints) items.push_back(Arg::Int(i));
  v_ = Arg::OfList(std::move(items));
}

absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& target, std::vector<OpArg> args,
    std::vector<std::pair<std::string, OpArg>> kwargs, int num_list_outputs) {
  GraphBuilder builder("run_op");
  std::vector<Tensor> inputs;
  auto to_arg = [&](const OpArg& a) -> absl::StatusOr<Arg> {
    if (const auto* t = std::get_if<Tensor>(&a.value())) {
      std::string name = absl::StrCat("in", inputs.size());
      auto ref = builder.AddPlaceholder(name);
      if (!ref.ok()) return ref.status();
      inputs.push_back(*t);
      return Arg::Ref(name);
    }
    if (const auto* ts = std::get_if<std::vector<Tensor>>(&a.value())) {
      Arg::List items;
      for (const Tensor& t : *ts) {
        // A default-constructed Tensor is a None element (Tensor?[]).
        if (t.data() == nullptr && t.dim() == 0) {
          items.push_back(Arg::None());
          continue;
        }
        std::string name = absl::StrCat("in", inputs.size());
        auto ref = builder.AddPlaceholder(name);
        if (!ref.ok()) return ref.status();
        inputs.push_back(t);
        items.push_back(Arg::Ref(name));
      }
      return Arg::OfList(std::move(items));
    }
    return std::get<Arg>(a.value());
  };
  std::vector<Arg> node_args;
  for (const OpArg& a : args) {
    auto arg = to_arg(a);
    if (!arg.ok()) return arg.status();
    node_args.push_back(*std::move(arg));
  }
  Kwargs node_kwargs;
  for (const auto& [name, a] : kwargs) {
    auto arg = to_arg(a);
    if (!arg.ok()) return arg.status();
    node_kwargs.emplace_back(name, *std::move(arg));
  }
  auto node = builder.AddNode("op", target, std::move(node_args),
                              std::move(node_kwargs));
  if (!node.ok()) return node.status();
  const OpDef* def = OpRegistry::Global().Find(target);
  int n = def->schema.returns_list ? num_list_outputs : def->schema.num_returns;
  std::vector<Arg> outputs;
  if (n == 1 && !def->schema.returns_list) {
    outputs.push_back(Arg::Ref("op"));
  } else {
    for (int i = 0; i < n; ++i) {
      std::string name = absl::StrCat("op_", i);
      auto item =
          builder.AddNode(name, "getitem", {Arg::Ref("op"), Arg::Int(i)});
      if (!item.ok()) return item.status();
      outputs.push_back(Arg::Ref(name));
    }
  }
  auto status = builder.SetOutputs(std::move(outputs));
  if (!status.ok()) return status;
  auto graph = builder.Finish();
  if (!graph.ok()) return graph.status();
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*std::move(graph)));
  if (!interp.ok()) return interp.status();
  return (*interp)->Run(inputs);
}

Tensor RunOp1(const std::string& target, std::vector<OpArg> args,
              std::vector<std::pair<std::string, OpArg>> kwargs) {
  auto out = RunOp(target, std::move(args), std::move(kwargs));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->empty()) return *Tensor::Empty(DType::kFloat32, {0});
  EXPECT_EQ(out->size(), 1u);
  return (*out)[0];
}

void ExpectTensor(const Tensor& actual, DType dtype, IntSpan sizes,
                  const std::vector<double>& expected, double atol,
                  double rtol) {
  EXPECT_EQ(DTypeName(actual.dtype()), DTypeName(dtype));
  ASSERT_EQ(Shape(actual.sizes().begin(), actual.sizes().end()),
            Shape(sizes.begin(), sizes.end()));
  std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at flat index " << i;
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "at flat index " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], atol + rtol * std::fabs(expected[i]))
          << "at flat index " << i;
    }
  }
}

void ExpectStoragesOfTheirOwn(const std::vector<const Tensor*>& tensors) {
  std::vector<const Storage*> storages;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    SCOPED_TRACE(absl::StrCat("tensor ", i, " ", t.DebugString()));
    ASSERT_NE(t.storage(), nullptr);
    EXPECT_EQ(t.data(), t.storage()->data());
    EXPECT_EQ(t.storage()->nbytes(),
              static_cast<size_t>(t.numel() * t.item_size()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
    storages.push_back(t.storage().get());
  }
  std::sort(storages.begin(), storages.end());
  EXPECT_EQ(std::adjacent_find(storages.begin(), storages.end()),
            storages.end());
}

}  // namespace guardjit::testing
