#ifndef GUARDJIT_CORE_DTYPE_H_
#define GUARDJIT_CORE_DTYPE_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

// Element types. The order is part of nothing external; the C ABI and the
// protobuf schema use their own stable encodings.
enum class DType : uint8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

inline constexpr int kNumDTypes = 10;

// Size of one element in bytes.
int ItemSize(DType dtype);

// PyTorch spelling without the `torch.` prefix: "float32", "int64", "bool".
absl::string_view DTypeName(DType dtype);

// Accepts the PyTorch names and their aliases ("float", "half", "long", ...).
std::optional<DType> DTypeFromName(absl::string_view name);

inline bool IsFloating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ||
         d == DType::kFloat32 || d == DType::kFloat64;
}
inline bool IsIntegral(DType d, bool include_bool) {
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 ||
         d == DType::kInt32 || d == DType::kInt64 ||
         (include_bool && d == DType::kBool);
}

// torch.promote_types: the smallest type both `a` and `b` convert to without
// losing category (bool < integral < floating).
DType PromoteTypes(DType a, DType b);

// PyTorch's default floating dtype, used when integral inputs feed a floating
// op (e.g. exp of an int tensor) and for Python float literals.
inline constexpr DType kDefaultFloat = DType::kFloat32;

}  // namespace guardjit

#endif  // GUARDJIT_CORE_DTYPE_H_
