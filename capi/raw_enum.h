#ifndef GUARDJIT_CAPI_RAW_ENUM_H_
#define GUARDJIT_CAPI_RAW_ENUM_H_

#include <cstring>
#include <type_traits>

namespace guardjit::capi {

// The integer a C host stored in an enum field. A C host may store any int
// there, and loading an out-of-range value as the C++ enum type is undefined,
// so switch on this instead.
// Signed, so a host's -1 reads (and prints) as -1.
template <typename E>
std::make_signed_t<std::underlying_type_t<E>> RawEnum(const E& value) {
  std::make_signed_t<std::underlying_type_t<E>> raw;
  std::memcpy(&raw, &value, sizeof(raw));
  return raw;
}

}  // namespace guardjit::capi

#endif  // GUARDJIT_CAPI_RAW_ENUM_H_
