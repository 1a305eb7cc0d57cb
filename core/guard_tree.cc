#include "core/guard_tree.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/hash_mix.h"
#include "core/value_inputs.h"

namespace guardjit {
namespace {

// What TENSOR_MATCH checks exactly in every entry, packed into one word.
uint64_t InputKey(DType dtype, const Device& device, bool requires_grad,
                  int rank) {
  return static_cast<uint64_t>(dtype) |
         (static_cast<uint64_t>(device.type) << 8) |
         (static_cast<uint64_t>(static_cast<uint32_t>(device.index)) << 16) |
         (static_cast<uint64_t>(requires_grad) << 32) |
         (static_cast<uint64_t>(rank) << 40);
}

std::string OptionalList(const std::vector<std::optional<int64_t>>& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) parts.push_back(d ? absl::StrCat(*d) : "None");
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

const char* PyBool(bool b) { return b ? "True" : "False"; }

}  // namespace

GuardTree::GuardTree(AmbientState ambient, std::vector<TensorGuard> tensors,
                     std::vector<int> alias_of, SymbolicGuards symbolic)
    : ambient_(ambient),
      tensors_(std::move(tensors)),
      alias_of_(std::move(alias_of)),
      symbolic_(std::move(symbolic)) {
  uint64_t h = HashTerm(0, ambient_.Bits());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorGuard& t = tensors_[i];
    input_keys_.push_back(
        InputKey(t.dtype, t.device, t.requires_grad, t.rank()));
    h += HashTerm(2 * i + 1, input_keys_.back());
    for (int d = 0; d < t.rank(); ++d) {
      const auto in = static_cast<int32_t>(i);
      const auto dim = static_cast<int16_t>(d);
      if (t.sizes[d]) dim_checks_.push_back({in, dim, false, *t.sizes[d]});
      if (t.strides[d]) dim_checks_.push_back({in, dim, true, *t.strides[d]});
    }
    h += HashTerm(2 * i + 2, static_cast<uint64_t>(alias_of_[i]));
    if (t.values.has_value()) value_checks_.push_back(static_cast<int32_t>(i));
  }
  static_key_ = HashMix(h, tensors_.size());
}

uint64_t GuardTree::StaticKeyOf(const CallSignature& call,
                                absl::Span<const int> alias_of) {
  uint64_t h = HashTerm(0, call.ambient.Bits());
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const InputView& v = call.inputs[i];
    h += HashTerm(2 * i + 1,
                  InputKey(v.dtype, v.device, v.requires_grad, v.rank));
    h += HashTerm(2 * i + 2, static_cast<uint64_t>(alias_of[i]));
  }
  return HashMix(h, call.inputs.size());
}

bool GuardTree::Check(const CallSignature& call,
                      absl::Span<int64_t> bound) const {
  return CheckWithAliasing(call, {}, bound) &&
         AliasingMatches(call.inputs, alias_of_);
}

bool GuardTree::CheckWithAliasing(const CallSignature& call,
                                  absl::Span<const int> alias_of,
                                  absl::Span<int64_t> bound) const {
  if (call.ambient.Bits() != ambient_.Bits()) return false;
  if (call.inputs.size() != tensors_.size()) return false;
  for (size_t i = 0; i < input_keys_.size(); ++i) {
    const InputView& v = call.inputs[i];
    if (InputKey(v.dtype, v.device, v.requires_grad, v.rank) !=
        input_keys_[i]) {
      return false;
    }
  }
  for (const DimCheck& c : dim_checks_) {
    const InputView& v = call.inputs[c.input];
    if ((c.stride ? v.strides : v.sizes)[c.dim] != c.value) return false;
  }
  // An empty span means the caller checks aliasing itself (Check()). A plain
  // loop: std::equal on ints becomes a memcmp call, costly for a few inputs.
  for (size_t i = 0; i < alias_of.size(); ++i) {
    if (alias_of[i] != alias_of_[i]) return false;
  }
  // The dims above fixed the element count; a memcmp for int64 inputs.
  for (int32_t i : value_checks_) {
    if (!ValuesMatch(call.inputs[i], *tensors_[i].values)) return false;
  }
  if (symbolic_.empty()) return true;
  if (bound.size() >= static_cast<size_t>(symbolic_.num_symbols())) {
    return CheckSymbolic(call, bound.first(symbolic_.num_symbols()), nullptr);
  }
  constexpr int kStackSymbols = 16;
  int64_t stack_values[kStackSymbols];
  std::vector<int64_t> heap_values;
  absl::Span<int64_t> values;
  if (symbolic_.num_symbols() <= kStackSymbols) {
    values = absl::Span<int64_t>(stack_values, symbolic_.num_symbols());
  } else {
    heap_values.resize(symbolic_.num_symbols());
    values = absl::MakeSpan(heap_values);
  }
  return CheckSymbolic(call, values, nullptr);
}

