#include "jit/steps/kernel_steps.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"
#include "jit/steps/onednn_conv.h"
#include "jit/steps/onednn_gemm.h"

namespace guardjit {
namespace {

// Kernels with fewer element operations than this run on the calling thread;
// parallel ones get chunks of about kChunkWork.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;
constexpr int64_t kChunkWork = int64_t{1} << 14;
// A call with a cancel flag or a deadline runs a kernel's outer loop in
// rounds whose chunks hold at most about this many element operations (a
// few milliseconds), so a stop waits for no more than one such chunk per
// thread: the pool cuts a loop into only a few chunks per thread, which for
// a long kernel (a split reduction's 2^18 partials) would be seconds each.
constexpr int64_t kStoppableChunkWork = int64_t{1} << 24;

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max()
                                          : r;
}

// Element operations of one run (its loops' iteration counts) for size
// parameters `sizes`, saturating at INT64_MAX (a precompile may name sizes
// whose work overflows).
int64_t WorkOf(const KernelExtents& k, absl::Span<const int64_t> sizes) {
  int64_t outer = 1;
  for (const IndexExpr& e : k.outer)
    outer = SaturatingMul(outer, e.Evaluate(sizes));
  int64_t per_point = 0;
  for (const std::vector<IndexExpr>& loops : k.stages) {
    int64_t n = 1;
    for (const IndexExpr& e : loops) n = SaturatingMul(n, e.Evaluate(sizes));
    if (__builtin_add_overflow(per_point, n, &per_point))
      per_point = std::numeric_limits<int64_t>::max();
  }
  return SaturatingMul(outer, std::max<int64_t>(per_point, 1));
}

KernelSplit SplitOf(const KernelExtents& k, absl::Span<const int64_t> sizes) {
  KernelSplit split;
  if (k.outer.empty()) return split;
  split.extent = k.outer[0].Evaluate(sizes);
  split.work = WorkOf(k, sizes);
  if (split.work >= kMinParallelWork && split.extent >= 2) {
    const int64_t per_iteration =
        std::max<int64_t>(1, split.work / split.extent);
    split.grain = std::max<int64_t>(1, kChunkWork / per_iteration);
  }
  return split;
}

// A matrix product on BLAS (gemm_step.h) or a convolution as im2col and
// BLAS (conv_step.h), with the step's kernel as the epilogue.
template <typename Extern, auto kRun>
class HostExternStep : public StepRunner {
 public:
  HostExternStep(const PlanStep& step, std::shared_ptr<const Extern> plan,
                 HostKernelFn fn, std::shared_ptr<ThreadPool> pool)
      : plan_(std::move(plan)),
        fn_(fn),
        pool_(std::move(pool)),
        buffer_slots_(step.kernel.buffer_slots) {}

  absl::Status Run(StepCall& call) const override {
    const absl::InlinedVector<void*, 16> pointers =
        KernelParams(call, buffer_slots_);
    return kRun(*plan_, fn_, pointers, call.slots, call.symbols, *pool_);
  }

 private:
  const std::shared_ptr<const Extern> plan_;
  const HostKernelFn fn_;
  const std::shared_ptr<ThreadPool> pool_;
  const std::vector<int> buffer_slots_;
};

using HostGemmStep = HostExternStep<GemmStep, &RunGemmStep>;
using HostConvStep = HostExternStep<ConvStep, &RunConvStep>;

}  // namespace

KernelExtents::KernelExtents(const Kernel& k) {
  for (const LoopRange& l : k.outer) outer.push_back(l.extent);
  for (const Stage& stage : k.stages) {
    std::vector<IndexExpr>& loops = stages.emplace_back();
    for (const LoopRange& l : stage.loops) loops.push_back(l.extent);
  }
}

HostKernelStep::HostKernelStep(const KernelStep& step, HostKernelFn fn,
                               std::shared_ptr<ThreadPool> pool)
    : fn_(fn),
      pool_(std::move(pool)),
      extents_(step.kernel),
      dynamic_(step.kernel.num_size_params > 0),
      buffer_slots_(step.buffer_slots),
      checks_(step.checks) {
  if (!dynamic_) static_split_ = SplitOf(extents_, {});
}

KernelSplit StaticSplitOf(const Kernel& k) {
  const KernelExtents extents(k);
  for (const IndexExpr& e : extents.outer) {
    if (!e.is_const()) return {};
  }
  for (const std::vector<IndexExpr>& loops : extents.stages) {
    for (const IndexExpr& e : loops) {
      if (!e.is_const()) return {};
    }
  }
  return SplitOf(extents, {});
}

absl::Status HostKernelStep::Run(StepCall& call) const {
  return RunWith(call, KernelParams(call, buffer_slots_));
}

