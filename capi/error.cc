#include "capi/error.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace guardjit::capi {

namespace {

// Returned when even the error cannot be allocated; gj_error_destroy skips it.
gj_error kOutOfMemory{GJ_RESOURCE_EXHAUSTED, "out of memory"};

}  // namespace

gj_error* ToError(const absl::Status& status) {
  if (status.ok()) return nullptr;
  try {
    return new gj_error{static_cast<gj_error_code>(status.code()),
                        std::string(status.message())};
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  }
}

bool IsStaticError(const gj_error* error) { return error == &kOutOfMemory; }

absl::Status NullArgument(absl::string_view function, absl::string_view param) {
  return absl::InvalidArgumentError(
      absl::StrCat(function, ": ", param, " is NULL"));
}

}  // namespace guardjit::capi

extern "C" {

gj_error_code gj_error_get_code(const gj_error* error) {
  return error == nullptr ? GJ_OK : error->code;
}

const char* gj_error_message(const gj_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

void gj_error_destroy(gj_error* error) {
  if (!guardjit::capi::IsStaticError(error)) delete error;
}

void gj_string_destroy(char* text) { std::free(text); }

}  // extern "C"
