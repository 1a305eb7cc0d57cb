#ifndef GUARDJIT_CORE_FUNCTION_H_
#define GUARDJIT_CORE_FUNCTION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/cache_entry.h"
#include "core/call_signature.h"
#include "core/compiler.h"
#include "core/cuda_graph_policy.h"
#include "core/function_options.h"
#include "core/graph.h"
#include "core/graph_segments.h"
#include "core/guard_table.h"
#include "core/recompile_policy.h"
#include "core/specializer.h"

namespace guardjit {

struct FunctionStats {
  int64_t calls = 0;
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t compiles = 0;
  int64_t recompiles = 0;      // compiles after the first
  int64_t fallback_calls = 0;  // eager runs past the recompile limit
  int64_t cache_entries = 0;
  double compile_ms_total = 0;
  double guard_ns_mean = 0;  // lookup latency, sampled on hits
  // Graphs (segments) reached and the graph breaks between them: 1 and 0
  // for a function whose graph does not break. The counters above sum over
  // segments, except calls and hits, which count whole calls (a hit: no
  // segment missed).
  int64_t graph_count = 1;
  int64_t graph_break_count = 0;
  // Calls run eagerly while their entry compiled in the background.
  int64_t eager_while_compiling = 0;
  // Entries (of `compiles`) whose compiled code all came from the
  // persistent compile cache: nothing was compiled for them.
  int64_t entries_loaded = 0;
};

// A graph plus its cache entries: TorchDynamo's frame cache. Call() builds no
// guard state on a hit: it looks up the call signature in the published
// GuardTable (no lock) and runs the entry. A miss records why it missed,
// specializes, compiles and publishes a table with the new entry; one
// compile runs per miss key (calls with the same key wait for it, misses on
// other keys compile concurrently) and no lock is held while it runs. Past
// the recompile limit the function runs existing entries or the eager
// fallback.
class Function {
 public:
  static absl::StatusOr<std::unique_ptr<Function>> Create(
      std::shared_ptr<const Graph> graph, std::shared_ptr<Compiler> compiler,
      FunctionOptions options);
  ~Function();

  // Runs `inputs` (`call` describes the same tensors: views carry what the
  // host said beyond the data, requires_grad), writing one tensor per graph
  // output into `outputs` (Executable::Run: a view of the output's
  // destination in `ctx` when written in place, else a tensor the caller
  // copies into it). A hit runs its entry with the symbol values its guards
  // bound (set in ctx.symbols for the run, cleared after) and allocates
  // nothing itself. Thread-safe.
  absl::Status Call(absl::Span<const Tensor> inputs, const CallSignature& call,
                    RunContext& ctx, absl::Span<Tensor> outputs);
  // Call into a new vector (tests, tools).
  absl::StatusOr<std::vector<Tensor>> Call(absl::Span<const Tensor> inputs,
                                           const CallSignature& call,
                                           const RunContext& ctx = {});

  // Compiles the entry a call with `call`'s signature would use, without
  // running anything (nothing reads the inputs' data). OK if an entry
  // already serves it; FAILED_PRECONDITION past the recompile limit.
  absl::Status Precompile(const CallSignature& call);

  FunctionStats stats() const;
  // torch._dynamo.explain()-style report plus cache state and counters.
  std::string Explain() const;
  // Guard dumps of every entry, most recently used first.
  std::string DumpGuards() const;
  // Reasons of every recompile so far, oldest first.
  std::vector<std::string> RecompileReasons() const;

  const Graph& graph() const { return *graph_; }
  const std::string& name() const { return options_.name; }
  // Name of input `index` for messages: "input 1 ('b')".
  std::string InputLabel(size_t index) const;
  // True when `tensor` shares memory with a weight of the graph, which a host
  // must never be handed to write into.
  bool AliasesConstant(const Tensor& tensor) const;
  // What CUDA calls carry in RunContext::cuda_graphs: the function's policy
  // in reduce-overhead mode, else null (plain launches).
  const CudaGraphPolicy* cuda_graph_policy() const {
    return options_.mode == FunctionMode::kReduceOverhead ? &cuda_graph_policy_
                                                          : nullptr;
  }
  // What reduce-overhead mode's CUDA graphs did (gj_function_stats).
  const CudaGraphCounters& cuda_graph_counters() const {
    return cuda_graph_counters_;
  }

  // The graphs this function runs as (itself, or its segments reached so
  // far) and the reasons of the graph breaks between them.
  void CollectGraphs(std::vector<const Function*>& graphs) const;
  void CollectBreaks(std::vector<std::string>& reasons) const;

