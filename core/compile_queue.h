#ifndef GUARDJIT_CORE_COMPILE_QUEUE_H_
#define GUARDJIT_CORE_COMPILE_QUEUE_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace guardjit {

// Background threads that run compiles for GJ_COMPILE_ASYNC functions (one
// queue per context, shared by its functions, which keep it alive). Tasks run
// in the order scheduled. The destructor runs the tasks still queued (a task
// of a destroyed function only sees its cancel flag) and joins the threads.
class CompileQueue {
 public:
  explicit CompileQueue(int threads = 1);
  ~CompileQueue();
  CompileQueue(const CompileQueue&) = delete;
  CompileQueue& operator=(const CompileQueue&) = delete;

  void Schedule(std::function<void()> task);

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_COMPILE_QUEUE_H_
