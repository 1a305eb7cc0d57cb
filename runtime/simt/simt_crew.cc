#include "runtime/simt/simt_crew.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/functional/function_ref.h"

namespace guardjit {
namespace {

constexpr uint32_t kWarpSize = 32;

uint32_t LaneBit(uint32_t lane) { return 1u << lane; }

}  // namespace

// A barrier whose party shrinks when a thread leaves (as with
// std::barrier::arrive_and_drop), counting the non-zero predicates of each
// phase for __syncthreads_count/_and/_or.
class SimtCrew::Barrier {
 public:
  // Only while no thread waits.
  void Reset(uint32_t parties) {
    std::lock_guard<std::mutex> lock(mu_);
    parties_ = parties;
    arrived_ = 0;
    true_count_ = 0;
  }

  // Waits for the phase's other parties. The last to arrive runs
  // `on_complete` before any of them returns.
  int ArriveAndWait(int op, int predicate,
                    absl::FunctionRef<void()> on_complete) {
    std::unique_lock<std::mutex> lock(mu_);
    const uint32_t phase = phase_.load(std::memory_order_relaxed);
    ++arrived_;
    if (predicate != 0) ++true_count_;
    if (arrived_ == parties_) {
      on_complete();
      Complete(lock);
    } else {
      lock.unlock();
      while (phase_.load(std::memory_order_acquire) == phase) {
        phase_.wait(phase, std::memory_order_acquire);
      }
    }
    // Stable until this thread arrives again: the next phase needs it.
    switch (op) {
      case kSimtSyncAnd:
        return last_true_count_ == last_parties_ ? 1 : 0;
      case kSimtSyncOr:
        return last_true_count_ != 0 ? 1 : 0;
      default:
        return static_cast<int>(last_true_count_);
    }
  }

  void ArriveAndDrop() {
    std::unique_lock<std::mutex> lock(mu_);
    --parties_;
    if (arrived_ > 0 && arrived_ == parties_) Complete(lock);
  }

 private:
  void Complete(std::unique_lock<std::mutex>& lock) {
    last_parties_ = arrived_;
    last_true_count_ = true_count_;
    arrived_ = 0;
    true_count_ = 0;
    phase_.fetch_add(1, std::memory_order_release);
    lock.unlock();
    phase_.notify_all();
  }

  std::mutex mu_;
  uint32_t parties_ = 0;     // under mu_
  uint32_t arrived_ = 0;     // under mu_
  uint32_t true_count_ = 0;  // under mu_
  // The last phase's result, written before phase_ advances.
  uint32_t last_parties_ = 0;
  uint32_t last_true_count_ = 0;
  std::atomic<uint32_t> phase_{0};
};

// Where a warp's lanes meet for shuffles, votes and __syncwarp. Lanes that
// pass the same mask form a group, which completes when every lane of the
// mask that is still running has arrived; disjoint masks (divergent halves
// of a warp) complete independently. A lane waits in at most one group, so
// 32 slots always have room.
class SimtCrew::Warp {
 public:
  // Only while no lane waits.
  void Reset(uint32_t lanes) {
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = lanes;
    done_ = 0;
    for (Group& g : groups_) g = Group{};
  }

  unsigned long long Collective(uint32_t lane, int op, uint32_t mask,
                                unsigned long long value, int src_lane) {
    const uint32_t bit = LaneBit(lane);
    std::unique_lock<std::mutex> lock(mu_);
    op_[lane] = op;
    value_[lane] = value;
    src_[lane] = src_lane;
    done_ &= ~bit;
    const uint32_t lanes = mask | bit;
    Group* group = nullptr;
    Group* free = nullptr;
    for (Group& g : groups_) {
      if (g.lanes == lanes && (g.arrived & bit) == 0) {
        group = &g;
        break;
      }
      if (g.lanes == 0 && free == nullptr) free = &g;
    }
    if (group == nullptr) {
      group = free;
      group->lanes = lanes;
    }
    group->arrived |= bit;
    if (TryComplete(*group)) {
      const unsigned long long result = result_[lane];
      lock.unlock();
      cv_.notify_all();
      return result;
    }
    cv_.wait(lock, [&] { return (done_ & bit) != 0; });
    return result_[lane];
  }

  // The lane returned from the kernel: groups stop waiting for it.
  void Exit(uint32_t lane) {
    std::unique_lock<std::mutex> lock(mu_);
    alive_ &= ~LaneBit(lane);
    bool completed = false;
    for (Group& g : groups_) {
      if (g.lanes != 0) completed |= TryComplete(g);
    }
    lock.unlock();
    if (completed) cv_.notify_all();
  }

 private:
  struct Group {
    uint32_t lanes = 0;  // 0: a free slot
    uint32_t arrived = 0;
  };

