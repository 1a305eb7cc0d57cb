#include "core/proto_io_spec.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// guardjit.proto.DType's names are the torch names in capitals.
absl::StatusOr<std::optional<DType>> DTypeOf(proto::DType d,
                                             absl::string_view what) {
  if (d == proto::DTYPE_UNSPECIFIED) return std::nullopt;
  std::optional<DType> dtype;
  if (proto::DType_IsValid(d)) {
    dtype = DTypeFromName(absl::AsciiStrToLower(proto::DType_Name(d)));
  }
  if (!dtype.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": dtype ", static_cast<int>(d), " is not a guardjit dtype"));
  }
  return dtype;
}

proto::DType ProtoDTypeOf(DType d) {
  proto::DType out = proto::DTYPE_UNSPECIFIED;
  proto::DType_Parse(absl::AsciiStrToUpper(DTypeName(d)), &out);
  return out;
}

}  // namespace

absl::StatusOr<std::optional<IoSpec>> IoSpecFromProto(
    const proto::TensorMeta& meta, absl::string_view what) {
  IoSpec spec;
  ASSIGN_OR_RETURN(spec.dtype, DTypeOf(meta.dtype(), what));
  const bool has_shape = meta.sizes_size() > 0 || meta.dims_size() > 0;
  if (meta.sizes_size() > 0 && meta.dims_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": meta has both sizes (", meta.sizes_size(),
                     ") and dims (", meta.dims_size(), "); set one"));
  }
  if (meta.unknown_rank() && has_shape) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": meta has unknown_rank and ",
                     meta.sizes_size() + meta.dims_size(), " dims"));
  }
  if (!spec.dtype.has_value() && !has_shape) return std::nullopt;
  if (!meta.unknown_rank()) {
    std::vector<IoDim> dims;
    for (int k = 0; k < meta.sizes_size(); ++k) {
      if (meta.sizes(k) < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": meta size ", meta.sizes(k), " at dim ", k,
                         " is negative"));
      }
      dims.push_back(IoDim::Static(meta.sizes(k)));
    }
    for (int k = 0; k < meta.dims_size(); ++k) {
      const proto::Dim& d = meta.dims(k);
      if (d.value_case() == proto::Dim::kSize && d.size() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": meta size ", d.size(), " at dim ", k, " is negative"));
      }
      dims.push_back(d.value_case() == proto::Dim::kSize
                         ? IoDim::Static(d.size())
                         : IoDim::Dynamic(d.symbol()));
      if (d.value_case() == proto::Dim::kSymbol && d.symbol().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": dim ", k, " has an empty symbol (leave it unset)"));
      }
    }
    spec.dims = std::move(dims);
  }
  RETURN_IF_ERROR(ValidateIoSpec(spec, what));
  return spec;
}

proto::TensorMeta IoSpecToProto(const IoSpec& spec) {
  proto::TensorMeta meta;
  if (spec.dtype) meta.set_dtype(ProtoDTypeOf(*spec.dtype));
  if (!spec.dims) {
    meta.set_unknown_rank(true);
    return meta;
  }
  const bool fully_static = spec.IsFullyStatic();
  for (const IoDim& d : *spec.dims) {
    if (fully_static) {
      meta.add_sizes(d.size);
    } else if (d.is_static()) {
      meta.add_dims()->set_size(d.size);
    } else if (!d.symbol.empty()) {
      meta.add_dims()->set_symbol(d.symbol);
    } else {
      meta.add_dims();
    }
  }
  return meta;
}

}  // namespace guardjit
