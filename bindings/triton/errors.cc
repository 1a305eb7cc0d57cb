#include "bindings/triton/errors.h"

namespace guardjit_triton {
namespace {

TRITONSERVER_Error_Code CodeOf(gj_error_code code) {
  switch (code) {
    case GJ_INVALID_ARGUMENT:
    case GJ_OUT_OF_RANGE:
    case GJ_FAILED_PRECONDITION:
      return TRITONSERVER_ERROR_INVALID_ARG;
    case GJ_NOT_FOUND:
      return TRITONSERVER_ERROR_NOT_FOUND;
    case GJ_UNIMPLEMENTED:
      return TRITONSERVER_ERROR_UNSUPPORTED;
    case GJ_UNAVAILABLE:
    case GJ_RESOURCE_EXHAUSTED:
      return TRITONSERVER_ERROR_UNAVAILABLE;
    case GJ_CANCELLED:
    case GJ_DEADLINE_EXCEEDED:
      return TRITONSERVER_ERROR_CANCELLED;
    case GJ_ALREADY_EXISTS:
      return TRITONSERVER_ERROR_ALREADY_EXISTS;
    default:
      return TRITONSERVER_ERROR_INTERNAL;
  }
}

}  // namespace

TRITONSERVER_Error* Error(TRITONSERVER_Error_Code code,
                          const std::string& message) {
  return TRITONSERVER_ErrorNew(code, message.c_str());
}

TRITONSERVER_Error* FromGjError(gj_error* error, const std::string& prefix) {
  if (error == nullptr) return nullptr;
  TRITONSERVER_Error* out =
      Error(CodeOf(gj_error_get_code(error)), prefix + gj_error_message(error));
  gj_error_destroy(error);
  return out;
}

void Log(TRITONSERVER_LogLevel level, const std::string& message) {
  if (!TRITONSERVER_LogIsEnabled(level)) return;
  TRITONSERVER_Error* err =
      TRITONSERVER_LogMessage(level, "guardjit", 0, message.c_str());
  if (err != nullptr) TRITONSERVER_ErrorDelete(err);
}

}  // namespace guardjit_triton