absl::Status HostKernelStep::RunWith(StepCall& call,
                                     absl::Span<void* const> pointers) const {
  void* const* buffers = pointers.data();
  const int64_t* values = call.symbols.data();
  const KernelSplit split =
      dynamic_ ? SplitOf(extents_, call.symbols) : static_split_;
  if (split.grain == 0) {
    const int64_t failed = fn_(buffers, values, 0, split.extent);
    return failed == 0 ? absl::OkStatus()
                       : FailedCheck(checks_, failed, call.symbols);
  }
  const bool stoppable = call.ctx.stoppable();
  std::atomic<int64_t> faults{0};
  std::atomic<bool> stopped{false};
  const int64_t extent = split.extent;
  int64_t round = extent;
  if (stoppable) {
    const int64_t per_iteration = std::max<int64_t>(1, split.work / extent);
    round = std::max<int64_t>(1, kStoppableChunkWork / per_iteration) *
            (int64_t{pool_->num_threads()} * 4);
  }
  for (int64_t start = 0; start < extent && !stopped.load(); start += round) {
    pool_->ParallelFor(
        std::min(round, extent - start), split.grain,
        [&](int64_t begin, int64_t end) {
          if (stoppable && (stopped.load(std::memory_order_relaxed) ||
                            !call.ctx.CheckStop().ok())) {
            stopped.store(true, std::memory_order_relaxed);
            return;
          }
          const int64_t f = fn_(buffers, values, start + begin, start + end);
          if (f != 0) faults.fetch_or(f);
        });
  }
  if (stopped.load()) {
    absl::Status stop = call.CheckStop();
    // The flag may have been cleared since a chunk saw it.
    return stop.ok() ? absl::CancelledError(absl::StrCat(
                           "cancelled by the host during step ", call.step + 1))
                     : stop;
  }
  const int64_t failed = faults.load();
  return failed == 0 ? absl::OkStatus()
                     : FailedCheck(checks_, failed, call.symbols);
}

absl::Status HostKernelStep::RunRange(const StepCall& call,
                                      absl::Span<void* const> pointers,
                                      int64_t begin, int64_t end) const {
  const int64_t failed = fn_(pointers.data(), call.symbols.data(), begin, end);
  return failed == 0 ? absl::OkStatus()
                     : FailedCheck(checks_, failed, call.symbols);
}

absl::InlinedVector<void*, 16> KernelParams(const StepCall& call,
                                            const std::vector<int>& slots) {
  absl::InlinedVector<void*, 16> pointers;
  for (int s : slots) pointers.push_back(call.slots[s].data());
  return pointers;
}

absl::Status FailedCheck(const std::vector<IndexCheck>& checks, int64_t mask,
                         absl::Span<const int64_t> symbols) {
  const int check = absl::countr_zero(static_cast<uint64_t>(mask));
  if (check >= static_cast<int>(checks.size())) {
    return absl::InternalError(
        absl::StrCat("kernel reported unknown index check ", check));
  }
  return checks[check].Error(symbols);
}

absl::Status ModuleKernelStep::Run(StepCall& call) const {
  const absl::InlinedVector<void*, 16> pointers =
      KernelParams(call, buffer_slots_);
  ASSIGN_OR_RETURN(const int64_t failed,
                   module_->Launch(index_, pointers.data(), call.symbols,
                                   call.fault_words, call.ctx));
  return failed == 0 ? absl::OkStatus()
                     : FailedCheck(checks_, failed, call.symbols);
}

bool HostStepRunsKernel(const PlanStep& step) {
  if (step.gemm != nullptr && step.gemm->result_param >= 0) return false;
  if (step.conv != nullptr && step.conv->onednn.has_value() &&
      step.conv->onednn->result_param >= 0) {
    return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<const StepRunner>> MakeHostStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool) {
  if ((fn == nullptr) == HostStepRunsKernel(step)) {
    return absl::InternalError(fn == nullptr
                                   ? "a host step without code"
                                   : "code for a host step that never runs it");
  }
  if (step.conv != nullptr && step.conv->onednn.has_value()) {
    return MakeOneDnnConvStep(step, graph, fn, std::move(pool));
  }
  if (step.gemm != nullptr && step.gemm->onednn.has_value()) {
    return MakeOneDnnGemmStep(step, graph, fn, std::move(pool));
  }
  if (step.gemm != nullptr) {
    return std::make_unique<HostGemmStep>(step, step.gemm, fn, std::move(pool));
  }
  if (step.conv != nullptr) {
    return std::make_unique<HostConvStep>(step, step.conv, fn, std::move(pool));
  }
  return std::make_unique<HostKernelStep>(step.kernel, fn, std::move(pool));
}

}  // namespace guardjit
