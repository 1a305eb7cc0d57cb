#ifndef GUARDJIT_RUNTIME_STRIDED_LOOP_H_
#define GUARDJIT_RUNTIME_STRIDED_LOOP_H_

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "core/tensor.h"

namespace guardjit {

// Visits every index of `shape` for `n` operands with their own strides (in
// bytes, 0 for broadcast dims), calling `inner(ptrs, byte_strides, count)`
// once per run along the innermost dim. Dims are coalesced first, so a
// contiguous or fully broadcast operand set runs as one long run.
void ForEachRun(
    IntSpan shape, absl::Span<char* const> bases,
    absl::Span<const IntSpan> byte_strides,
    absl::FunctionRef<void(char** ptrs, const int64_t* strides, int64_t count)>
        inner);

// `t` viewed with `shape` by broadcasting (stride 0 on new or size-1 dims).
// The caller has checked that the shapes broadcast.
Tensor ExpandTo(const Tensor& t, IntSpan shape);

// Element strides scaled to bytes.
Shape ByteStrides(const Tensor& t);

// out[i] = f(in[i]...) for every index of out, each input already expanded to
// out's shape and of C++ element type In. Out and In are the storage types.
template <typename Out, typename... In, typename F, typename... Ts>
void MapElements(const Tensor& out, F&& f, const Ts&... in) {
  static_assert(sizeof...(In) == sizeof...(Ts) &&
                (std::is_same_v<Ts, Tensor> && ...));
  constexpr size_t kN = sizeof...(In) + 1;
  std::array<char*, kN> bases = {static_cast<char*>(out.data()),
                                 static_cast<char*>(in.data())...};
  std::array<Shape, kN> strides = {ByteStrides(out), ByteStrides(in)...};
  std::array<IntSpan, kN> spans;
  for (size_t i = 0; i < kN; ++i) spans[i] = strides[i];
  ForEachRun(
      out.sizes(), bases, spans,
      [&](char** p, const int64_t* s, int64_t count) {
        [&]<size_t... I>(std::index_sequence<I...>) {
          for (int64_t j = 0; j < count; ++j) {
            *reinterpret_cast<Out*>(p[0] + j * s[0]) =
                f(*reinterpret_cast<const In*>(p[I + 1] + j * s[I + 1])...);
          }
        }
        (std::index_sequence_for<In...>{});
      });
}

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_STRIDED_LOOP_H_
