// CompiledProgram's reduce-overhead mode on a device: a call as one replay
// of its size key's CUDA graph.

#include <optional>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/compiled_program.h"
#include "runtime/tensor_copy.h"

namespace guardjit {

std::string CompiledProgram::DescribeCudaGraphs() const {
  return graphs_ != nullptr ? graphs_->Describe() : std::string();
}

absl::StatusOr<bool> CompiledProgram::RunGraphed(
    const RunContext& ctx, absl::Span<const Tensor> inputs,
    absl::Span<const int64_t> symbols, const CallSizes& sizes,
    const std::shared_ptr<Allocator>& allocator,
    absl::Span<Tensor> results) const {
  if (!graph_refusal_.empty()) {
    graphs_->Refuse(graph_refusal_);
    return false;
  }
  if (ctx.stoppable()) return false;
  for (const Slot& slot : plan_.slots) {
    if (slot.source == Slot::Source::kInput &&
        inputs[slot.input].device().is_cpu()) {
      graphs_->Refuse(
          absl::StrCat("input ", slot.input, " ('",
                       graph_->node(graph_->inputs()[slot.input]).name,
                       "') is a CPU tensor (a scalar uploaded on every call)"));
      return false;
    }
  }
  std::optional<CudaGraphSet::Lease> lease =
      graphs_->TryAcquire(symbols, *ctx.cuda_graphs);
  if (!lease.has_value() || lease->FirstCall()) return false;
  const Device device = transfer_->device();
  // Every replay's kernels write the entry's graph fault words (an address
  // baked into the graph; device_faults.h).
  const DeviceFaultWords* fault_words = nullptr;
  if (faults_ != nullptr) {
    ASSIGN_OR_RETURN(fault_words, faults_->GraphWords());
  }
  // Outputs get fresh memory (or their destination) on every call; every
  // other slot a kernel writes lives in the key's private pool, at the same
  // address on every replay (slots sharing a plan buffer share its region).
  constexpr int64_t kAlign = 256;
  auto aligned = [](int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  absl::InlinedVector<int, 16> output_of(plan_.slots.size(), -1);
  for (size_t k = plan_.outputs.size(); k-- > 0;) {
    output_of[plan_.outputs[k].slot] = static_cast<int>(k);
  }
  absl::InlinedVector<int64_t, 16> pool_offset(plan_.slots.size(), -1);
  absl::InlinedVector<int64_t, 8> buffer_offset(plan_.buffer_bytes.size(), -1);
  int64_t pool_bytes = 0;
  for (const PlanStep& step : plan_.steps) {
    for (int s : step.kernel.allocate) {
      if (output_of[s] >= 0) continue;
      const int b = plan_.slot_buffer[s];
      if (b >= 0) {
        if (buffer_offset[b] < 0) {
          buffer_offset[b] = pool_bytes;
          pool_bytes += aligned(sizes.buffer_bytes[b]);
        }
        pool_offset[s] = buffer_offset[b];
      } else {
        pool_offset[s] = pool_bytes;
        int64_t elements = 1;
        for (int64_t d : sizes.slots[s]) elements *= d;
        pool_bytes += aligned(elements * ItemSize(plan_.slots[s].dtype));
      }
    }
  }
  absl::StatusOr<CUdeviceptr> pool = lease->Pool(pool_bytes);
  if (absl::IsResourceExhausted(pool.status())) {
    graphs_->Refuse(std::string(pool.status().message()));
    return false;
  }
  RETURN_IF_ERROR(pool.status());
  absl::InlinedVector<Tensor, 16> slots(plan_.slots.size());
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    const Slot& slot = plan_.slots[s];
    if (slot.source == Slot::Source::kInput) {
      slots[s] = inputs[slot.input];
    } else if (slot.source == Slot::Source::kConstant) {
      slots[s] = device_constants_[s];
    }
  }
  auto role = [&](int s) -> CudaGraphBuffer {
    const Slot& slot = plan_.slots[s];
    if (slot.source == Slot::Source::kInput) {
      return {CudaGraphBuffer::Kind::kInput, slot.input};
    }
    if (slot.source == Slot::Source::kConstant) {
      return {CudaGraphBuffer::Kind::kConstant, s};
    }
    if (output_of[s] >= 0)
      return {CudaGraphBuffer::Kind::kOutput, output_of[s]};
    return {CudaGraphBuffer::Kind::kPool, pool_offset[s]};
  };
  absl::InlinedVector<CudaKernelLaunch, 8> launches;
  absl::InlinedVector<void*, 16> pointers;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& step = plan_.steps[i];
    for (int s : step.kernel.allocate) {
      const Slot& slot = plan_.slots[s];
      const Shape& shape = sizes.slots[s];
      if (output_of[s] < 0) {
        slots[s] =
            Tensor::Borrow(reinterpret_cast<char*>(*pool) + pool_offset[s],
                           slot.dtype, shape, ContiguousStrides(shape), device);
        continue;
      }
      const Tensor* dest =
          direct_output_[s] >= 0 ? ctx.destination(direct_output_[s]) : nullptr;
      if (dest != nullptr && dest->is_contiguous()) {
        const ByteRange range = MemoryRange(*dest);
        for (const Tensor& in : inputs) {
          if (range.Overlaps(MemoryRange(in))) dest = nullptr;
        }
      }
      if (dest != nullptr && dest->is_contiguous()) {
        slots[s] = Tensor::Borrow(dest->data(), slot.dtype, shape,
                                  dest->strides(), device);
      } else {
        ASSIGN_OR_RETURN(slots[s],
                         Tensor::Empty(slot.dtype, shape, allocator, device));
      }
    }
    pointers.clear();
    for (int s : step.kernel.buffer_slots) pointers.push_back(slots[s].data());
    CudaKernelLaunch& launch = launches.emplace_back();
    RETURN_IF_ERROR(module_->DescribeLaunch(module_index_[i], pointers.data(),
                                            symbols, fault_words, &launch));
    for (size_t b = 0; b < step.kernel.buffer_slots.size(); ++b) {
      launch.buffers[b] = role(step.kernel.buffer_slots[b]);
    }
  }
  ASSIGN_OR_RETURN(const bool replayed,
                   lease->Replay(launches, static_cast<CUstream>(ctx.stream)));
  if (!replayed) return false;
  for (size_t k = 0; k < sizes.outputs.size(); ++k) {
    results[k] = ViewOf(slots, sizes.outputs[k]);
  }
  return true;
}

}  // namespace guardjit
