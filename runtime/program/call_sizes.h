#ifndef GUARDJIT_RUNTIME_PROGRAM_CALL_SIZES_H_
#define GUARDJIT_RUNTIME_PROGRAM_CALL_SIZES_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/tensor.h"
#include "runtime/program/program.h"

namespace guardjit {

// A TensorRef evaluated for one call.
struct ConcreteRef {
  int slot = -1;
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
};

// A program's sizes evaluated for one call's symbol values: a static
// program's once, a dynamic program's per call into a pooled workspace
// (the vectors keep their capacity: a hit at sizes seen before allocates
// nothing here).
struct CallSizes {
  std::vector<Shape> slots;
  std::vector<int64_t> buffer_bytes;
  std::vector<int64_t> buffer_offset;  // per plan buffer, in the arena
  int64_t arena_bytes = 0;
  std::vector<ConcreteRef> outputs;
};

// Alignment of each buffer in a call's arena (the allocator's, which
// kernels may assume of any buffer).
inline constexpr int64_t kArenaAlign = 64;

// `program`'s sizes for `symbols`, into `out`. OUT_OF_RANGE, naming the
// value, where a size, element count or byte count passes int64 (a dynamic
// entry's sizes multiply symbols that each fit).
absl::Status EvaluateSizes(const Program& program,
                           absl::Span<const int64_t> symbols, CallSizes& out);
// `ref` evaluated for `symbols`, into `out`.
void EvaluateRef(const TensorRef& ref, absl::Span<const int64_t> symbols,
                 ConcreteRef& out);

// The view `ref` names of its slot's tensor (the tensor itself when the view
// is all of it).
template <typename Slots>
Tensor ViewOf(const Slots& slots, const ConcreteRef& ref) {
  const Tensor& base = slots[ref.slot];
  if (ref.offset == 0 &&
      std::equal(ref.sizes.begin(), ref.sizes.end(), base.sizes().begin(),
                 base.sizes().end()) &&
      std::equal(ref.strides.begin(), ref.strides.end(), base.strides().begin(),
                 base.strides().end())) {
    return base;
  }
  return base.AsStrided(ref.sizes, ref.strides, ref.offset);
}

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_CALL_SIZES_H_
