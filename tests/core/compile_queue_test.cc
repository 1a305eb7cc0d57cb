// The background compile queue (core/compile_queue.h): tasks run in the
// order scheduled, several threads run them side by side, and the
// destructor runs what is still queued before joining its threads.

#include "core/compile_queue.h"

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(CompileQueueTest, OneThreadRunsTasksInScheduledOrder) {
  std::mutex mu;
  std::vector<int> order;
  {
    CompileQueue queue(1);
    for (int i = 0; i < 50; ++i) {
      queue.Schedule([&, i] {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      });
    }
  }  // The destructor runs what is left, then joins.
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(order, expected);
}

TEST(CompileQueueTest, DestructorRunsQueuedTasksOfABusyThread) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  int ran = 0;  // written by the queue's one thread only
  {
    CompileQueue queue(1);
    queue.Schedule([&] {
      started.set_value();
      released.wait();
      ++ran;
    });
    for (int i = 0; i < 10; ++i) queue.Schedule([&] { ++ran; });
    // The thread is inside the first task with ten queued behind it when
    // the queue is destroyed.
    started.get_future().wait();
    release.set_value();
  }
  EXPECT_EQ(ran, 11);
}

TEST(CompileQueueTest, TwoThreadsRunTasksSideBySide) {
  // Each task waits for the other to have started: only two threads
  // running at once finish both (bounded, so a failure does not hang).
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  int met = 0;
  {
    CompileQueue queue(2);
    for (int i = 0; i < 2; ++i) {
      queue.Schedule([&] {
        std::unique_lock<std::mutex> lock(mu);
        ++started;
        cv.notify_all();
        if (cv.wait_for(lock, std::chrono::seconds(30),
                        [&] { return started == 2; })) {
          ++met;
        }
      });
    }
  }
  EXPECT_EQ(met, 2);
}

TEST(CompileQueueTest, ZeroThreadsMeansOneThread) {
  int ran = 0;
  {
    CompileQueue queue(0);
    queue.Schedule([&] { ++ran; });
  }
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace guardjit
