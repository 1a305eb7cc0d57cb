#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_

// CUDA graphs for one cache entry (reduce-overhead mode, issue #15): per
// concrete size key (the call's symbol values; a static entry has one key)
// the entry's kernel launches are captured once into a CUDA graph and
// replayed with one cuGraphLaunch per call.
//
// No copy-in. PyTorch's cudagraph trees copy every input into a static
// placeholder before each replay (a device-to-device copy per input per
// call). Here each captured kernel node remembers which of its parameters
// hold which buffer (input i, output j, the entry's private pool, a
// constant); when a call's input or output addresses differ from the last
// replay's, only the kernel nodes holding those addresses are patched with
// cuGraphExecKernelNodeSetParams (a host-side update of the instantiated
// graph: no device work, no copies, inputs read where the caller keeps
// them, outputs written where the caller wants them). Intermediates live in
// a private pool per size key, allocated before the capture, so their
// addresses never change between replays. A change the node parameters
// cannot express (a pool or size value that moved, a different launch
// sequence, a patch the driver rejects) re-captures the key.
//
// The call sequence, as tests on a recording driver check it: the first
// call of a key runs plain launches (warm-up, by the caller); the second
// captures on the set's private stream (cuStreamBeginCapture, thread-local
// mode: capture never touches other threads' work; a graph is
// stream-independent, so it is recorded on a stream of its own and replayed
// on whichever stream each call brings), then cuStreamEndCapture,
// cuGraphInstantiate and cuGraphLaunch on the call's stream; later calls
// are cuGraphLaunch alone, preceded by one cuGraphExecKernelNodeSetParams
// per node whose pointers changed. Beyond max_graphs_per_entry size keys
// the least recently used key's graph and pool are freed (an eviction).

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/cuda_graph_policy.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_driver.h"

#ifndef GUARDJIT_HAVE_CUDA_HEADERS
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUgraphNode_st* CUgraphNode;
#endif

namespace guardjit {

// What a pointer parameter of a launch holds.
struct CudaGraphBuffer {
  enum class Kind : uint8_t {
    kValue,     // not a buffer: a size, the fault word's address
    kInput,     // the call's input `index`
    kOutput,    // the call's output `index` (a destination or fresh memory)
    kPool,      // the entry's private pool, at byte offset `index`
    kConstant,  // the program's device copy of a constant
  };
  Kind kind = Kind::kValue;
  int64_t index = 0;
};

// One kernel launch as cuLaunchKernel takes it and a graph's kernel node
// holds it. Every parameter is 8 bytes: guardjit's CUDA kernels take buffer
// pointers, int64 sizes and the address of their fault word.
struct CudaKernelLaunch {
  CUfunction function = nullptr;
  unsigned grid_x = 1;
  unsigned block_x = 1;
  unsigned shared_bytes = 0;
  absl::InlinedVector<uint64_t, 12> params;
  absl::InlinedVector<CudaGraphBuffer, 12> buffers;  // one per parameter
};

// cuLaunchKernel(launch) on `stream`, in the current context.
absl::Status LaunchKernel(const CudaDriver& driver,
                          const CudaKernelLaunch& launch, CUstream stream);

// The graphs of one cache entry. Thread-safe; one call at a time records
// or replays (TryAcquire), others run plain launches meanwhile.
class CudaGraphSet {
 public:
  explicit CudaGraphSet(const CudaDevice* device);
  ~CudaGraphSet();  // destroys the graphs, frees the pools
  CudaGraphSet(const CudaGraphSet&) = delete;
  CudaGraphSet& operator=(const CudaGraphSet&) = delete;

  struct Record;
  // One call's hold on the set and on its size key's record.
  class Lease {
   public:
    // True on the key's first call (once): the caller runs plain launches
    // (the warm-up) and records nothing; later calls record and replay.
    bool FirstCall();
    // The key's private pool of `bytes` (allocated on the first request and
    // kept: the same address on every call). RESOURCE_EXHAUSTED past the
    // policy's max_pool_bytes.
    absl::StatusOr<CUdeviceptr> Pool(int64_t bytes);
    // Runs `launches` on `stream`: captures and instantiates the key's
    // graph if it has none (or its launches changed beyond pointer patches),
    // patches the kernel nodes whose input or output pointers changed since
    // the last replay, and launches the graph. False, with the reason
    // logged and kept for Describe, when the key cannot be recorded (a
    // capture or instantiate error): the caller runs plain launches.
    absl::StatusOr<bool> Replay(absl::Span<const CudaKernelLaunch> launches,
                                CUstream stream);

   private:
    friend class CudaGraphSet;
    Lease(CudaGraphSet* set, Record* record, std::unique_lock<std::mutex> lock)
        : set_(set), record_(record), lock_(std::move(lock)) {}
    CudaGraphSet* set_;
    Record* record_;
    std::unique_lock<std::mutex> lock_;
  };

  // The record for size key `key` (made if new, evicting the least recently
  // used key past policy.max_graphs_per_entry, and marked warm for the next
  // call), or nullopt while another call holds the set.
  std::optional<Lease> TryAcquire(absl::Span<const int64_t> key,
                                  const CudaGraphPolicy& policy);

  // Why the entry (or one of its keys) runs plain launches: kept for
  // Describe and logged under GJ_LOGS=cudagraphs once per distinct reason.
  // May be called with or without a Lease held.
  void Refuse(const std::string& reason);

  // "cuda graphs: 2 recorded (2 kept: size keys [4, 5], [4, 17]), 3
  // replays, 2 node pointer updates, 0 re-captures, 0 evictions, private
  // pool 512 B", then "; cuda graphs refused: <reasons>" if any; empty
  // before the first call in reduce-overhead mode.
  std::string Describe() const;

 private:
  absl::Status Capture(Record& record,
                       absl::Span<const CudaKernelLaunch> launches);
  void Release(Record& record);  // graph, exec and pool
  void Count(std::atomic<int64_t> CudaGraphCounters::*counter, int64_t n);

  const CudaDevice* device_;
  mutable std::mutex mu_;
  CUstream capture_stream_ = nullptr;        // created on the first capture
  const CudaGraphPolicy* policy_ = nullptr;  // the last call's
  // Most recently used first.
  std::list<std::unique_ptr<Record>> records_;
  std::vector<std::vector<int64_t>> keys_seen_;  // every key ever recorded
  struct Totals {
    int64_t recorded = 0;
    int64_t replays = 0;
    int64_t pointer_updates = 0;
    int64_t recaptures = 0;
    int64_t evictions = 0;
    int64_t pool_bytes = 0;
  } totals_;
  mutable std::mutex refusal_mu_;
  std::vector<std::string> refusals_;  // guarded by refusal_mu_
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_