 private:
  friend class GraphSegments;
  // Call, clearing `hit` when this function (any segment of it) missed:
  // the one path of every call.
  absl::Status Call(absl::Span<const Tensor> inputs, const CallSignature& call,
                    RunContext& ctx, absl::Span<Tensor> outputs, bool& hit);
  std::string ExplainSegments() const;
  // The function's own parts of explain(): guards and compile times of its
  // entries, indented, each line prefixed with `label`.
  void AppendGuards(std::string& out, const std::string& label) const;
  void AppendCompileTimes(std::string& out, const std::string& label) const;
  // Each entry's DescribeProfile() (GJ_PROFILE=1), under "Step Times:".
  void AppendStepTimes(std::string& out, const std::string& label) const;
  Function(std::shared_ptr<const Graph> graph,
           std::shared_ptr<Compiler> compiler, FunctionOptions options);
  // A compile in flight for one miss key.
  struct Pending {
    bool done = false;  // guarded by mu_
  };
  // Specializes and compiles the entry for `call` (registered as pending
  // under `key`) and publishes it. Holds no lock while compiling.
  // `background`: a failure makes `key` eager in the same critical section
  // that retires the pending compile, so no call sees the key neither
  // pending nor eager and compiles it again. `may_choose_bounds`: the
  // compiler may rely on bounds it picks from `call`
  // (Executable::chosen_bounds), which become guards of the entry.
  absl::StatusOr<const Executable*> Build(const CallSignature& call,
                                          std::vector<DynamicDim> dynamic,
                                          const std::string& key,
                                          const std::string& reason,
                                          std::shared_ptr<Pending> pending,
                                          bool background = false,
                                          bool may_choose_bounds = true);
  // What a background compile reads of a call, owned past the call.
  struct OwnedCall {
    explicit OwnedCall(const CallSignature& call);
    CallSignature signature() const { return {views, ambient}; }
    std::vector<std::vector<int64_t>> sizes, strides;
    std::vector<InputView> views;
    AmbientState ambient;
  };
  // Background compiles of this function (GJ_COMPILE_ASYNC), shared with
  // their queued tasks; the destructor cancels and waits for them.
  struct AsyncCompiles {
    std::mutex mu;
    std::condition_variable cv;
    int in_flight = 0;
    bool cancelled = false;
  };
  // The entry that serves `call` on the lock-free path (counted), or null;
  // its guards' symbol values are left in `bound` (GuardTable::Lookup).
  CacheEntry* Hit(const CallSignature& call, absl::Span<int64_t> bound);
  // The executable for `call`: its entry's (waiting for a compile of the
  // same key in flight), a new entry's, or the eager fallback past the
  // recompile limit. `precompile`: no hit is counted and the limit is an
  // error instead of the fallback.
  absl::StatusOr<const Executable*> Resolve(const CallSignature& call,
                                            bool precompile);
  // The bytes of everything a guard can read in `call`: calls with one key
  // share a compile.
  // With the values of value-specialized inputs (read only when
  // CheckValueInputs passed).
  std::string MissKey(const CallSignature& call) const;
  // INVALID_ARGUMENT naming the first value-specialized input `call` cannot
  // be specialized on (core/value_inputs.h).
  absl::Status CheckValueInputs(const CallSignature& call) const;
  std::vector<CacheEntry*> EntriesMostRecentFirst() const;

  const std::shared_ptr<const Graph> graph_;
  const std::shared_ptr<Compiler> compiler_;
  const FunctionOptions options_;
  const std::vector<std::string> input_names_;
  absl::flat_hash_set<const Storage*> constant_storage_;
  CudaGraphCounters cuda_graph_counters_;
  CudaGraphPolicy cuda_graph_policy_;

  // Set when the graph breaks: the calls run as segments. With fullgraph
  // the break is `fullgraph_error_` instead.
  std::unique_ptr<GraphSegments> segments_;
  absl::Status fullgraph_error_;
  std::atomic<int64_t> segment_hits_{0};
  std::shared_ptr<AsyncCompiles> async_;  // set with options_.compile_queue
  std::atomic<int64_t> eager_while_compiling_{0};

  std::atomic<const GuardTable*> table_;
  std::atomic<uint64_t> tick_{0};
  // Hits are the sum of the entries' own counters.
  std::atomic<int64_t> calls_{0}, misses_{0}, fallback_calls_{0};
  std::atomic<int64_t> guard_samples_{0}, guard_ns_total_{0};

  // Guards everything below; held briefly, never during a compile.
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Pending>> pending_;
  std::condition_variable pending_cv_;
  std::vector<std::unique_ptr<CacheEntry>> entries_;
  std::vector<std::unique_ptr<GuardTable>>
      tables_;  // kept: readers may hold old ones
  std::unique_ptr<Executable> fallback_;
  // Miss keys whose background compile failed, or whose specialization the
  // backend rejected (UNIMPLEMENTED): they run eagerly.
  absl::flat_hash_set<std::string> eager_keys_;
  // Why: the backend's UNIMPLEMENTED for each key it rejected.
  std::vector<std::string> skipped_;
  // The recompile limit and automatic dynamic's state.
  RecompilePolicy policy_;
  double compile_ms_total_ = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_FUNCTION_H_
