#ifndef GUARDJIT_CORE_TENSOR_META_H_
#define GUARDJIT_CORE_TENSOR_META_H_

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/sym_int.h"
#include "core/tensor.h"

namespace guardjit {

// What shape and dtype inference knows of a value: PyTorch's "meta" tensor.
// Sizes may be symbolic (SymInt) while a dynamic entry is specialized;
// everywhere else they are concrete. A node computing a size
// (aten.sym_size.int, operator.mul, ...) has a 0-dim int64 (or bool) meta
// with the value in `sym_value`.
struct TensorMeta {
  TensorMeta() = default;
  TensorMeta(DType dtype, SymShape sizes, Device device = Device(),
             bool wrapped_number = false,
             std::optional<SymInt> sym_value = std::nullopt)
      : dtype(dtype),
        sizes(std::move(sizes)),
        device(device),
        wrapped_number(wrapped_number),
        sym_value(std::move(sym_value)) {}
  // Concrete sizes (a template so that `{}` still means SymShape).
  template <typename S,
            std::enable_if_t<std::is_same_v<S, Shape> ||
                                 std::is_same_v<S, std::vector<int64_t>>,
                             int> = 0>
  TensorMeta(DType dtype, const S& sizes, Device device = Device(),
             bool wrapped_number = false)
      : TensorMeta(dtype, SymShape(sizes.begin(), sizes.end()), device,
                   wrapped_number) {}

  DType dtype = DType::kFloat32;
  SymShape sizes;
  Device device;
  bool wrapped_number = false;  // a Python number literal in a Tensor slot
  std::optional<SymInt> sym_value;

  // A wrapped integer or bool number keeps its value (a computed size).
  static TensorMeta Of(const Tensor& t) {
    std::optional<SymInt> value;
    if (t.is_wrapped_number() && !IsFloating(t.dtype())) {
      value = SymInt(t.ItemAsInt64());
    }
    return {t.dtype(), ToSymShape(t.sizes()), t.device(), t.is_wrapped_number(),
            std::move(value)};
  }
  static TensorMeta SymValue(SymInt value, DType dtype = DType::kInt64) {
    return {
        dtype, {}, Device::Cpu(), /*wrapped_number=*/true, std::move(value)};
  }
  int dim() const { return static_cast<int>(sizes.size()); }
  SymInt numel() const { return Product(sizes); }
  // Concrete sizes (symbolic ones specialize).
  Shape shape() const { return ConcreteShape(sizes); }
  std::string ToString() const {
    std::vector<std::string> parts;
    for (const SymInt& s : sizes) parts.push_back(s.ToString());
    return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(parts, ", "), "]");
  }
  friend bool operator==(const TensorMeta& a, const TensorMeta& b) {
    if (a.dtype != b.dtype || !(a.device == b.device) ||
        a.sizes.size() != b.sizes.size()) {
      return false;
    }
    for (size_t i = 0; i < a.sizes.size(); ++i) {
      if (a.sizes[i].is_symbolic() != b.sizes[i].is_symbolic() ||
          a.sizes[i].expr() != b.sizes[i].expr()) {
        return false;
      }
    }
    return true;
  }
};

// The device a graph's constants live on for these inputs: the first input
// not on the CPU (a call's tensors share one device, 0-dim CPU scalars
// aside), else the CPU. A compiled entry keeps its own copy of each constant
// there.
template <typename Metas>
Device ConstantsDevice(const Metas& inputs) {
  for (const TensorMeta& m : inputs) {
    if (!m.device.is_cpu()) return m.device;
  }
  return Device::Cpu();
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_TENSOR_META_H_
