#ifndef GUARDJIT_RUNTIME_PROGRAM_DEVICE_FAULTS_H_
#define GUARDJIT_RUNTIME_PROGRAM_DEVICE_FAULTS_H_

// The fault words of one device program (kernel_backend.h's
// DeviceFaultWords), lent to its calls. A device kernel reports a failed
// index check by ORing its bit into a word the host reads: the words belong
// to the program, not to the loaded module (which every program with the
// same CUDA source shares), and each call launches with a set of its own,
// so a failed check is reported by the function that made it, naming its
// node, and by the call that made it when that call synchronizes:
//   - a call takes a clean set (Acquire), launches with it, and either
//     waits for its stream and reads it (Lease::Settle: the call's own
//     checks, "during this call"), or marks the end of its launches on its
//     stream and gives the set back pending (the lease's destructor);
//   - the next call of the program reads every pending set the device has
//     finished with (an event past the marked call) and reports the first
//     failure as its own error ("in an earlier call"), with the sizes of
//     the call that made it; sets still in flight stay pending and are
//     never lent, so no later call's check reads another call's words.
// reduce-overhead mode's CUDA graphs bake each kernel's word address into
// the graph, so each size key's graph has a set of its own (GraphWords): a
// replay that synchronizes reads it after its stream is done, and any other
// call reports what a finished replay left there. Replays of different keys
// in flight at once on different streams keep their failures apart; two
// replays of the same key in flight at once (one graph, one word address)
// still share a set and may report each other's failures (still the same
// function and sizes). Past max(kMinGraphSets, the graphs an entry keeps)
// keys, a new key takes over the least recently replayed key's set that no
// call holds and nothing has pending (that key's
// graph, if still kept, is re-captured with a new set when it replays:
// the word address is one of its launch values).
// As many sets exist as calls were in flight at once (plus the graphs'):
// a set is a few words of pinned host memory and an event, and an
// asynchronous call costs one cuEventRecord. Programs whose kernels have no
// checks have no pool and pay neither.

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/run_context.h"
#include "runtime/program/kernel_module.h"

namespace guardjit {

// A failed check: the kernel, its mask and the sizes of the call that made
// it. kernel -1: none.
struct DeviceFault {
  int kernel = -1;
  int64_t mask = 0;
  std::vector<int64_t> symbols;
};

class DeviceFaultPool {
 public:
  // `module` makes the sets (KernelModule::NewFaultWords) and outlives the
  // pool.
  explicit DeviceFaultPool(const KernelModule* module) : module_(module) {}
  DeviceFaultPool(const DeviceFaultPool&) = delete;
  DeviceFaultPool& operator=(const DeviceFaultPool&) = delete;

  // A set of words and the sizes of the call that gave it back pending.
  struct Set {
    std::unique_ptr<DeviceFaultWords> words;
    std::vector<int64_t> symbols;
  };
  // One call's set of words: given back pending (ended on ctx.stream) when
  // destroyed unless Settle read it.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    const DeviceFaultWords* words() const;
    // Waits for ctx.stream and takes this call's failed check (kernel -1:
    // none); the set goes back clean.
    absl::StatusOr<DeviceFault> Settle();
    // Gives the set back clean: the call launched nothing with it (a graph
    // replay uses GraphWords).
    void Unused();

   private:
    friend class DeviceFaultPool;
    Lease(DeviceFaultPool* pool, std::unique_ptr<Set> set,
          const RunContext* ctx, absl::Span<const int64_t> symbols)
        : pool_(pool), set_(std::move(set)), ctx_(ctx), symbols_(symbols) {}
    DeviceFaultPool* pool_;
    std::unique_ptr<Set> set_;
    const RunContext* ctx_;
    absl::Span<const int64_t> symbols_;
  };

  // A clean set for a call on ctx (sizes `symbols`, kept with the set if it
  // goes back pending). First takes into `earlier` the first failed check
  // that a finished earlier call left (kernel -1: none); the caller reports
  // it and launches nothing.
  absl::StatusOr<Lease> Acquire(const RunContext& ctx,
                                absl::Span<const int64_t> symbols,
                                DeviceFault* earlier);

  // Fault-word sets kept for graph size keys before an idle one is taken
  // over: at least this many, and at least one per graph the entry keeps
  // (a taken-over set moves its words, which re-captures its key's graph).
  static constexpr size_t kMinGraphSets = 16;
  // The set of size key `symbols`' graph (made on first use), of at most
  // max(kMinGraphSets, `graphs_kept`) sets. Only the caller holding the
  // entry's graph lease launches with it.
  absl::StatusOr<const DeviceFaultWords*> GraphWords(
      absl::Span<const int64_t> symbols, size_t graphs_kept);
  // Gives back GraphWords' set of key `symbols` when the call did not
  // replay (a refusal, a failed capture, an error): a set lent and never
  // given back could not be taken over by another key.
  void GraphUnused(absl::Span<const int64_t> symbols);
  // After a replay of key `symbols`' graph with its GraphWords:
  // `synchronize`: waits for ctx.stream and takes the replay's failed
  // check; else marks the replay's end on ctx.stream for a later call to
  // read (kernel -1 returned).
  absl::StatusOr<DeviceFault> GraphReplayed(const RunContext& ctx,
                                            absl::Span<const int64_t> symbols,
                                            bool synchronize);

 private:
  void Return(std::unique_ptr<Set> set, bool pending);

  const KernelModule* module_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Set>> clean_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Set>> pending_ ABSL_GUARDED_BY(mu_);
  // One set per graph size key (Set::symbols: the key's, kept when the
  // replay goes pending).
  struct GraphSet {
    std::vector<int64_t> key;
    std::unique_ptr<Set> set;
    bool pending = false;
    // Calls GraphWords lent it to that have not given it back yet
    // (GraphReplayed, GraphUnused); only an idle set is taken over.
    int replaying = 0;
    uint64_t last_use = 0;
  };
  GraphSet* FindGraphSet(absl::Span<const int64_t> key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<GraphSet> graphs_ ABSL_GUARDED_BY(mu_);
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_DEVICE_FAULTS_H_
