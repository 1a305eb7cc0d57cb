#ifndef GUARDJIT_CAPI_ARG_CONVERT_H_
#define GUARDJIT_CAPI_ARG_CONVERT_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/arg_value.h"
#include "core/dtype.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {

// Our element type for a gj_dtype (numbered as guardjit.proto.DType).
std::optional<DType> DTypeFromC(const gj_dtype& dtype);
// The gj_dtype of one of our element types.
gj_dtype DTypeToC(DType dtype);

// The builder's argument for a gj_arg, checking the fields its kind reads
// (NULL strings and arrays, unknown kinds and dtypes, device names). Errors
// start with `what`, e.g. "...: node 'add': argument 1".
absl::StatusOr<Arg> ArgFromC(const gj_arg& arg, absl::string_view what);

}  // namespace guardjit::capi

#endif  // GUARDJIT_CAPI_ARG_CONVERT_H_
