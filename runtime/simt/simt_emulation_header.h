#ifndef GUARDJIT_RUNTIME_SIMT_SIMT_EMULATION_HEADER_H_
#define GUARDJIT_RUNTIME_SIMT_SIMT_EMULATION_HEADER_H_

// The SIMT emulator's contract between CUDA C compiled for the host and the
// launcher that runs it (simt_emulator.h): the emulation header the source is
// compiled against, the per-thread state the launcher hands each emulated
// thread, and the entry points appended to the source. The header text
// mirrors SimtThreadState and SimtOps as gj_simt::State and gj_simt::Ops;
// the entry points check their size and offsets when they compile.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace guardjit {

struct SimtUint3 {
  uint32_t x, y, z;
};

struct SimtOps;

// What an emulated thread sees: CUDA's builtin variables, its lane, and the
// launcher's callbacks. One per launcher thread, written by the launcher
// before the thread runs a block.
struct SimtThreadState {
  SimtUint3 thread_idx{}, block_idx{}, block_dim{}, grid_dim{};
  uint32_t lane = 0;  // linear thread index % 32
  uint32_t reserved = 0;
  void* host = nullptr;  // the launcher's thread
  const SimtOps* ops = nullptr;
};

// __syncthreads_count / _and / _or (plain __syncthreads is a count).
enum SimtSyncOp : int { kSimtSyncCount = 0, kSimtSyncAnd = 1, kSimtSyncOr = 2 };
// __syncwarp; a shuffle reading `src_lane`'s value; a ballot of values != 0.
enum SimtWarpOp : int {
  kSimtWarpSync = 0,
  kSimtWarpShuffle = 1,
  kSimtWarpBallot = 2,
};

struct SimtOps {
  // Waits for the block's other threads that have not returned; the result
  // by `op` over the predicates of the threads that arrived.
  int (*sync_threads)(SimtThreadState* state, int op, int predicate);
  // Waits for the lanes of `mask` (and the caller's) that have not returned,
  // then returns the op's result: the value of lane `src_lane` if it took
  // part (else the caller's own value), the ballot, or 0.
  unsigned long long (*warp)(SimtThreadState* state, int op, uint32_t mask,
                             unsigned long long value, int src_lane);
};

// The emulation header's text. It defines GJ_SIMT_EMULATION; its opening
// comment lists the CUDA subset it models.
absl::string_view SimtEmulationHeader();

// Source appended after the CUDA source: for each kernel, the entry point
// SimtEntrySymbol(kernel), a `void(SimtThreadState*, void* const* params)`
// calling the kernel with *params[i] as its i-th argument, and
// SimtAritySymbol(kernel), an `int()` giving its parameter count.
std::string SimtEntryPoints(absl::Span<const std::string> kernels);
std::string SimtEntrySymbol(absl::string_view kernel);
std::string SimtAritySymbol(absl::string_view kernel);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_SIMT_SIMT_EMULATION_HEADER_H_
