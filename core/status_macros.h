#ifndef GUARDJIT_CORE_STATUS_MACROS_H_
#define GUARDJIT_CORE_STATUS_MACROS_H_

// Debian's Abseil (20220623) has no status macros of its own.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GJ_STATUS_CONCAT_INNER_(a, b) a##b
#define GJ_STATUS_CONCAT_(a, b) GJ_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` yields a non-OK status.
#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::absl::Status gj_status_ = (expr);      \
    if (!gj_status_.ok()) return gj_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` binds the value of a StatusOr or returns
// its error.
#define ASSIGN_OR_RETURN(lhs, expr)                                         \
  GJ_ASSIGN_OR_RETURN_IMPL_(GJ_STATUS_CONCAT_(gj_statusor_, __LINE__), lhs, \
                            expr)

#define GJ_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)     \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // GUARDJIT_CORE_STATUS_MACROS_H_