std::string GuardTree::Expr(const SymExpr& e) const {
  return e.ToString([&](int s) { return symbolic_.symbol_names[s]; });
}

bool GuardTree::CheckSymbolic(const CallSignature& call,
                              absl::Span<int64_t> values, std::string* reason,
                              bool* chosen_bound) const {
  // Bindings are ordered so that each symbol's first one binds it.
  uint64_t bound_small = 0;  // bit per symbol below 64
  std::vector<bool> bound_large;
  auto is_bound = [&](int s) {
    if (s < 64) return ((bound_small >> s) & 1) != 0;
    return s - 64 < static_cast<int>(bound_large.size()) && bound_large[s - 64];
  };
  auto bind = [&](int s) {
    if (s < 64) {
      bound_small |= uint64_t{1} << s;
    } else {
      if (bound_large.size() <= static_cast<size_t>(s - 64))
        bound_large.resize(s - 63);
      bound_large[s - 64] = true;
    }
  };
  for (const SymbolicGuards::DimBinding& b : symbolic_.dims) {
    const int64_t size = call.inputs[b.input].sizes[b.dim];
    if (!is_bound(b.symbol)) {
      values[b.symbol] = size;
      bind(b.symbol);
    } else if (values[b.symbol] != size) {
      if (reason != nullptr) {
        *reason = absl::StrCat(
            symbolic_.symbol_names[b.symbol], " == ", tensors_[b.input].name,
            ".size()[", b.dim, "] (", values[b.symbol], " vs ", size, ")");
      }
      return false;
    }
  }
  for (const SymbolicGuards::StrideCheck& c : symbolic_.strides) {
    const int64_t want = c.expr.Evaluate(values);
    const int64_t got = call.inputs[c.input].strides[c.dim];
    if (want != got) {
      if (reason != nullptr) {
        *reason = absl::StrCat(
            "tensor '", tensors_[c.input].name, "' stride mismatch at index ",
            c.dim, ". expected ", Expr(c.expr), " = ", want, ", actual ", got);
      }
      return false;
    }
  }
  for (const ShapeGuard& g : symbolic_.shape_guards) {
    const int64_t lhs = g.lhs.Evaluate(values), rhs = g.rhs.Evaluate(values);
    if (!EvalRel(g.rel, lhs, rhs)) {
      if (reason != nullptr) {
        std::string where;
        for (size_t s = 0; s < symbolic_.symbol_names.size(); ++s) {
          if (g.lhs.Mentions(static_cast<int>(s)) ||
              g.rhs.Mentions(static_cast<int>(s))) {
            absl::StrAppend(&where, where.empty() ? "" : ", ",
                            symbolic_.symbol_names[s], " = ", values[s]);
          }
        }
        *reason = absl::StrCat(Expr(g.lhs), " ", SymRelName(g.rel), " ",
                               Expr(g.rhs), "  # ", where);
      }
      return false;
    }
  }
  for (const SymbolicGuards::ChosenBound& b : symbolic_.chosen_bounds) {
    if (values[b.symbol] > b.max) {
      if (reason != nullptr) {
        *reason = absl::StrCat(symbolic_.symbol_names[b.symbol], " = ",
                               values[b.symbol], " exceeds ", b.max,
                               ", the bound under which ",
                               symbolic_.chosen_bounds_purpose);
      }
      if (chosen_bound != nullptr) *chosen_bound = true;
      return false;
    }
  }
  return true;
}

