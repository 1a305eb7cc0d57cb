#ifndef GUARDJIT_RUNTIME_THREAD_POOL_H_
#define GUARDJIT_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace guardjit {

// A fixed set of worker threads for data-parallel loops (compiled kernels
// split their outer loop over it). One loop runs on the pool at a time; a
// loop started while another runs (from another thread, or nested inside a
// loop body) runs on its caller's thread alone, so ParallelFor never waits
// for unrelated work and never deadlocks.
class ThreadPool {
 public:
  // `num_threads` counts the calling thread: 1 means no workers.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process's pool: GJ_NUM_THREADS threads if set, else one per
  // hardware thread. Created on first use, never destroyed.
  static ThreadPool& Global();

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Loops that were split across the workers (a loop run on its caller's
  // thread alone is not counted).
  uint64_t parallel_loops() const;

  // Calls fn(begin, end) on disjoint chunks covering [0, n), each at least
  // `grain` long (but the last), on the workers and the calling thread;
  // returns when every chunk is done. Thread-safe.
  //
  // Waiting, as ONNX Runtime's pool does: a worker that finished a loop,
  // and a caller waiting for the last chunks, spin for a few tens of
  // microseconds (a program's next step usually starts within them, and a
  // condition variable's wake-up costs about as much as a small step) and
  // then block, so a worker never burns its time slice waiting for a
  // descheduled peer on a loaded machine.
  void ParallelFor(int64_t n, int64_t grain,
                   absl::FunctionRef<void(int64_t, int64_t)> fn);

 private:
  void WorkerLoop();
  // Takes and runs chunks of the current loop until none is left.
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // held by the thread whose loop owns the pool

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  // generation_ and stop_ published for threads that spin before they
  // block (written under mu_, read without it).
  std::atomic<uint64_t> published_generation_{0};
  std::atomic<bool> published_stop_{false};
  // The current loop (valid while `pending_` > 0).
  const absl::FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 1;
  int64_t next_ = 0;  // next chunk start, under mu_
  // Chunks not finished yet: changed under mu_, read by the spinning caller
  // without it.
  std::atomic<int64_t> pending_{0};
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_THREAD_POOL_H_
