#ifndef GUARDJIT_CORE_PROTO_IO_SPEC_H_
#define GUARDJIT_CORE_PROTO_IO_SPEC_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph.pb.h"
#include "core/io_spec.h"

namespace guardjit {

// The spec a guardjit.proto.TensorMeta declares (see graph.proto), or
// nullopt when it declares nothing (no dtype and no shape). INVALID_ARGUMENT
// naming `what` for both `sizes` and `dims`, `unknown_rank` with a shape, a
// negative size, an unknown dtype number or what ValidateIoSpec refuses.
absl::StatusOr<std::optional<IoSpec>> IoSpecFromProto(
    const proto::TensorMeta& meta, absl::string_view what);

// The TensorMeta for `spec` (`sizes` when fully static, as files before
// `dims` did; `dims` otherwise).
proto::TensorMeta IoSpecToProto(const IoSpec& spec);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_PROTO_IO_SPEC_H_