std::optional<std::string> GuardTree::FailureReason(const CallSignature& call,
                                                    bool* chosen_bound) const {
  if (chosen_bound != nullptr) *chosen_bound = false;
  if (call.ambient.grad_mode != ambient_.grad_mode) {
    return absl::StrCat("GLOBAL_STATE changed: grad_mode. expected ",
                        PyBool(ambient_.grad_mode), ", actual ",
                        PyBool(call.ambient.grad_mode));
  }
  if (call.ambient.deterministic_algorithms !=
      ambient_.deterministic_algorithms) {
    return absl::StrCat(
        "GLOBAL_STATE changed: deterministic_algorithms. expected ",
        PyBool(ambient_.deterministic_algorithms), ", actual ",
        PyBool(call.ambient.deterministic_algorithms));
  }
  if (!(call.ambient.default_device == ambient_.default_device)) {
    return absl::StrCat("DEFAULT_DEVICE changed. expected ",
                        ambient_.default_device.ToString(), ", actual ",
                        call.ambient.default_device.ToString());
  }
  if (call.inputs.size() != tensors_.size()) {
    return absl::StrCat("expected ", tensors_.size(), " inputs, got ",
                        call.inputs.size());
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorGuard& t = tensors_[i];
    const InputView& v = call.inputs[i];
    const std::string who = absl::StrCat("tensor '", t.name, "'");
    if (v.dtype != t.dtype) {
      return absl::StrCat(who, " dtype mismatch. expected ", DTypeName(t.dtype),
                          ", actual ", DTypeName(v.dtype));
    }
    if (!(v.device == t.device)) {
      return absl::StrCat(who, " device mismatch. expected ",
                          t.device.ToString(), ", actual ",
                          v.device.ToString());
    }
    if (v.requires_grad != t.requires_grad) {
      return absl::StrCat(who,
                          " requires_grad mismatch. expected requires_grad=",
                          t.requires_grad ? 1 : 0);
    }
    if (v.rank != t.rank()) {
      return absl::StrCat(who, " rank mismatch. expected ", t.rank(),
                          ", actual ", v.rank);
    }
    for (int d = 0; d < v.rank; ++d) {
      if (t.sizes[d] && *t.sizes[d] != v.sizes[d]) {
        return absl::StrCat(who, " size mismatch at index ", d, ". expected ",
                            *t.sizes[d], ", actual ", v.sizes[d]);
      }
    }
    for (int d = 0; d < v.rank; ++d) {
      if (t.strides[d] && *t.strides[d] != v.strides[d]) {
        return absl::StrCat(who, " stride mismatch at index ", d, ". expected ",
                            *t.strides[d], ", actual ", v.strides[d]);
      }
    }
  }
  std::vector<int> alias_of;
  ComputeAliasing(call.inputs, alias_of);
  for (size_t i = 0; i < alias_of.size(); ++i) {
    if (alias_of[i] == alias_of_[i]) continue;
    if (alias_of[i] != static_cast<int>(i)) {
      return absl::StrCat("Duplicate tensors found: '",
                          tensors_[alias_of[i]].name, "' and '",
                          tensors_[i].name, "' (NO_TENSOR_ALIASING)");
    }
    return absl::StrCat("tensor '", tensors_[i].name,
                        "' is no longer the same tensor as '",
                        tensors_[alias_of_[i]].name, "'");
  }
  for (int32_t i : value_checks_) {
    const InputView& v = call.inputs[i];
    if (!ValuesMatch(v, *tensors_[i].values)) {
      return absl::StrCat(
          "tensor '", tensors_[i].name,
          "' value mismatch (value-specialized). expected ",
          FormatValues(tensors_[i].dtype, *tensors_[i].values), ", actual ",
          v.data == nullptr ? std::string("(no data)")
                            : FormatValues(v.dtype, ReadValues(v)));
    }
  }
  if (!symbolic_.empty()) {
    std::vector<int64_t> values(symbolic_.num_symbols());
    std::string reason;
    if (!CheckSymbolic(call, absl::MakeSpan(values), &reason, chosen_bound)) {
      return reason;
    }
  }
  return std::nullopt;
}

