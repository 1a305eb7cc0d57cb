#ifndef GUARDJIT_CORE_BOUND_ARGS_H_
#define GUARDJIT_CORE_BOUND_ARGS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/graph.h"
#include "core/op_schema.h"
#include "core/scalar.h"
#include "core/sym_int.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"

namespace guardjit {

// The integer type of size arguments as `T`'s users see them: SymInt for
// shape inference (sizes may be symbolic), int64_t for kernels.
template <typename T>
struct ArgInt {
  using type = int64_t;
};
template <>
struct ArgInt<TensorMeta> {
  using type = SymInt;
};

// The value of a node that computes an integer (aten.sym_size.int, ...).
inline SymInt IntOfValue(const TensorMeta& v) {
  return v.sym_value.value_or(SymInt(0));
}
inline int64_t IntOfValue(const Tensor& v) { return v.ItemAsInt64(); }

// A node's arguments, read by schema position, with tensor arguments resolved
// to `T`: TensorMeta for shape/dtype inference, Tensor for kernels. The graph
// loader has already checked every argument against the schema, so accessors
// only convert. Integer arguments may refer to nodes that compute integers
// (symbolic sizes); int_arg() and int_list() specialize those, sym_int() and
// sym_int_list() keep them symbolic.
template <typename T>
class BoundArgs {
 public:
  using Int = typename ArgInt<T>::type;

  // Held by value: callers pass lambdas as temporaries.
  using Lookup = std::function<T(ValueRef)>;
  using Wrap = std::function<T(const Scalar&)>;

  BoundArgs(const Node& node, Lookup lookup, Wrap wrap)
      : node_(node), lookup_(std::move(lookup)), wrap_(std::move(wrap)) {}

  const Node& node() const { return node_; }

  // Kernels: where output `i` may be written, or null. A destination has the
  // output's dtype and sizes, any non-overlapping strides, and overlaps no
  // argument. A kernel that writes into one must not fail after its first
  // write (KernelRegistry::writes_destinations); others ignore it.
  void set_destinations(absl::Span<const T* const> destinations) {
    destinations_ = destinations;
  }
  const T* destination(size_t i) const {
    return i < destinations_.size() ? destinations_[i] : nullptr;
  }
  int size() const { return static_cast<int>(node_.args.size()); }
  const Arg& raw(int i) const { return node_.args[i]; }
  bool is_none(int i) const { return raw(i).is_none(); }

  // A tensor argument; a number literal becomes a wrapped-number tensor.
  T tensor(int i) const { return Resolve(raw(i)); }
  std::optional<T> optional_tensor(int i) const {
    if (is_none(i)) return std::nullopt;
    return tensor(i);
  }
  std::vector<T> tensor_list(int i) const {
    std::vector<T> out;
    for (const Arg& a : raw(i).as_list()) out.push_back(Resolve(a));
    return out;
  }

  // A `Tensor?[]` argument: None elements stay nullopt.
  std::vector<std::optional<T>> optional_tensor_list(int i) const {
    std::vector<std::optional<T>> out;
    for (const Arg& a : raw(i).as_list()) {
      if (a.is_none()) {
        out.push_back(std::nullopt);
      } else {
        out.push_back(Resolve(a));
      }
    }
    return out;
  }

  Int sym_int(int i) const { return ResolveInt(raw(i)); }
  std::optional<Int> optional_sym_int(int i) const {
    if (is_none(i)) return std::nullopt;
    return sym_int(i);
  }
  std::vector<Int> sym_int_list(int i) const {
    const Arg& a = raw(i);
    if (!a.is_list()) return {ResolveInt(a)};
    std::vector<Int> out;
    for (const Arg& item : a.as_list()) out.push_back(ResolveInt(item));
    return out;
  }

  int64_t int_arg(int i) const { return sym_int(i); }
  std::optional<int64_t> optional_int(int i) const {
    if (is_none(i)) return std::nullopt;
    return int_arg(i);
  }
  std::vector<int64_t> int_list(int i) const {
    std::vector<int64_t> out;
    for (const Int& v : sym_int_list(i)) out.push_back(v);
    return out;
  }
  std::optional<std::vector<int64_t>> optional_int_list(int i) const {
    if (is_none(i)) return std::nullopt;
    return int_list(i);
  }
  double float_arg(int i) const { return raw(i).as_scalar().to_double(); }
  std::optional<double> optional_float(int i) const {
    if (is_none(i)) return std::nullopt;
    return float_arg(i);
  }
  bool bool_arg(int i) const { return raw(i).as_scalar().to_bool(); }
  std::optional<bool> optional_bool(int i) const {
    if (is_none(i)) return std::nullopt;
    return bool_arg(i);
  }
  // A size computed by a node specializes here.
  Scalar scalar(int i) const {
    if (raw(i).is_value()) return Scalar(static_cast<int64_t>(sym_int(i)));
    return raw(i).as_scalar();
  }
  std::optional<Scalar> optional_scalar(int i) const {
    if (is_none(i)) return std::nullopt;
    return scalar(i);
  }
  std::optional<absl::string_view> optional_string(int i) const {
    if (is_none(i)) return std::nullopt;
    return absl::string_view(raw(i).as_string());
  }
  std::optional<DType> optional_dtype(int i) const {
    if (is_none(i)) return std::nullopt;
    return raw(i).as_dtype();
  }

 private:
  Int ResolveInt(const Arg& a) const {
    if (a.is_value()) return IntOfValue(lookup_(a.as_value()));
    return a.as_scalar().to_int();
  }
  T Resolve(const Arg& a) const {
    if (a.is_value()) return lookup_(a.as_value());
    return wrap_(a.as_scalar());
  }

  const Node& node_;
  Lookup lookup_;
  Wrap wrap_;
  absl::Span<const T* const> destinations_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_BOUND_ARGS_H_
