#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_GRAPH_H_

// CUDA graphs for one cache entry (reduce-overhead mode, issue #15): per
// concrete size key (the call's symbol values; a static entry has one key)
// the entry's device work is captured once into a CUDA graph and replayed
// with one cuGraphLaunch per call.
//
// A call's work is a sequence of ops (CudaGraphOp): our own kernel launches,
// device-to-device copies (memcpy nodes) and extern calls (cuBLASLt
// products: opaque, captured by running them on the capture stream; the
// nodes they leave in the graph are not ours to read or patch). A GEMM step
// is one extern call; a convolution is its im2col kernel (ours: the column
// matrices go to the key's pool), one extern call running its
// strided-batched products (into the pool, or into the output when the
// epilogue would only store them) and its epilogue kernel. After a
// capture each of our launches and copies must match exactly one node (by
// function, grid and parameter values; by source, destination and size);
// nodes matching none (kernels of other functions, copies, memsets, empty
// nodes: cuBLASLt's own work) are tolerated only when the ops have extern
// calls, and any other node type refuses the key.
//
// No copy-in for our kernels. PyTorch's cudagraph trees copy every input
// into a static placeholder before each replay (a device-to-device copy per
// input per call). Here each captured kernel node remembers which of its
// parameters hold which buffer (input i, output j, the entry's private
// pool, a constant); when a call's input or output addresses differ from
// the last replay's, only the kernel nodes holding those addresses are
// patched with cuGraphExecKernelNodeSetParams (a host-side update of the
// instantiated graph: no device work, no copies, inputs read where the
// caller keeps them, outputs written where the caller wants them).
// Intermediates live in a private pool per size key, allocated before the
// capture, so their addresses never change between replays. A change the
// node parameters cannot express (a pool or size value that moved, a
// different op sequence, a patch the driver rejects) re-captures the key.
//
// Extern calls cannot be patched: cuBLASLt's kernels take their pointers in
// parameter blocks whose layout is cuBLASLt's own. Each extern operand that
// is a call input or output (an activation, a weight passed as an input, an
// output) has a policy per size key, kept in its record:
// - direct (the start): cuBLASLt reads or writes the caller's memory; the
//   address is part of what the graph was captured with;
// - staged: the operand gets a region of the key's private pool, and a
//   memcpy node of ours copies the input into it before the extern (or the
//   product out of it into the output after); a moved address is then a
//   cuGraphExecMemcpyNodeSetParams patch, like a kernel's.
// When a replay finds a direct operand moved, an operand of at most
// CudaGraphPolicy::max_staged_bytes becomes staged (for good) and the key
// is re-captured once; a larger one re-captures the key with the moved
// address (counted in re-captures; logged under GJ_LOGS=cudagraphs naming
// node and operand). Why this split, and not one rule: a staged operand
// costs a device copy of its bytes on every replay, moved or not; a
// re-capture costs a capture + instantiate on the host (tens to hundreds of
// microseconds, far more than the launches a graph saves) each time the
// operand moves. Activations at small batch are small and move on every
// call (a new tensor per call): staging costs a copy of a few KiB, well
// under a kernel launch. Weights are large and rarely move (a parameter
// keeps its storage; changed in place, the graph reads the new values):
// copying megabytes every call to avoid a rare re-capture is the worse
// trade. The default threshold, 1 MiB, is where a copy takes about a
// microsecond of device time at HBM bandwidth (an estimate from the
// bandwidth, not a measurement). Outputs in fresh memory (no destination,
// as gj_function_call_alloc makes) move on every call by construction
// (the caller still holds the last one), so an extern that writes one
// stages it from the first capture when it is small enough. cuBLASLt's
// workspace is the key's own allocation, given explicitly (nothing is
// allocated while a stream is captured).
//
// The call sequence, as tests on a recording driver check it: the first
// call of a key runs plain launches (warm-up, by the caller); the second
// captures on the set's private stream (cuStreamBeginCapture, thread-local
// mode: capture never touches other threads' work; a graph is
// stream-independent, so it is recorded on a stream of its own and replayed
// on whichever stream each call brings), then cuStreamEndCapture,
// cuGraphInstantiate and cuGraphLaunch on the call's stream; later calls
// are cuGraphLaunch alone, preceded by one cuGraphExecKernelNodeSetParams
// (or cuGraphExecMemcpyNodeSetParams) per node whose pointers changed.
// Beyond max_graphs_per_entry size keys the least recently used key's graph
// and pool are freed (an eviction).

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