  bool TryComplete(Group& g) {
    const uint32_t needed = g.lanes & alive_;
    if ((g.arrived & needed) != needed) return false;
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((g.arrived & LaneBit(l)) != 0 && value_[l] != 0) ballot |= LaneBit(l);
    }
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((g.arrived & LaneBit(l)) == 0) continue;
      switch (op_[l]) {
        case kSimtWarpShuffle: {
          const int src = src_[l];
          const bool took_part = src >= 0 &&
                                 src < static_cast<int>(kWarpSize) &&
                                 (g.arrived & LaneBit(src)) != 0;
          result_[l] = took_part ? value_[src] : value_[l];
          break;
        }
        case kSimtWarpBallot:
          result_[l] = ballot;
          break;
        default:
          result_[l] = 0;
      }
    }
    done_ |= g.arrived;
    g = Group{};
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  // All under mu_.
  uint32_t alive_ = 0;  // lanes still running the kernel
  uint32_t done_ = 0;   // lanes whose collective has completed
  Group groups_[kWarpSize];
  int op_[kWarpSize] = {};
  int src_[kWarpSize] = {};
  unsigned long long value_[kWarpSize] = {};
  unsigned long long result_[kWarpSize] = {};
};

struct SimtCrew::Worker {
  SimtThreadState state;  // state.host points back here
  SimtCrew* crew = nullptr;
  uint32_t linear = 0;  // x + y * bx + z * bx * by
  // Bumped to start a run (and to stop); the worker waits for a change.
  std::atomic<uint32_t> start{0};
  std::thread thread;
};

SimtCrew::SimtCrew()
    : block_barrier_(std::make_unique<Barrier>()),
      block_end_(std::make_unique<Barrier>()) {}

SimtCrew::~SimtCrew() {
  stopping_.store(true, std::memory_order_relaxed);
  for (auto& w : workers_) {
    w->start.fetch_add(1, std::memory_order_release);
    w->start.notify_one();
  }
  for (auto& w : workers_) w->thread.join();
}

int SimtCrew::SyncThreads(SimtThreadState* state, int op, int predicate) {
  auto* worker = static_cast<Worker*>(state->host);
  return worker->crew->block_barrier_->ArriveAndWait(op, predicate, [] {});
}

unsigned long long SimtCrew::WarpCollective(SimtThreadState* state, int op,
                                            uint32_t mask,
                                            unsigned long long value,
                                            int src_lane) {
  auto* worker = static_cast<Worker*>(state->host);
  return worker->crew->warps_[worker->linear / kWarpSize]->Collective(
      state->lane, op, mask, value, src_lane);
}

void SimtCrew::Run(Entry entry, void* const* params, SimtUint3 grid,
                   SimtUint3 block) {
  static constexpr SimtOps ops = {&SimtCrew::SyncThreads,
                                  &SimtCrew::WarpCollective};
  const uint32_t n = block.x * block.y * block.z;
  while (warps_.size() * kWarpSize < n)
    warps_.push_back(std::make_unique<Warp>());
  while (workers_.size() < n) {
    auto w = std::make_unique<Worker>();
    w->crew = this;
    w->state.host = w.get();
    w->thread = std::thread(&SimtCrew::WorkerLoop, this, w.get());
    workers_.push_back(std::move(w));
  }
  entry_ = entry;
  params_ = params;
  grid_ = grid;
  threads_ = n;
  blocks_ = uint64_t{grid.x} * grid.y * grid.z;
  for (uint32_t i = 0; i < n; ++i) {
    Worker& w = *workers_[i];
    w.linear = i;
    w.state.thread_idx = {i % block.x, i / block.x % block.y,
                          i / (block.x * block.y)};
    w.state.block_dim = block;
    w.state.grid_dim = grid;
    w.state.lane = i % kWarpSize;
    w.state.ops = &ops;
  }
  ResetBlock();
  block_end_->Reset(n);
  running_.store(n, std::memory_order_relaxed);
  const uint32_t finished = finished_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i) {
    workers_[i]->start.fetch_add(1, std::memory_order_release);
    workers_[i]->start.notify_one();
  }
  while (finished_.load(std::memory_order_acquire) == finished) {
    finished_.wait(finished, std::memory_order_acquire);
  }
}

void SimtCrew::ResetBlock() {
  block_barrier_->Reset(threads_);
  for (uint32_t w = 0; w * kWarpSize < threads_; ++w) {
    const uint32_t lanes = std::min(kWarpSize, threads_ - w * kWarpSize);
    warps_[w]->Reset(lanes == kWarpSize ? ~0u : LaneBit(lanes) - 1);
  }
}

void SimtCrew::WorkerLoop(Worker* worker) {
  uint32_t seen = 0;
  for (;;) {
    worker->start.wait(seen, std::memory_order_acquire);
    seen = worker->start.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed)) return;
    RunBlocks(*worker);
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      finished_.fetch_add(1, std::memory_order_release);
      finished_.notify_one();
    }
  }
}

void SimtCrew::RunBlocks(Worker& worker) {
  const uint64_t gx = grid_.x;
  const uint64_t gxy = gx * grid_.y;
  for (uint64_t b = 0; b < blocks_; ++b) {
    worker.state.block_idx = {static_cast<uint32_t>(b % gx),
                              static_cast<uint32_t>(b / gx % grid_.y),
                              static_cast<uint32_t>(b / gxy)};
    entry_(&worker.state, params_);
    block_barrier_->ArriveAndDrop();
    warps_[worker.linear / kWarpSize]->Exit(worker.linear % kWarpSize);
    if (b + 1 < blocks_) {
      block_end_->ArriveAndWait(kSimtSyncCount, 0, [this] { ResetBlock(); });
    }
  }
}

}  // namespace guardjit