int GuardTree::num_guards() const {
  // Ambient guards, then TENSOR_MATCH and NO_TENSOR_ALIASING per input, then
  // duck-sizing equalities, symbolic strides and shape guards.
  int n = 2 + 2 * static_cast<int>(tensors_.size()) +
          static_cast<int>(value_checks_.size());
  n += static_cast<int>(symbolic_.dims.size()) - symbolic_.num_symbols();
  n += static_cast<int>(symbolic_.strides.size() +
                        symbolic_.shape_guards.size() +
                        symbolic_.chosen_bounds.size());
  return n;
}

std::string GuardTree::Dump() const {
  std::string out = "TREE_GUARD_MANAGER:\n+- RootGuardManager\n";
  absl::StrAppend(&out, "| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == ",
                  ambient_.default_device.ToString(), "\n");
  absl::StrAppend(&out, "| +- GLOBAL_STATE: ___check_global_state(grad_mode=",
                  PyBool(ambient_.grad_mode), ", deterministic_algorithms=",
                  PyBool(ambient_.deterministic_algorithms), ")\n");
  std::vector<std::string> distinct;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (alias_of_[i] == static_cast<int>(i))
      distinct.push_back(tensors_[i].name);
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorGuard& t = tensors_[i];
    absl::StrAppend(&out, "| +- GuardManager: source=", t.name,
                    ", accessed_by=InputAccessor(", i, ")\n");
    absl::StrAppend(&out, "| | +- TENSOR_MATCH: check_tensor(", t.name,
                    ", torch.", DTypeName(t.dtype),
                    ", device=", t.device.ToString(),
                    ", requires_grad=", PyBool(t.requires_grad),
                    ", size=", OptionalList(t.sizes),
                    ", stride=", OptionalList(t.strides), ")\n");
    if (t.values.has_value()) {
      absl::StrAppend(&out, "| | +- VALUE_MATCH: ", t.name,
                      ".tolist() == ", FormatValues(t.dtype, *t.values), "\n");
    }
    if (alias_of_[i] != static_cast<int>(i)) {
      absl::StrAppend(&out, "| | +- DUPLICATE_INPUT: ", t.name, " is ",
                      tensors_[alias_of_[i]].name, "\n");
    } else if (distinct.size() > 1) {
      absl::StrAppend(&out, "| | +- NO_TENSOR_ALIASING: check_no_aliasing(",
                      absl::StrJoin(distinct, ", "), ")\n");
    }
  }
  // Shape guards last, as Dynamo prints its symbolic-shape LAMBDA_GUARDs.
  std::vector<bool> seen(symbolic_.num_symbols(), false);
  for (const SymbolicGuards::DimBinding& b : symbolic_.dims) {
    if (!seen[b.symbol]) {
      seen[b.symbol] = true;
      continue;
    }
    absl::StrAppend(&out, "| +- LAMBDA_GUARD: ", tensors_[b.input].name,
                    ".size()[", b.dim,
                    "] == ", symbolic_.symbol_names[b.symbol], "\n");
  }
  for (const SymbolicGuards::StrideCheck& c : symbolic_.strides) {
    absl::StrAppend(&out, "| +- LAMBDA_GUARD: ", tensors_[c.input].name,
                    ".stride()[", c.dim, "] == ", Expr(c.expr), "\n");
  }
  for (const ShapeGuard& g : symbolic_.shape_guards) {
    absl::StrAppend(&out, "| +- LAMBDA_GUARD: ", Expr(g.lhs), " ",
                    SymRelName(g.rel), " ", Expr(g.rhs), "\n");
  }
  // Bounds the compiler chose (Executable::chosen_bounds), with why.
  for (const SymbolicGuards::ChosenBound& b : symbolic_.chosen_bounds) {
    absl::StrAppend(&out,
                    "| +- LAMBDA_GUARD: ", symbolic_.symbol_names[b.symbol],
                    " <= ", b.max, "  # the bound under which ",
                    symbolic_.chosen_bounds_purpose, "\n");
  }
  return out;
}

}  // namespace guardjit
