#ifndef GUARDJIT_CAPI_OPTIONS_H_
#define GUARDJIT_CAPI_OPTIONS_H_

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace guardjit::capi {

// Options structs grow by appending fields; a host built against an older
// header passes a smaller struct_size. Anything shorter than the size field
// itself is an uninitialized struct, not an old one.
inline absl::Status CheckStructSize(size_t struct_size,
                                    absl::string_view function,
                                    absl::string_view param,
                                    absl::string_view init) {
  if (struct_size < sizeof(size_t)) {
    return absl::InvalidArgumentError(
        absl::StrCat(function, ": ", param, "->struct_size is ", struct_size,
                     "; fill the struct with ", init, "()"));
  }
  return absl::OkStatus();
}

// gj_X_init_v: `init`'s defaults, written only over the first `struct_size`
// bytes (the host's sizeof), struct_size set to what was written. Sizes
// below the size field write nothing.
template <typename T>
void InitSized(T* out, size_t struct_size, void (*init)(T*)) {
  if (out == nullptr || struct_size < sizeof(size_t)) return;
  T full;
  init(&full);
  const size_t n = struct_size < sizeof(T) ? struct_size : sizeof(T);
  full.struct_size = n;
  std::memcpy(static_cast<void*>(out), &full, n);
}

// Element `index` of a host array whose elements are `stride` bytes apart
// (the host's sizeof(T), which may be larger than this library's when T
// grew): this library's fields, read as bytes. The bytes past them must be
// zero, the default of every field this library does not know.
// `stride` 0 means sizeof(T). INVALID_ARGUMENT "<what>: element size 16 is
// below 24" / "<what>: bytes 24..31 are set ...".
template <typename T>
absl::Status ReadGrownElement(const void* base, size_t index, size_t stride,
                              absl::string_view what, T* out) {
  if (stride == 0) stride = sizeof(T);
  if (stride < sizeof(T)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": element size ", stride, " is below ", sizeof(T),
                     ", this library's"));
  }
  const char* p = static_cast<const char*>(base) + index * stride;
  std::memcpy(static_cast<void*>(out), p, sizeof(T));
  for (size_t b = sizeof(T); b < stride; ++b) {
    if (p[b] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": byte ", b, " of a ", stride,
          "-byte element is set, past the ", sizeof(T),
          " bytes this library knows: a field of a newer header this library "
          "cannot honour"));
    }
  }
  return absl::OkStatus();
}

}  // namespace guardjit::capi

// dst.field = src->field when the whole field lies inside the host's
// struct_size; otherwise dst keeps its default. Copied as bytes: an enum
// field may hold any int a C host stored, which C++ must not load as the enum.
#define GJ_READ_OPTION(dst, src, field)                               \
  do {                                                                \
    using GjOptionsT_ =                                               \
        std::remove_cv_t<std::remove_pointer_t<decltype(src)>>;       \
    if (offsetof(GjOptionsT_, field) + sizeof((src)->field) <=        \
        (src)->struct_size) {                                         \
      std::memcpy(&(dst).field, &(src)->field, sizeof((src)->field)); \
    }                                                                 \
  } while (0)

#endif  // GUARDJIT_CAPI_OPTIONS_H_
