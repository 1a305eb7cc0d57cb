#include "core/symbolic_inputs.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

// Symbolic strides for `sizes` when the observed strides are the contiguous
// strides of some order of the dims (row-major, transposed, channels-last);
// nullopt otherwise.
std::optional<SymShape> StrideExprs(const InputView& v, const SymShape& sizes) {
  std::vector<int> order(v.rank);
  std::iota(order.begin(), order.end(), 0);
  // Outermost first: larger strides first, ties in dim order.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return v.strides[a] > v.strides[b]; });
  SymShape exprs(v.rank);
  SymInt expected = 1;
  int64_t expected_hint = 1;
  for (int k = v.rank - 1; k >= 0; --k) {
    const int d = order[k];
    if (v.strides[d] != expected_hint) return std::nullopt;
    exprs[d] = expected;
    if (v.sizes[d] > 1) {
      expected = expected * sizes[d];
      expected_hint *= v.sizes[d];
    }
  }
  return exprs;
}

}  // namespace

SymbolicInputs MakeSymbolicInputs(const std::vector<std::string>& names,
                                  const CallSignature& call,
                                  const std::vector<DynamicDim>& dynamic,
                                  ShapeEnv& env) {
  SymbolicInputs out;
  absl::flat_hash_map<int64_t, int> duck;  // size -> symbol
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const InputView& v = call.inputs[i];
    TensorMeta meta(v.dtype, SymShape(), v.device);
    TensorGuard guard;
    guard.name = names[i];
    guard.dtype = v.dtype;
    guard.device = v.device;
    guard.requires_grad = v.requires_grad;
    bool any_symbolic = false;
    for (int d = 0; d < v.rank; ++d) {
      const int64_t size = v.sizes[d];
      const DynamicDim* dyn = nullptr;
      for (const DynamicDim& dd : dynamic) {
        if (dd.input == static_cast<int>(i) && dd.dim == d) dyn = &dd;
      }
      const bool symbolic =
          dyn != nullptr && size >= 2 && size >= dyn->min && size <= dyn->max;
      if (!symbolic) {
        meta.sizes.push_back(size);
        guard.sizes.push_back(size);
        continue;
      }
      any_symbolic = true;
      const bool user_range = dyn->min != 2 || dyn->max != kSymMax;
      int symbol;
      auto it = duck.find(size);
      if (!user_range && it != duck.end()) {
        symbol = it->second;
      } else {
        symbol = env.NewSymbol(size, absl::StrCat(names[i], ".size()[", d, "]"),
                               static_cast<int>(i), d, dyn->min, dyn->max);
        out.symbolic.symbol_names.push_back(env.symbols()[symbol].source);
        if (!user_range) duck[size] = symbol;
      }
      meta.sizes.push_back(SymInt(SymExpr::Symbol(symbol), size));
      guard.sizes.push_back(std::nullopt);
      out.symbolic.dims.push_back({static_cast<int32_t>(i),
                                   static_cast<int16_t>(d),
                                   static_cast<int32_t>(symbol)});
    }
    std::optional<SymShape> strides;
    if (any_symbolic) strides = StrideExprs(v, meta.sizes);
    for (int d = 0; d < v.rank; ++d) {
      if (strides && (*strides)[d].is_symbolic()) {
        guard.strides.push_back(std::nullopt);
        out.symbolic.strides.push_back({static_cast<int32_t>(i),
                                        static_cast<int16_t>(d),
                                        (*strides)[d].expr()});
      } else {
        guard.strides.push_back(v.strides[d]);
      }
    }
    out.metas.push_back(std::move(meta));
    out.tensors.push_back(std::move(guard));
  }
  return out;
}

GuardTree MakeGuardTree(const CallSignature& call, SymbolicInputs inputs,
                        const ShapeEnv& env) {
  std::vector<int> alias_of;
  ComputeAliasing(call.inputs, alias_of);
  SymbolicGuards symbolic = std::move(inputs.symbolic);
  if (!symbolic.empty()) symbolic.shape_guards = env.AllGuards();
  return GuardTree(call.ambient, std::move(inputs.tensors), std::move(alias_of),
                   std::move(symbolic));
}

GuardTree StaticGuardTree(const std::vector<std::string>& names,
                          const CallSignature& call) {
  ShapeEnv env;
  return MakeGuardTree(call, MakeSymbolicInputs(names, call, {}, env), env);
}

}  // namespace guardjit
