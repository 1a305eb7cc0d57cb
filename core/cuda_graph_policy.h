#ifndef GUARDJIT_CORE_CUDA_GRAPH_POLICY_H_
#define GUARDJIT_CORE_CUDA_GRAPH_POLICY_H_

// reduce-overhead mode (gj_function_options.mode, issue #15): what a function
// asks of its CUDA executables, carried to them in RunContext::cuda_graphs.
// Core knows only the request and the counters; recording and replaying
// CUDA graphs is runtime/cuda/cuda_graph.h's, and deciding what a program
// can record is jit/cuda/program_graphs.h's.

#include <atomic>
#include <cstdint>

namespace guardjit {

// gj_function_options.max_graphs_per_entry's default (0 in the C struct).
inline constexpr int kDefaultMaxGraphsPerEntry = 8;

// What the function's CUDA graphs did, summed over its entries (each entry
// adds to its function's counters). Updated with relaxed atomics.
struct CudaGraphCounters {
  std::atomic<int64_t> recorded{0};         // graphs captured + instantiated
  std::atomic<int64_t> replays{0};          // cuGraphLaunch calls
  std::atomic<int64_t> pointer_updates{0};  // kernel and copy nodes patched
  std::atomic<int64_t> recaptures{0};       // captures of a key seen before
  std::atomic<int64_t> evictions{0};        // graphs dropped past the limit
  std::atomic<int64_t> pool_bytes{0};       // private pool memory held now
};

struct CudaGraphPolicy {
  // Graphs kept per cache entry (one per size key); the least recently
  // replayed goes beyond it.
  int max_graphs_per_entry = kDefaultMaxGraphsPerEntry;
  // An entry whose private pool (its intermediates at one size key) would
  // be larger is refused: it runs plain launches.
  int64_t max_pool_bytes = int64_t{1} << 30;
  // An extern call's operand (a cuBLASLt product's input or output) that is
  // a call input or output and moves between replays is copied through the
  // pool from then on when it has at most this many bytes; a larger one
  // re-captures the graph when it moves (runtime/cuda/cuda_graph.h says
  // why: a copy every replay against a re-capture per move).
  int64_t max_staged_bytes = int64_t{1} << 20;
  // Where entries count what they did; may be null.
  CudaGraphCounters* counters = nullptr;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_CUDA_GRAPH_POLICY_H_
