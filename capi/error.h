#ifndef GUARDJIT_CAPI_ERROR_H_
#define GUARDJIT_CAPI_ERROR_H_

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "guardjit/guardjit.h"

struct gj_error {
  gj_error_code code;
  std::string message;
};

namespace guardjit::capi {

// Error messages are at most this long (plus a "… (N more bytes)" marker).
inline constexpr size_t kMaxMessageBytes = 4096;

// `message` with control bytes escaped (\n, \t, \r, \xNN: input echoed in
// a message cannot forge lines in a host's log) and cut to kMaxMessageBytes
// at a character boundary, with the number of bytes left out.
std::string BoundedMessage(absl::string_view message);

// NULL for an OK status, else a new gj_error the caller owns; its message is
// BoundedMessage(status.message()).
gj_error* ToError(const absl::Status& status);
// The preallocated out-of-memory error, which must not be deleted.
bool IsStaticError(const gj_error* error);

// INVALID_ARGUMENT "<function>: <param> is NULL".
absl::Status NullArgument(absl::string_view function, absl::string_view param);

// Runs `body` (returning absl::Status) and converts the result, so no C++
// exception (std::bad_alloc from a container, say) crosses the C boundary.
template <typename F>
gj_error* Guarded(F&& body) {
  try {
    return ToError(std::forward<F>(body)());
  } catch (const std::bad_alloc&) {
    return ToError(absl::ResourceExhaustedError("out of memory"));
  } catch (const std::exception& e) {
    return ToError(absl::InternalError(e.what()));
  } catch (...) {
    return ToError(absl::InternalError("unknown C++ exception"));
  }
}

}  // namespace guardjit::capi

#endif  // GUARDJIT_CAPI_ERROR_H_
