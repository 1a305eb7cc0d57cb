#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdlib>

namespace guardjit {
namespace {

thread_local bool in_parallel_region = false;

// How long a thread spins before it blocks: about 50 microseconds of pause
// instructions (each some tens of cycles).
constexpr int kSpinIterations = 4000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    published_stop_.store(true, std::memory_order_release);
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool* pool = [] {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* env = std::getenv("GJ_NUM_THREADS")) n = std::atoi(env);
    return new ThreadPool(std::max(1, n));
  }();
  return *pool;
}

uint64_t ThreadPool::parallel_loops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t max_chunks = (n + grain - 1) / grain;
  std::unique_lock<std::mutex> run(run_mu_, std::defer_lock);
  if (workers_.empty() || max_chunks < 2 || in_parallel_region ||
      !run.try_lock()) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balance uneven progress.
  const int64_t chunks =
      std::min<int64_t>(max_chunks, int64_t{num_threads()} * 4);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = (n + chunks - 1) / chunks;
    next_ = 0;
    pending_.store((n + chunk_ - 1) / chunk_, std::memory_order_relaxed);
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  work_cv_.notify_all();
  RunChunks();
  // The last chunks are usually finishing on the workers: spin, then block.
  for (int i = 0;
       i < kSpinIterations && pending_.load(std::memory_order_acquire) != 0;
       ++i) {
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_.load() == 0; });
  fn_ = nullptr;
}

void ThreadPool::RunChunks() {
  in_parallel_region = true;
  std::unique_lock<std::mutex> lock(mu_);
  while (fn_ != nullptr && next_ < n_) {
    const int64_t begin = next_;
    const int64_t end = std::min(n_, begin + chunk_);
    next_ = end;
    const auto* fn = fn_;
    lock.unlock();
    (*fn)(begin, end);
    lock.lock();
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      done_cv_.notify_all();
    }
  }
  in_parallel_region = false;
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    // The next loop usually starts soon (a program's next step): spin for
    // it before blocking.
    for (int i = 0;
         i < kSpinIterations &&
         published_generation_.load(std::memory_order_acquire) == seen &&
         !published_stop_.load(std::memory_order_acquire);
         ++i) {
      CpuRelax();
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunChunks();
  }
}

}  // namespace guardjit
