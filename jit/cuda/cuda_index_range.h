#ifndef GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_
#define GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_

// Whether a kernel's index math fits 32 bits: interval arithmetic over its
// index expressions, loop variables ranging over [0, extent) and size
// parameters over [0, bound] (bounds known when the entry is compiled).
// The CUDA C generator (cuda_codegen.h) renders loop variables and index
// arithmetic in `int` when this holds, `long long` otherwise.

#include <cstdint>

#include "absl/types/span.h"
#include "jit/loop_ir.h"

namespace guardjit {

// Every value an `int` index computation of the generated code may take
// stays within +-kIndex32Limit: the headroom below 2^31 covers a strided
// loop's last increment (at most 1024 threads past its extent).
inline constexpr int64_t kIndex32Limit = (int64_t{1} << 31) - 2048;

// True when every index, offset, loop extent and flattened loop count of
// `kernel` (and every subexpression of them) provably lies within
// +-kIndex32Limit. `size_bounds[i]` is the largest value size parameter i
// can take; a missing or negative entry means unbounded, which fails the
// test for any expression using it. A gather's offset is checked over its
// index's whole valid range [0, bound).
bool IndexMathFits32Bits(const Kernel& kernel,
                         absl::Span<const int64_t> size_bounds);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_
