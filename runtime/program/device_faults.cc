#include "runtime/program/device_faults.h"

#include <algorithm>
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
    for (GraphSet& g : graphs_) {
      if (!g.pending || earlier->kernel >= 0) continue;
      ASSIGN_OR_RETURN(const bool done, g.set->words->Done());
      if (done) {
        g.pending = false;
        *earlier = FaultOf(g.set->words->Take(), g.set->symbols);
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

DeviceFaultPool::GraphSet* DeviceFaultPool::FindGraphSet(
    absl::Span<const int64_t> key) {
  for (GraphSet& g : graphs_) {
    if (absl::MakeConstSpan(g.key) == key) return &g;
  }
  return nullptr;
}

absl::StatusOr<const DeviceFaultWords*> DeviceFaultPool::GraphWords(
    absl::Span<const int64_t> symbols, size_t graphs_kept) {
  std::lock_guard<std::mutex> lock(mu_);
  if (GraphSet* g = FindGraphSet(symbols)) {
    g->last_use = ++clock_;
    ++g->replaying;
    return g->set->words.get();
  }
  GraphSet* reuse = nullptr;
  if (graphs_.size() >= std::max(kMinGraphSets, graphs_kept)) {
    for (GraphSet& g : graphs_) {
      if (!g.pending && g.replaying == 0 &&
          (reuse == nullptr || g.last_use < reuse->last_use)) {
        reuse = &g;
      }
    }
  }
  if (reuse == nullptr) {
    GraphSet g;
    g.set = std::make_unique<Set>();
    ASSIGN_OR_RETURN(g.set->words, module_->NewFaultWords());
    if (g.set->words == nullptr) {
      return absl::InternalError("the module makes no fault words");
    }
    graphs_.push_back(std::move(g));
    reuse = &graphs_.back();
  }
  reuse->key.assign(symbols.begin(), symbols.end());
  reuse->last_use = ++clock_;
  reuse->replaying = 1;
  return reuse->set->words.get();
}

void DeviceFaultPool::GraphUnused(absl::Span<const int64_t> symbols) {
  std::lock_guard<std::mutex> lock(mu_);
  GraphSet* g = FindGraphSet(symbols);
  if (g != nullptr && g->replaying > 0) --g->replaying;
}

absl::StatusOr<DeviceFault> DeviceFaultPool::GraphReplayed(
    const RunContext& ctx, absl::Span<const int64_t> symbols,
    bool synchronize) {
  DeviceFaultWords* words;
  {
    std::lock_guard<std::mutex> lock(mu_);
    GraphSet* g = FindGraphSet(symbols);
    if (g == nullptr) return DeviceFault();
    words = g->set->words.get();
  }
  // The set stays lent (never taken over for another key) until, in one
  // locked section, it is pending or its failure is taken: between the two
  // it would look idle while the replay is still in flight.
  const absl::Status status =
      synchronize ? words->Wait(ctx) : words->MarkEnd(ctx);
  std::lock_guard<std::mutex> lock(mu_);
  GraphSet* g = FindGraphSet(symbols);
  if (g == nullptr) {
    RETURN_IF_ERROR(status);
    return DeviceFault();
  }
  if (g->replaying > 0) --g->replaying;
  RETURN_IF_ERROR(status);
  if (synchronize) {
    g->pending = false;
    return FaultOf(words->Take(), symbols);
  }
  g->set->symbols.assign(symbols.begin(), symbols.end());
  g->pending = true;
  return DeviceFault();
}

}  // namespace guardjit
