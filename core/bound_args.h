#ifndef GUARDJIT_CORE_BOUND_ARGS_H_
#define GUARDJIT_CORE_BOUND_ARGS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/graph.h"
#include "core/op_schema.h"
#include "core/scalar.h"

namespace guardjit {

// A node's arguments, read by schema position, with tensor arguments resolved
// to `T`: TensorMeta for shape/dtype inference, Tensor for kernels. The graph
// loader has already checked every argument against the schema, so accessors
// only convert.
template <typename T>
class BoundArgs {
 public:
  // Held by value: callers pass lambdas as temporaries.
  using Lookup = std::function<T(ValueRef)>;
  using Wrap = std::function<T(const Scalar&)>;

  BoundArgs(const Node& node, Lookup lookup, Wrap wrap)
      : node_(node), lookup_(std::move(lookup)), wrap_(std::move(wrap)) {}

  const Node& node() const { return node_; }
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

  int64_t int_arg(int i) const { return raw(i).as_scalar().to_int(); }
  std::optional<int64_t> optional_int(int i) const {
    if (is_none(i)) return std::nullopt;
    return int_arg(i);
  }
  std::vector<int64_t> int_list(int i) const {
    const Arg& a = raw(i);
    if (a.is_int()) return {a.as_int()};
    std::vector<int64_t> out;
    for (const Arg& item : a.as_list())
      out.push_back(item.as_scalar().to_int());
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
  Scalar scalar(int i) const { return raw(i).as_scalar(); }
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
  T Resolve(const Arg& a) const {
    if (a.is_value()) return lookup_(a.as_value());
    return wrap_(a.as_scalar());
  }

  const Node& node_;
  Lookup lookup_;
  Wrap wrap_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_BOUND_ARGS_H_
