#include "core/compile_queue.h"

#include <utility>

namespace guardjit {

CompileQueue::CompileQueue(int threads) {
  for (int i = 0; i < (threads > 0 ? threads : 1); ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

CompileQueue::~CompileQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void CompileQueue::Schedule(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void CompileQueue::Work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      // Queued tasks run even when stopping: each one owns a function's
      // count of compiles in flight, which the function waits for.
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace guardjit
