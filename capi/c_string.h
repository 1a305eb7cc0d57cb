#ifndef GUARDJIT_CAPI_C_STRING_H_
#define GUARDJIT_CAPI_C_STRING_H_

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"

namespace guardjit::capi {

// A malloc'ed copy of `text` for the host, released by gj_string_destroy.
inline absl::StatusOr<char*> NewCString(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return absl::ResourceExhaustedError("out of memory");
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

}  // namespace guardjit::capi

#endif  // GUARDJIT_CAPI_C_STRING_H_
