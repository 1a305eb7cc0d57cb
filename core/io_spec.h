#ifndef GUARDJIT_CORE_IO_SPEC_H_
#define GUARDJIT_CORE_IO_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"

namespace guardjit {

// One dim of a declared shape: a static size, or a dynamic one, named by a
// symbol (torch.export's Dim, ONNX's dim_param) or unnamed.
struct IoDim {
  int64_t size = -1;   // >= 0 static; -1 dynamic
  std::string symbol;  // dynamic only: the size's name, "" when unnamed

  static IoDim Static(int64_t size) { return {size, ""}; }
  static IoDim Dynamic(std::string symbol = "") {
    return {-1, std::move(symbol)};
  }
  bool is_static() const { return size >= 0; }
  friend bool operator==(const IoDim& a, const IoDim& b) {
    return a.size == b.size && a.symbol == b.symbol;
  }
};

// What a graph declares of one input or output (the shape and dtype its
// exporter saw). Each part may be unknown; nothing is known by default.
struct IoSpec {
  std::optional<DType> dtype;
  std::optional<std::vector<IoDim>> dims;  // nullopt: the rank is unknown

  int rank() const { return dims ? static_cast<int>(dims->size()) : -1; }
  // dtype and every size known.
  bool IsFullyStatic() const;
  // "float32[batch, 3]", "?" for an unknown dtype or dynamic unnamed dim,
  // "[*]" for an unknown rank.
  std::string ToString() const;
  friend bool operator==(const IoSpec& a, const IoSpec& b) {
    return a.dtype == b.dtype && a.dims == b.dims;
  }
};

// Declared shapes hold at most this many dims (DLPack's ndim is an int32;
// no real tensor comes near).
inline constexpr int kMaxIoRank = 64;
inline constexpr size_t kMaxSymbolLength = 64;

// An identifier: letters, digits, '_' and '.', not starting with a digit, 1
// to kMaxSymbolLength characters.
bool IsValidSymbolName(absl::string_view name);

// INVALID_ARGUMENT naming `what` ("input 'x'", "output 0 ('relu')") and the
// dim for a negative static size, a static dim with a symbol, a symbol that
// is not an identifier (quoted, cut to a bounded length) or a rank past
// kMaxIoRank.
absl::Status ValidateIoSpec(const IoSpec& spec, absl::string_view what);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_IO_SPEC_H_
