#include "jit/device_faults.h"

#include <utility>

#include "core/status_macros.h"

namespace guardjit {

namespace {

DeviceFault FaultOf(std::pair<int, int64_t> taken,
                    absl::Span<const int64_t> symbols) {
  DeviceFault fault;
  if (taken.first < 0) return fault;
  fault.kernel = taken.first;
  fault.mask = taken.second;
  fault.symbols.assign(symbols.begin(), symbols.end());
  return fault;
}

}  // namespace

DeviceFaultPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_),
      set_(std::move(other.set_)),
      ctx_(other.ctx_),
      symbols_(other.symbols_) {}

DeviceFaultPool::Lease::~Lease() {
  if (set_ == nullptr) return;
  // The call's kernels may still run: the set is read once the device is
  // past this mark. If the mark fails the event keeps its last state (a
  // never-recorded event counts as done), the set may be read and lent
  // again early, and a failure written after that is reported by a later
  // call of this program instead of the next one: still this function.
  (void)set_->words->MarkEnd(*ctx_);
  set_->symbols.assign(symbols_.begin(), symbols_.end());
  pool_->Return(std::move(set_), /*pending=*/true);
}

const DeviceFaultWords* DeviceFaultPool::Lease::words() const {
  return set_->words.get();
}

absl::StatusOr<DeviceFault> DeviceFaultPool::Lease::Settle() {
  RETURN_IF_ERROR(set_->words->Wait(*ctx_));
  const DeviceFault fault = FaultOf(set_->words->Take(), symbols_);
  pool_->Return(std::move(set_), /*pending=*/false);
  return fault;
}

void DeviceFaultPool::Lease::Unused() {
  if (set_ != nullptr) pool_->Return(std::move(set_), /*pending=*/false);
}

void DeviceFaultPool::Return(std::unique_ptr<Set> set, bool pending) {
  std::lock_guard<std::mutex> lock(mu_);
  (pending ? pending_ : clean_).push_back(std::move(set));
}

absl::StatusOr<DeviceFaultPool::Lease> DeviceFaultPool::Acquire(
    const RunContext& ctx, absl::Span<const int64_t> symbols,
    DeviceFault* earlier) {
  *earlier = DeviceFault();
  std::unique_ptr<Set> set;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Finished calls' sets become clean, up to the first failure among
    // them, which this call reports (the sets after it stay pending for
    // the next calls).
    for (size_t i = 0; i < pending_.size();) {
      Set& p = *pending_[i];
      bool done = false;
      if (earlier->kernel < 0) {
        ASSIGN_OR_RETURN(done, p.words->Done());
      }
      if (!done) {
        ++i;
        continue;
      }
      *earlier = FaultOf(p.words->Take(), p.symbols);
      clean_.push_back(std::move(pending_[i]));
      pending_[i] = std::move(pending_.back());
      pending_.pop_back();
    }
    if (graph_pending_ && earlier->kernel < 0) {
      ASSIGN_OR_RETURN(const bool done, graph_->words->Done());
      if (done) {
        graph_pending_ = false;
        *earlier = FaultOf(graph_->words->Take(), graph_->symbols);
      }
    }
    if (!clean_.empty()) {
      set = std::move(clean_.back());
      clean_.pop_back();
    }
  }
  if (set == nullptr) {
    set = std::make_unique<Set>();
    ASSIGN_OR_RETURN(set->words, module_->NewFaultWords());
    if (set->words == nullptr) {
      return absl::InternalError("the module makes no fault words");
    }
  }
  return Lease(this, std::move(set), &ctx, symbols);
}

absl::StatusOr<const DeviceFaultWords*> DeviceFaultPool::GraphWords() {
  std::lock_guard<std::mutex> lock(mu_);
  if (graph_ == nullptr) {
    auto set = std::make_unique<Set>();
    ASSIGN_OR_RETURN(set->words, module_->NewFaultWords());
    if (set->words == nullptr) {
      return absl::InternalError("the module makes no fault words");
    }
    graph_ = std::move(set);
  }
  return graph_->words.get();
}

absl::StatusOr<DeviceFault> DeviceFaultPool::GraphReplayed(
    const RunContext& ctx, absl::Span<const int64_t> symbols,
    bool synchronize) {
  DeviceFaultWords* words;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (graph_ == nullptr) return DeviceFault();
    words = graph_->words.get();
  }
  if (synchronize) {
    RETURN_IF_ERROR(words->Wait(ctx));
    std::lock_guard<std::mutex> lock(mu_);
    graph_pending_ = false;
    return FaultOf(words->Take(), symbols);
  }
  RETURN_IF_ERROR(words->MarkEnd(ctx));
  std::lock_guard<std::mutex> lock(mu_);
  graph_->symbols.assign(symbols.begin(), symbols.end());
  graph_pending_ = true;
  return DeviceFault();
}

}  // namespace guardjit
