#include "capi/error.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace guardjit::capi {

namespace {

// Returned when even the error cannot be allocated; gj_error_destroy skips it.
gj_error kOutOfMemory{GJ_RESOURCE_EXHAUSTED, "out of memory"};

}  // namespace

std::string BoundedMessage(absl::string_view message) {
  std::string out;
  out.reserve(std::min(message.size(), kMaxMessageBytes) + 32);
  size_t i = 0;
  for (; i < message.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(message[i]);
    // Cut only before a character (not a UTF-8 continuation byte) and only
    // where any character or escape, at most 4 bytes, would still fit whole.
    if ((c & 0xc0) != 0x80 && out.size() + 4 > kMaxMessageBytes) break;
    switch (c) {
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < message.size()) {
    absl::StrAppend(&out, "\u2026 (", message.size() - i, " more bytes)");
  }
  return out;
}

gj_error* ToError(const absl::Status& status) {
  if (status.ok()) return nullptr;
  try {
    return new gj_error{static_cast<gj_error_code>(status.code()),
                        BoundedMessage(status.message())};
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
