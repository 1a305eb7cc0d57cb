#ifndef GUARDJIT_BINDINGS_TRITON_ERRORS_H_
#define GUARDJIT_BINDINGS_TRITON_ERRORS_H_

// Errors and logs across the two C APIs: guardjit's gj_error becomes
// Triton's TRITONSERVER_Error with the matching code and the library's
// message.

#include <string>

#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

TRITONSERVER_Error* Error(TRITONSERVER_Error_Code code,
                          const std::string& message);
// Takes and destroys `error`; NULL for NULL. `prefix` goes before the
// library's message ("model 'mlp': ").
TRITONSERVER_Error* FromGjError(gj_error* error, const std::string& prefix);
void Log(TRITONSERVER_LogLevel level, const std::string& message);

}  // namespace guardjit_triton

#define GJ_TRITON_RETURN_IF_ERROR(expr)                   \
  do {                                                    \
    TRITONSERVER_Error* gj_triton_err_ = (expr);          \
    if (gj_triton_err_ != nullptr) return gj_triton_err_; \
  } while (false)

#endif  // GUARDJIT_BINDINGS_TRITON_ERRORS_H_
