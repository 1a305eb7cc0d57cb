#ifndef GUARDJIT_RUNTIME_SIMT_SIMT_CREW_H_
#define GUARDJIT_RUNTIME_SIMT_SIMT_CREW_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/simt/simt_emulation_header.h"

namespace guardjit {

// The SIMT emulator's execution: runs a grid of blocks on real threads, one
// per thread of a block, each running every block in turn (blockIdx order, x
// fastest) with a barrier between blocks, so the module's static __shared__
// variables are not reused before the block is done with them.
// __syncthreads is a barrier across the block's threads; warp collectives
// meet in a per-warp exchange; a thread that returns from the kernel leaves
// both, as exited threads do on a GPU, so the others do not wait for it.
// Threads sleep while they wait (futexes through std::atomic::wait and
// condition variables): a machine with 2 cores runs blocks of 1024 threads.
// The threads are started by the first run that needs them and live until
// the crew is destroyed.
class SimtCrew {
 public:
  using Entry = void (*)(SimtThreadState* state, void* const* params);

  SimtCrew();
  ~SimtCrew();
  SimtCrew(const SimtCrew&) = delete;
  SimtCrew& operator=(const SimtCrew&) = delete;

  // Runs `entry` for every thread of every block and returns when all are
  // done. One run at a time (callers serialize); every dimension >= 1 and at
  // most 1024 threads per block (callers check).
  void Run(Entry entry, void* const* params, SimtUint3 grid, SimtUint3 block);

 private:
  class Barrier;
  class Warp;
  struct Worker;

  static int SyncThreads(SimtThreadState* state, int op, int predicate);
  static unsigned long long WarpCollective(SimtThreadState* state, int op,
                                           uint32_t mask,
                                           unsigned long long value,
                                           int src_lane);

  void WorkerLoop(Worker* worker);
  void RunBlocks(Worker& worker);
  // Every thread back in the block barrier and the warps.
  void ResetBlock();

  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Warp>> warps_;
  std::unique_ptr<Barrier> block_barrier_;  // __syncthreads
  std::unique_ptr<Barrier> block_end_;      // between blocks
  std::atomic<bool> stopping_{false};

  // The current run, written before the workers start.
  Entry entry_ = nullptr;
  void* const* params_ = nullptr;
  SimtUint3 grid_{};
  uint32_t threads_ = 0;
  uint64_t blocks_ = 0;
  std::atomic<uint32_t> running_{0};   // workers still in the run
  std::atomic<uint32_t> finished_{0};  // bumped when a run is done
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_SIMT_SIMT_CREW_H_
