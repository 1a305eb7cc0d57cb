#ifndef GUARDJIT_CORE_ARG_VALUE_H_
#define GUARDJIT_CORE_ARG_VALUE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/scalar.h"

namespace guardjit {

// One output of a node: `graph.nodes()[node]`, output `index`.
struct ValueRef {
  int node = -1;
  int index = 0;
  friend bool operator==(const ValueRef& a, const ValueRef& b) {
    return a.node == b.node && a.index == b.index;
  }
};

struct NoneArg {
  friend bool operator==(const NoneArg&, const NoneArg&) { return true; }
};

// Name of a nested graph (a control-flow branch).
struct SubgraphRef {
  std::string name;
  friend bool operator==(const SubgraphRef& a, const SubgraphRef& b) {
    return a.name == b.name;
  }
};

// A reference by name, as written in a graph description; GraphBuilder
// resolves it to a ValueRef.
struct NameRef {
  std::string name;
  friend bool operator==(const NameRef& a, const NameRef& b) {
    return a.name == b.name;
  }
};

// A node argument: a reference to an earlier value or a literal.
class Arg {
 public:
  using List = std::vector<Arg>;

  Arg() : v_(NoneArg{}) {}
  static Arg None() { return Arg(); }
  static Arg Int(int64_t v) { return Arg(v); }
  static Arg Float(double v) { return Arg(v); }
  static Arg Bool(bool v) { return Arg(v); }
  static Arg String(std::string v) { return Arg(std::move(v)); }
  static Arg OfDType(DType v) { return Arg(v); }
  static Arg OfDevice(Device v) { return Arg(v); }
  static Arg OfList(List v) { return Arg(std::move(v)); }
  static Arg Value(ValueRef v) { return Arg(v); }
  static Arg Subgraph(std::string name) {
    return Arg(SubgraphRef{std::move(name)});
  }
  static Arg Ref(std::string name) { return Arg(NameRef{std::move(name)}); }

  bool is_none() const { return std::holds_alternative<NoneArg>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_dtype() const { return std::holds_alternative<DType>(v_); }
  bool is_device() const { return std::holds_alternative<Device>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }
  bool is_value() const { return std::holds_alternative<ValueRef>(v_); }
  bool is_subgraph() const { return std::holds_alternative<SubgraphRef>(v_); }
  bool is_name_ref() const { return std::holds_alternative<NameRef>(v_); }

  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  bool as_bool() const { return std::get<bool>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  DType as_dtype() const { return std::get<DType>(v_); }
  const Device& as_device() const { return std::get<Device>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& mutable_list() { return std::get<List>(v_); }
  ValueRef as_value() const { return std::get<ValueRef>(v_); }
  const std::string& as_subgraph() const {
    return std::get<SubgraphRef>(v_).name;
  }
  const std::string& as_name_ref() const { return std::get<NameRef>(v_).name; }

  // A number literal as an ATen Scalar. Requires is_number().
  Scalar as_scalar() const {
    if (is_int()) return Scalar(as_int());
    if (is_float()) return Scalar(as_float());
    return Scalar(as_bool());
  }

  // Kind of argument, for error messages: "int", "Tensor", "list", ...
  const char* kind_name() const;

  friend bool operator==(const Arg& a, const Arg& b) { return a.v_ == b.v_; }

 private:
  template <typename T>
  explicit Arg(T v) : v_(std::move(v)) {}

  std::variant<NoneArg, int64_t, double, bool, std::string, DType, Device, List,
               ValueRef, SubgraphRef, NameRef>
      v_;
};

inline const char* Arg::kind_name() const {
  if (is_none()) return "None";
  if (is_int()) return "int";
  if (is_float()) return "float";
  if (is_bool()) return "bool";
  if (is_string()) return "str";
  if (is_dtype()) return "dtype";
  if (is_device()) return "device";
  if (is_list()) return "list";
  if (is_value() || is_name_ref()) return "Tensor";
  return "subgraph";
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ARG_VALUE_H_
