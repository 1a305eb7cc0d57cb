#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_

// CUDA graphs for one cache entry (reduce-overhead mode, issue #15): per
// concrete size key (the call's symbol values; a static entry has one key)
// the entry's device work (CudaGraphOp: our kernel launches, memcpy nodes,
// extern cuBLASLt calls) is captured once into a CUDA graph and replayed with
// one cuGraphLaunch per call. A key's first call runs plain launches, its
// second captures, later ones replay; moved input and output addresses are
// patched into our kernel and memcpy nodes (no copy-in), extern operands are
// read in place until they move, then staged through the key's pool up to
// CudaGraphPolicy::max_staged_bytes or re-captured; a change the nodes cannot
// express re-captures the key; past max_graphs_per_entry keys the least
// recently used is evicted. The design and its reasons, and the exact driver
// call sequence the tests check: runtime/cuda/cuda_graph.md.

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

// A device-to-device copy of `bytes` (a memcpy node in a graph).
struct CudaGraphCopy {
  CUdeviceptr dst = 0;
  CUdeviceptr src = 0;
  int64_t bytes = 0;
  CudaGraphBuffer dst_buffer;
  CudaGraphBuffer src_buffer;
};

// What an extern call reads or writes: the buffer (its base address and
// extent, which the graph holds as captured).
struct CudaGraphOperand {
  CudaGraphBuffer buffer;
  uint64_t address = 0;
  int64_t bytes = 0;
  const char* name = "";  // "A", "B", "bias", "C", "D", "workspace"
};

// An extern call: `enqueue(context, stream)` enqueues it on `stream` (a
// cuBLASLt product with an explicit workspace). `node` names the graph node
// it computes, for logs and Describe. The context and node must outlive
// the Replay call only.
struct CudaExternCall {
  const std::string* node = nullptr;
  absl::InlinedVector<CudaGraphOperand, 6> operands;
  absl::Status (*enqueue)(const void* context, CUstream stream) = nullptr;
  const void* context = nullptr;
};

// One op of a call's device work.
struct CudaGraphOp {
  enum class Kind : uint8_t { kKernel, kCopy, kExtern };
  Kind kind = Kind::kKernel;
  CudaKernelLaunch launch;  // kKernel
  CudaGraphCopy copy;       // kCopy
  CudaExternCall call;      // kExtern
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
    // The key's cuBLASLt workspace of at least `bytes` (kept, as the pool
    // is; a larger request frees it and allocates anew, which moves it: the
    // graph is then re-captured). Counted in the pool's bytes.
    absl::StatusOr<CUdeviceptr> Workspace(int64_t bytes);
    // Whether extern operands in `buffer` (an input or an output) are staged
    // through the key's pool (see the header comment), and making one so
    // (`why`: "output 0 of node 'fc2' (fresh memory on every call)").
    bool Staged(CudaGraphBuffer buffer) const;
    void Stage(CudaGraphBuffer buffer, std::string why);
    // The policy's max_staged_bytes.
    int64_t max_staged_bytes() const;

    enum class Outcome {
      kPlainLaunches,  // the key cannot be recorded: run plain launches
      kReplayed,       // the graph ran on the stream
      kRestage,        // an extern operand became staged: build the ops
                       // again (Staged says which) and Replay them
    };
    // Runs `ops` on `stream`: captures and instantiates the key's graph if
    // it has none (or its ops changed beyond pointer patches), patches the
    // nodes whose input or output pointers changed since the last replay,
    // and launches the graph. kPlainLaunches, with the reason logged and
    // kept for Describe, when the key cannot be recorded (a capture or
    // instantiate error).
    absl::StatusOr<Outcome> Replay(absl::Span<const CudaGraphOp> ops,
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
  //
  // The set keeps a pointer to `policy` past the call: later calls' limits
  // and its own destructor (which counts the graphs it releases into
  // policy.counters) read it. So `policy` must outlive the set, or the next
  // TryAcquire with another policy: Function declares its policy before its
  // cache entries, which hold the sets (a test that builds an executable by
  // hand declares the policy first too).
  std::optional<Lease> TryAcquire(absl::Span<const int64_t> key,
                                  const CudaGraphPolicy& policy);

  // Why the entry (or one of its keys) runs plain launches: kept for
  // Describe and logged under GJ_LOGS=cudagraphs once per distinct reason.
  // May be called with or without a Lease held.
  void Refuse(const std::string& reason);

  // "cuda graphs: 2 recorded (2 kept: size keys [4, 5], [4, 17]), 3
  // replays, 2 node pointer updates, 0 re-captures, 0 evictions, private
  // pool 512 B", with "; 2 cuBLASLt steps captured, 1 operand staged
  // through the pool (input 0 of node 'fc1')" for entries with extern
  // calls, then "; cuda graphs refused: <reasons>" if any; empty before the
  // first call in reduce-overhead mode.
  std::string Describe() const;

 private:
  absl::Status Capture(Record& record, absl::Span<const CudaGraphOp> ops);
  void Release(Record& record);  // graph, exec and pool
  void Count(std::atomic<int64_t> CudaGraphCounters::*counter, int64_t n);

  const CudaDevice* device_;
  mutable std::mutex mu_;
  CUstream capture_stream_ = nullptr;        // created on the first capture
  // The last TryAcquire's policy (see there: it must outlive the set).
  const CudaGraphPolicy* policy_ = nullptr;
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
