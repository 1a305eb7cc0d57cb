#include "capi/arg_convert.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "capi/raw_enum.h"
#include "core/device.h"

namespace guardjit::capi {
namespace {

absl::Status NullField(absl::string_view what, absl::string_view kind,
                       absl::string_view field) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": ", kind, " argument with ", field, " NULL"));
}

}  // namespace

std::optional<DType> DTypeFromC(const gj_dtype& dtype) {
  switch (RawEnum(dtype)) {
    case GJ_DTYPE_FLOAT32:
      return DType::kFloat32;
    case GJ_DTYPE_FLOAT64:
      return DType::kFloat64;
    case GJ_DTYPE_FLOAT16:
      return DType::kFloat16;
    case GJ_DTYPE_BFLOAT16:
      return DType::kBFloat16;
    case GJ_DTYPE_INT8:
      return DType::kInt8;
    case GJ_DTYPE_UINT8:
      return DType::kUInt8;
    case GJ_DTYPE_INT16:
      return DType::kInt16;
    case GJ_DTYPE_INT32:
      return DType::kInt32;
    case GJ_DTYPE_INT64:
      return DType::kInt64;
    case GJ_DTYPE_BOOL:
      return DType::kBool;
  }
  return std::nullopt;
}

gj_dtype DTypeToC(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return GJ_DTYPE_FLOAT32;
    case DType::kFloat64:
      return GJ_DTYPE_FLOAT64;
    case DType::kFloat16:
      return GJ_DTYPE_FLOAT16;
    case DType::kBFloat16:
      return GJ_DTYPE_BFLOAT16;
    case DType::kInt8:
      return GJ_DTYPE_INT8;
    case DType::kUInt8:
      return GJ_DTYPE_UINT8;
    case DType::kInt16:
      return GJ_DTYPE_INT16;
    case DType::kInt32:
      return GJ_DTYPE_INT32;
    case DType::kInt64:
      return GJ_DTYPE_INT64;
    case DType::kBool:
      return GJ_DTYPE_BOOL;
  }
  return GJ_DTYPE_UNKNOWN;
}

absl::StatusOr<Arg> ArgFromC(const gj_arg& arg, absl::string_view what) {
  switch (RawEnum(arg.kind)) {
    case GJ_ARG_NONE:
      return Arg::None();
    case GJ_ARG_REF:
      if (arg.str == nullptr) return NullField(what, "GJ_ARG_REF", "str");
      return Arg::Ref(arg.str);
    case GJ_ARG_INT:
      return Arg::Int(arg.i);
    case GJ_ARG_FLOAT:
      return Arg::Float(arg.f);
    case GJ_ARG_BOOL:
      if (arg.i != 0 && arg.i != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": GJ_ARG_BOOL argument with i = ", arg.i,
                         "; expected 0 or 1"));
      }
      return Arg::Bool(arg.i == 1);
    case GJ_ARG_STRING:
      if (arg.str == nullptr) return NullField(what, "GJ_ARG_STRING", "str");
      return Arg::String(arg.str);
    case GJ_ARG_DTYPE: {
      std::optional<DType> dtype = DTypeFromC(arg.dtype);
      if (!dtype.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": GJ_ARG_DTYPE argument with unknown dtype ",
                         RawEnum(arg.dtype)));
      }
      return Arg::OfDType(*dtype);
    }
    case GJ_ARG_DEVICE: {
      if (arg.str == nullptr) return NullField(what, "GJ_ARG_DEVICE", "str");
      std::optional<Device> device = Device::Parse(arg.str);
      if (!device.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": unknown device '", arg.str,
                         "'; expected \"cpu\" or \"cuda:N\""));
      }
      return Arg::OfDevice(*device);
    }
    case GJ_ARG_INT_LIST: {
      if (arg.ints == nullptr && arg.len > 0) {
        return NullField(what, "GJ_ARG_INT_LIST", "ints");
      }
      Arg::List items;
      for (size_t k = 0; k < arg.len; ++k)
        items.push_back(Arg::Int(arg.ints[k]));
      return Arg::OfList(std::move(items));
    }
    case GJ_ARG_FLOAT_LIST: {
      if (arg.floats == nullptr && arg.len > 0) {
        return NullField(what, "GJ_ARG_FLOAT_LIST", "floats");
      }
      Arg::List items;
      for (size_t k = 0; k < arg.len; ++k)
        items.push_back(Arg::Float(arg.floats[k]));
      return Arg::OfList(std::move(items));
    }
    case GJ_ARG_REF_LIST: {
      if (arg.refs == nullptr && arg.len > 0) {
        return NullField(what, "GJ_ARG_REF_LIST", "refs");
      }
      Arg::List items;
      for (size_t k = 0; k < arg.len; ++k) {
        if (arg.refs[k] == nullptr) {
          return NullField(what, "GJ_ARG_REF_LIST",
                           absl::StrCat("refs[", k, "]"));
        }
        items.push_back(Arg::Ref(arg.refs[k]));
      }
      return Arg::OfList(std::move(items));
    }
    case GJ_ARG_SUBGRAPH:
      if (arg.str == nullptr) return NullField(what, "GJ_ARG_SUBGRAPH", "str");
      return Arg::Subgraph(arg.str);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": unknown kind ", RawEnum(arg.kind)));
}

}  // namespace guardjit::capi
