#ifndef GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_
#define GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_

// Whether a kernel's index math fits 32 bits: interval arithmetic over its
// index expressions, loop variables ranging over [0, extent) and size
// parameters over [0, bound] (bounds known when the entry is compiled).
// The CUDA C generator (cuda_codegen.h) renders loop variables and index
// arithmetic in `int` when this holds, `long long` otherwise.

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "jit/lowering/loop_ir.h"

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

// The size bounds a dynamic entry's kernels are rendered with, as Inductor
// picks them for dynamic shapes: where the known bounds (mark_dynamic
// ranges, what the guards imply) leave a kernel's index math 64-bit but the
// values of the call that made the entry (the hints) would let it narrow,
// each unbounded symbol gets a bound of its own: the hint rounded up to a
// power of two where that still fits (else the hint itself), then doubled,
// all symbols together first and then one at a time, while every kernel
// that narrows at the hints still narrows (so a bound is a power of two or
// the hint times a power of two). A
// symbol no such kernel needs stays unbounded. The entry must guard the
// chosen bounds (Executable::chosen_bounds); without a kernel that gains,
// none is chosen.
struct IndexBounds {
  // Per symbol: what the kernels are rendered with (-1: unbounded), the
  // known bound or the chosen one.
  std::vector<int64_t> size_bounds;
  // The symbols whose bound was chosen here (in increasing order).
  std::vector<int> chosen;
  // Per kernel: whether its index math is 32-bit under size_bounds.
  std::vector<bool> index32;
};
// `known[i]`: the largest value symbol i can take (negative: unbounded);
// `hints[i]`: its value in the call that made the entry (empty: choose
// nothing, only render with `known`).
IndexBounds ChooseIndexBounds(absl::Span<const Kernel* const> kernels,
                              absl::Span<const int64_t> known,
                              absl::Span<const int64_t> hints);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_INDEX_RANGE_H_
