#include "runtime/program/program_runner.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/caching_host_allocator.h"
#include "runtime/program/step_runner.h"

namespace guardjit {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One call's arena: a block of the call's allocator, freed at scope end.
class ArenaBlock {
 public:
  ArenaBlock() = default;
  ArenaBlock(Allocator* allocator, void* block, size_t bytes)
      : allocator_(allocator), block_(block), bytes_(bytes) {}
  ArenaBlock(const ArenaBlock&) = delete;
  ArenaBlock& operator=(const ArenaBlock&) = delete;
  ArenaBlock& operator=(ArenaBlock&& other) noexcept {
    std::swap(allocator_, other.allocator_);
    std::swap(block_, other.block_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~ArenaBlock() {
    if (block_ != nullptr) allocator_->Free(block_, bytes_);
  }

 private:
  Allocator* allocator_ = nullptr;
  void* block_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace

absl::Status StepCall::CheckStop() const {
  absl::Status stop = ctx.CheckStop();
  if (stop.ok()) return stop;
  return absl::Status(
      stop.code(),
      absl::StrCat(stop.message(), " before step ", step + 1, " of ",
                   program.steps.size(), " (", program.steps[step].label, ")"));
}

absl::StatusOr<std::unique_ptr<ProgramRunner>> ProgramRunner::Create(
    std::unique_ptr<const Program> program,
    std::unique_ptr<ProgramGraphs> graphs) {
  std::unique_ptr<ProgramRunner> runner(new ProgramRunner(std::move(program)));
  const Program& p = *runner->program_;
  for (const ProgramStep& step : p.steps) {
    if (step.runner == nullptr) {
      return absl::InternalError(
          absl::StrCat("program step '", step.label, "' has no runner"));
    }
  }
  if (p.num_symbols == 0) {
    RETURN_IF_ERROR(EvaluateSizes(p, {}, runner->static_sizes_));
  }
  // Fault words only for device programs with device-side checks: the
  // others' calls take none and record no event.
  if (p.transfer != nullptr && p.has_device_checks) {
    runner->faults_ = std::make_unique<DeviceFaultPool>(p.module.get());
  }
  runner->graphs_ = std::move(graphs);
  if (StepProfilingEnabled()) {
    runner->profile_ = std::make_unique<StepProfile>(p.steps.size());
  }
  return runner;
}

std::unique_ptr<CallSizes> ProgramRunner::AcquireSizes() const {
  {
    std::lock_guard<std::mutex> lock(workspace_mu_);
    if (!workspaces_.empty()) {
      std::unique_ptr<CallSizes> w = std::move(workspaces_.back());
      workspaces_.pop_back();
      return w;
    }
  }
  return std::make_unique<CallSizes>();
}

void ProgramRunner::ReleaseSizes(std::unique_ptr<CallSizes> sizes) const {
  std::lock_guard<std::mutex> lock(workspace_mu_);
  workspaces_.push_back(std::move(sizes));
}

absl::Status ProgramRunner::Run(const RunContext& ctx,
                                absl::Span<const Tensor> inputs,
                                absl::Span<const int64_t> symbols,
                                absl::Span<Tensor> outputs) const {
  const Program& p = *program_;
  if (outputs.size() != p.outputs.size()) {
    return absl::InternalError(absl::StrCat(
        "expected ", p.outputs.size(), " output slots, got ", outputs.size()));
  }
  if (static_cast<int>(symbols.size()) != p.num_symbols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", p.num_symbols, " symbol values, got ", symbols.size()));
  }
  // A dynamic program evaluates its sizes into a pooled workspace; a static
  // one has them already (and its calls take no lock).
  std::unique_ptr<CallSizes> workspace;
  absl::Cleanup release = [&] {
    if (workspace != nullptr) ReleaseSizes(std::move(workspace));
  };
  if (p.num_symbols > 0) {
    workspace = AcquireSizes();
    RETURN_IF_ERROR(EvaluateSizes(p, symbols, *workspace));
  }
  const CallSizes& sizes = p.num_symbols > 0 ? *workspace : static_sizes_;
  for (size_t k = 0; k < sizes.outputs.size(); ++k) {
    RETURN_IF_ERROR(CheckDestination(
        ctx, k, p.slots[sizes.outputs[k].slot].dtype, sizes.outputs[k].sizes));
  }
  // Outputs and intermediates come from a caching allocator: a hit gets the
  // last call's pages back (no page faults, no zeroing by the kernel). A
  // device program's come from the device's, bound to the call's stream.
  std::shared_ptr<Allocator> allocator = ctx.allocator;
  const DeviceTransfer* transfer = p.transfer;
  if (transfer == nullptr) {
    if (allocator == nullptr) allocator = CachingHostAllocator::Default();
    return RunSteps(ctx, inputs, symbols, sizes, allocator, nullptr, outputs);
  }
  if (allocator == nullptr) {
    ASSIGN_OR_RETURN(allocator, transfer->DefaultAllocator(ctx));
  }
  const bool synchronize = ctx.synchronize || transfer->launch_blocking();
  // The fault words this call's kernels write.
  std::optional<DeviceFaultPool::Lease> fault_lease;
  if (faults_ != nullptr) {
    DeviceFault earlier;
    ASSIGN_OR_RETURN(DeviceFaultPool::Lease lease,
                     faults_->Acquire(ctx, symbols, &earlier));
    fault_lease.emplace(std::move(lease));
    if (earlier.kernel >= 0) return DeviceFaultError(earlier, false);
  }
  if (graphs_ != nullptr && ctx.cuda_graphs != nullptr) {
    ASSIGN_OR_RETURN(const bool replayed,
                     graphs_->Replay({ctx, inputs, symbols, sizes, allocator,
                                      placement_, faults_.get()},
                                     outputs));
    if (replayed) {
      if (faults_ == nullptr) {
        return synchronize ? transfer->Synchronize(ctx) : absl::OkStatus();
      }
      fault_lease->Unused();
      ASSIGN_OR_RETURN(const DeviceFault fault,
                       faults_->GraphReplayed(ctx, symbols, synchronize));
      if (fault.kernel >= 0) return DeviceFaultError(fault, true);
      return absl::OkStatus();
    }
  }
  RETURN_IF_ERROR(RunSteps(
      ctx, inputs, symbols, sizes, allocator,
      fault_lease.has_value() ? fault_lease->words() : nullptr, outputs));
  if (synchronize) {
    if (!fault_lease.has_value()) {
      RETURN_IF_ERROR(transfer->Synchronize(ctx));
    } else {
      ASSIGN_OR_RETURN(const DeviceFault fault, fault_lease->Settle());
      if (fault.kernel >= 0) return DeviceFaultError(fault, true);
    }
  }
  return absl::OkStatus();
}

absl::Status ProgramRunner::RunSteps(
    const RunContext& ctx, absl::Span<const Tensor> inputs,
    absl::Span<const int64_t> symbols, const CallSizes& sizes,
    const std::shared_ptr<Allocator>& allocator,
    const DeviceFaultWords* fault_words, absl::Span<Tensor> outputs) const {
  static const Tensor kReleased;
  const Program& p = *program_;
  const DeviceTransfer* transfer = p.transfer;
  const Device device = p.device();
  const bool stoppable = ctx.stoppable();
  auto destination = [&](int s) {
    return placement_.Destination(ctx, inputs, s);
  };
  // Inline capacities cover typical programs: a static hit then allocates
  // nothing on the heap here.
  absl::InlinedVector<Tensor, 16> slots(p.slots.size());
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const Slot& slot = p.slots[s];
    if (slot.source == Slot::Source::kInput) {
      slots[s] = inputs[slot.input];
      if (transfer != nullptr && inputs[slot.input].device().is_cpu()) {
        // A 0-dim CPU tensor beside device inputs: a scalar, uploaded.
        ASSIGN_OR_RETURN(slots[s], transfer->ToDevice(slots[s], ctx));
      }
    } else if (slot.source == Slot::Source::kConstant) {
      slots[s] = p.constants[s];
    }
  }
  // A host program's buffers are regions of one arena per call, a block of
  // the allocator returned when the call ends: the caching allocator's bins
  // hand a hit the last call's block (no heap allocation, no page faults),
  // and between calls it counts as cached, not in use.
  ArenaBlock block;
  char* arena = nullptr;
  if (transfer == nullptr && sizes.arena_bytes > 0) {
    void* memory = allocator->Allocate(static_cast<size_t>(sizes.arena_bytes));
    if (memory == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory for the intermediates' arena of ",
                       sizes.arena_bytes, " bytes"));
    }
    block = ArenaBlock(allocator.get(), memory,
                       static_cast<size_t>(sizes.arena_bytes));
    arena = static_cast<char*>(memory);
  }
  absl::InlinedVector<Tensor, 8> buffers(
      arena != nullptr ? 0 : p.buffer_bytes.size());
  // GJ_PROFILE: each step's time on this call.
  absl::InlinedVector<int64_t, 64> step_ns(profile_ != nullptr ? p.steps.size()
                                                               : 0);
  const int64_t call_start = profile_ != nullptr ? NowNs() : 0;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const ProgramStep& step = p.steps[i];
    StepCall call{
        ctx,       p,           i,          symbols, absl::MakeSpan(slots),
        allocator, fault_words, destination};
    if (stoppable) RETURN_IF_ERROR(call.CheckStop());
    for (int s : step.allocate) {
      const Slot& slot = p.slots[s];
      const int b = p.slot_buffer[s];
      const Shape& shape = sizes.slots[s];
      if (const Tensor* dest = destination(s)) {
        slots[s] = Tensor::Borrow(dest->data(), slot.dtype, shape,
                                  dest->strides(), device);
        continue;
      }
      if (b < 0) {
        ASSIGN_OR_RETURN(slots[s],
                         Tensor::Empty(slot.dtype, shape, allocator, device));
        continue;
      }
      // Only kernels read it, so the borrowed view never outlives the arena
      // or buffer this call holds.
      if (arena != nullptr) {
        slots[s] = Tensor::Borrow(arena + sizes.buffer_offset[b], slot.dtype,
                                  shape, ContiguousStrides(shape), device);
        continue;
      }
      if (buffers[b].data() == nullptr) {
        ASSIGN_OR_RETURN(buffers[b],
                         Tensor::Empty(DType::kUInt8, {sizes.buffer_bytes[b]},
                                       allocator, device));
      }
      slots[s] = Tensor::Borrow(buffers[b].data(), slot.dtype, shape,
                                ContiguousStrides(shape), device);
    }
    if (profile_ != nullptr) {
      const int64_t start = NowNs();
      RETURN_IF_ERROR(step.runner->Run(call));
      step_ns[i] = NowNs() - start;
    } else {
      RETURN_IF_ERROR(step.runner->Run(call));
    }
    for (int s : step.release) slots[s] = kReleased;
  }
  if (profile_ != nullptr) {
    profile_->AddCall(step_ns.data(), NowNs() - call_start);
  }
  for (size_t k = 0; k < sizes.outputs.size(); ++k) {
    outputs[k] = ViewOf(slots, sizes.outputs[k]);
  }
  return absl::OkStatus();
}

absl::Status ProgramRunner::DeviceFaultError(const DeviceFault& fault,
                                             bool this_call) const {
  for (const ProgramStep& step : program_->steps) {
    if (step.runner->module_kernel() != fault.kernel) continue;
    const int check = absl::countr_zero(static_cast<uint64_t>(fault.mask));
    const absl::Status error = step.runner->CheckError(check, fault.symbols);
    return absl::Status(
        error.code(),
        absl::StrCat(
            "device-side check failed ",
            this_call ? "during this call" : "in an earlier call on this entry",
            " (kernel ", fault.kernel, " on ",
            program_->transfer->device().ToString(), "): ", error.message()));
  }
  return absl::InternalError(
      absl::StrCat("device fault in unknown kernel ", fault.kernel));
}

}  // namespace guardjit
