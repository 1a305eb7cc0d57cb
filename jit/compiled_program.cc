#include "jit/compiled_program.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/conv_step.h"
#include "jit/cuda/device_conv_step.h"
#include "jit/cuda/device_gemm_step.h"
#include "jit/gemm_step.h"
#include "runtime/caching_host_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"

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
// Alignment of each buffer in a call's arena.
constexpr int64_t kArenaAlign = 64;

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

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max()
                                          : r;
}

// Element operations of one run of `k` (its loops' iteration counts) for
// size parameters `sizes`, saturating at INT64_MAX (a precompile may name
// sizes whose work overflows).
int64_t WorkOf(const Kernel& k, absl::Span<const int64_t> sizes) {
  int64_t outer = 1;
  for (const LoopRange& l : k.outer)
    outer = SaturatingMul(outer, l.extent.Evaluate(sizes));
  int64_t per_point = 0;
  for (const Stage& stage : k.stages) {
    int64_t n = 1;
    for (const LoopRange& l : stage.loops)
      n = SaturatingMul(n, l.extent.Evaluate(sizes));
    if (__builtin_add_overflow(per_point, n, &per_point))
      per_point = std::numeric_limits<int64_t>::max();
  }
  return SaturatingMul(outer, std::max<int64_t>(per_point, 1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Create(
    std::shared_ptr<const Graph> graph, GraphMeta metas, Plan plan,
    KernelBackend& backend, std::shared_ptr<ThreadPool> pool, int num_symbols) {
  std::unique_ptr<CompiledProgram> program(
      new CompiledProgram(std::move(graph), std::move(metas), std::move(plan),
                          std::move(pool), num_symbols));
  const Plan& p = program->plan_;
  std::vector<const Kernel*> kernels;
  std::vector<std::string> labels;  // for a forbidden compile's error
  for (const PlanStep& step : p.steps) {
    if (!step.is_kernel) continue;
    if (step.kernel.kernel.num_size_params != num_symbols) {
      return absl::InternalError(absl::StrCat(
          "kernel takes ", step.kernel.kernel.num_size_params,
          " size parameters; the program has ", num_symbols, " symbols"));
    }
    // A device backend's GEMM and conv steps run on cuBLASLt
    // (device_gemm_step.h, device_conv_step.h).
    if (!backend.host_code() && backend.transfer() == nullptr &&
        (step.gemm != nullptr || step.conv != nullptr)) {
      return absl::InternalError(
          absl::StrCat("a GEMM or conv step in a plan for the ", backend.name(),
                       " backend"));
    }
    labels.push_back(absl::StrCat("kernel ", kernels.size(), " (computing ",
                                  absl::StrJoin(step.kernel.computes, ", "),
                                  ")"));
    kernels.push_back(&step.kernel.kernel);
  }
  ASSIGN_OR_RETURN(program->module_, backend.Compile(kernels, labels));
  program->transfer_ = backend.transfer();
  // A host module's kernels are called directly (kernels_), the others
  // launched through the module.
  const std::vector<HostKernelFn>* host = program->module_->host_functions();
  program->launch_through_module_ = host == nullptr;
  if (host != nullptr && host->size() != kernels.size()) {
    return absl::InternalError(absl::StrCat(backend.name(), " compiled ",
                                            host->size(), " of ",
                                            kernels.size(), " kernels"));
  }
  size_t next = 0;
  for (const PlanStep& step : p.steps) {
    std::vector<int> outputs;
    if (step.is_kernel) {
      program->module_index_.push_back(static_cast<int>(next));
      program->kernels_.push_back(host != nullptr ? (*host)[next] : nullptr);
      ++next;
      program->eager_.push_back(nullptr);
    } else {
      const Node& node = program->graph_->node(step.node);
      const KernelFn* fn = KernelRegistry::Global().Find(node.target);
      if (fn == nullptr) {
        return absl::UnimplementedError(absl::StrCat(
            "node '", node.name, "' (", node.target, "): no reference kernel"));
      }
      program->module_index_.push_back(-1);
      program->kernels_.push_back(nullptr);
      program->eager_.push_back(fn);
      for (size_t s = 0; s < p.slots.size(); ++s) {
        if (p.slots[s].source == Slot::Source::kExtern &&
            p.slots[s].node == step.node) {
          outputs.resize(
              std::max<size_t>(outputs.size(), p.slots[s].output + 1), -1);
          outputs[p.slots[s].output] = static_cast<int>(s);
        }
      }
    }
    program->extern_output_slots_.push_back(std::move(outputs));
  }
  program->PlanDirectOutputs();
  if (num_symbols == 0) program->Evaluate({}, program->static_sizes_);
  if (program->transfer_ != nullptr) {
    // Nodes without a lowering for the device run their reference kernels
    // on host copies: correct, slow, and said once per program.
    for (const PlanStep& step : p.steps) {
      if (step.is_kernel) continue;
      const Node& node = program->graph_->node(step.node);
      Log(LogTopic::kCodegen,
          absl::StrCat(program->transfer_->device().ToString(), ": node '",
                       node.name, "' (", node.target,
                       ") has no lowering for the device; it runs its "
                       "reference kernel on host copies of its arguments"));
    }
    // reduce-overhead mode records programs whose steps are kernel launches,
    // GEMM steps and conv steps (cuBLASLt, captured as extern calls of the
    // graph; a convolution's im2col kernel is a kernel step of ours and its
    // column matrices and product live in the key's pool:
    // compiled_program_graphed.cc).
    for (const PlanStep& step : p.steps) {
      if (step.is_kernel) continue;
      const Node& node = program->graph_->node(step.node);
      program->graph_refusal_ = absl::StrCat(
          "node '", node.name, "' (", node.target,
          ") runs on the host (its reference kernel on host copies, which "
          "waits for the stream)");
      break;
    }
    if (program->graph_refusal_.empty() && program->kernels_.empty()) {
      program->graph_refusal_ = "the entry launches no kernels";
    }
    ASSIGN_OR_RETURN(const CudaDevice* cuda,
                     CudaDevice::Get(program->transfer_->device().index));
    program->graphs_ = std::make_unique<CudaGraphSet>(cuda);
    // Fault words only for programs with device-side checks: the others'
    // calls take none and record no event.
    bool checks = false;
    for (const PlanStep& step : p.steps) {
      checks |= step.is_kernel && step.kernel.kernel.num_checks > 0;
    }
    if (checks) {
      program->faults_ =
          std::make_unique<DeviceFaultPool>(program->module_.get());
    }
    // Kernels read the graph's constants from device memory: one copy each,
    // kept with the program.
    program->device_constants_.resize(p.slots.size());
    for (size_t s = 0; s < p.slots.size(); ++s) {
      if (p.slots[s].source != Slot::Source::kConstant) continue;
      ASSIGN_OR_RETURN(
          program->device_constants_[s],
          program->transfer_->ToDevice(
              program->graph_->node(p.slots[s].node).constant, RunContext()));
    }
  }
  return program;
}

void CompiledProgram::Evaluate(absl::Span<const int64_t> symbols,
                               CallSizes& out) const {
  auto ref = [&](const TensorRef& r, ConcreteRef& c) {
    c.slot = r.slot;
    c.sizes = EvaluateShape(r.sizes, symbols);
    c.strides = EvaluateShape(r.strides, symbols);
    c.offset = r.offset.Evaluate(symbols);
  };
  out.slots.resize(plan_.slots.size());
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    out.slots[s] = EvaluateShape(plan_.slots[s].sizes, symbols);
  }
  // The plan's buffers end to end, each cache-line aligned (the allocator's
  // alignment, which kernels may assume of any buffer).
  const size_t num_buffers = plan_.buffer_bytes.size();
  out.buffer_bytes.resize(num_buffers);
  out.buffer_offset.resize(num_buffers);
  out.arena_bytes = 0;
  for (size_t b = 0; b < num_buffers; ++b) {
    out.buffer_bytes[b] = plan_.buffer_bytes[b].Evaluate(symbols);
    out.buffer_offset[b] = out.arena_bytes;
    out.arena_bytes +=
        (out.buffer_bytes[b] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  }
  if (num_symbols_ > 0) out.metas.resize(metas_.size());
  const size_t num_steps = plan_.steps.size();
  out.outer_extent.resize(num_steps);
  out.grain.resize(num_steps);
  out.extern_args.resize(num_steps);
  for (size_t i = 0; i < num_steps; ++i) {
    const PlanStep& step = plan_.steps[i];
    int64_t extent = 1;
    int64_t grain = 0;
    std::vector<ConcreteRef>& args = out.extern_args[i];
    args.resize(step.is_kernel ? 0 : step.extern_args.size());
    if (step.is_kernel) {
      const Kernel& k = step.kernel.kernel;
      if (!k.outer.empty()) {
        extent = k.outer[0].extent.Evaluate(symbols);
        const int64_t work = WorkOf(k, symbols);
        if (work >= kMinParallelWork && extent >= 2) {
          const int64_t per_iteration = std::max<int64_t>(1, work / extent);
          grain = std::max<int64_t>(1, kChunkWork / per_iteration);
        }
      }
    } else {
      for (size_t a = 0; a < step.extern_args.size(); ++a) {
        ref(step.extern_args[a].second, args[a]);
      }
      if (num_symbols_ > 0) {
        // The eager kernel reads its output metadata at the call's sizes.
        auto concrete = [&](const SymInt& v) {
          return v.is_symbolic() ? SymInt(v.expr().Evaluate(symbols)) : v;
        };
        std::vector<TensorMeta>& metas = out.metas[step.node];
        metas.clear();
        for (TensorMeta m : metas_[step.node]) {
          for (SymInt& size : m.sizes) size = concrete(size);
          if (m.sym_value) m.sym_value = concrete(*m.sym_value);
          metas.push_back(std::move(m));
        }
      }
    }
    out.outer_extent[i] = extent;
    out.grain[i] = grain;
  }
  out.outputs.resize(plan_.outputs.size());
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    ref(plan_.outputs[k], out.outputs[k]);
  }
}

std::unique_ptr<CompiledProgram::Workspace> CompiledProgram::AcquireWorkspace()
    const {
  {
    std::lock_guard<std::mutex> lock(workspace_mu_);
    if (!workspaces_.empty()) {
      std::unique_ptr<Workspace> w = std::move(workspaces_.back());
      workspaces_.pop_back();
      return w;
    }
  }
  return std::make_unique<Workspace>();
}

void CompiledProgram::ReleaseWorkspace(
    std::unique_ptr<Workspace> workspace) const {
  std::lock_guard<std::mutex> lock(workspace_mu_);
  workspaces_.push_back(std::move(workspace));
}

absl::StatusOr<std::vector<Tensor>> CompiledProgram::Run(
    const RunContext& ctx, absl::Span<const Tensor> inputs,
    absl::Span<const int64_t> symbols) const {
  std::vector<Tensor> outputs(plan_.outputs.size());
  RETURN_IF_ERROR(RunInto(ctx, inputs, symbols, absl::MakeSpan(outputs)));
  return outputs;
}

absl::Status CompiledProgram::RunInto(const RunContext& ctx,
                                      absl::Span<const Tensor> inputs,
                                      absl::Span<const int64_t> symbols,
                                      absl::Span<Tensor> results) const {
  static const Tensor kReleased;
  if (results.size() != plan_.outputs.size()) {
    return absl::InternalError(absl::StrCat("expected ", plan_.outputs.size(),
                                            " result slots, got ",
                                            results.size()));
  }
  if (static_cast<int>(symbols.size()) != num_symbols_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", num_symbols_, " symbol values, got ", symbols.size()));
  }
  // A dynamic program evaluates its sizes into a pooled workspace; a static
  // one has them already (and its calls take no lock).
  std::optional<WorkspaceLease> workspace;
  if (num_symbols_ > 0) workspace.emplace(*this, AcquireWorkspace());
  if (num_symbols_ > 0) Evaluate(symbols, (*workspace)->sizes);
  const CallSizes& sizes =
      num_symbols_ > 0 ? (*workspace)->sizes : static_sizes_;
  for (size_t k = 0; k < sizes.outputs.size(); ++k) {
    RETURN_IF_ERROR(CheckDestination(ctx, k,
                                     plan_.slots[sizes.outputs[k].slot].dtype,
                                     sizes.outputs[k].sizes));
  }
  const bool stoppable = ctx.stoppable();
  // Outputs and intermediates come from a caching allocator: a hit gets the
  // last call's pages back (no page faults, no zeroing by the kernel). A
  // device program's come from the device's, bound to the call's stream.
  const Device device =
      transfer_ != nullptr ? transfer_->device() : Device::Cpu();
  std::shared_ptr<Allocator> allocator = ctx.allocator;
  bool synchronize = ctx.synchronize;
  // Device programs: the fault words this call's kernels write.
  std::optional<DeviceFaultPool::Lease> fault_lease;
  if (transfer_ != nullptr) {
    if (allocator == nullptr) {
      ASSIGN_OR_RETURN(allocator, transfer_->DefaultAllocator(ctx));
    }
    synchronize |= transfer_->launch_blocking();
    if (faults_ != nullptr) {
      DeviceFault earlier;
      ASSIGN_OR_RETURN(DeviceFaultPool::Lease lease,
                       faults_->Acquire(ctx, symbols, &earlier));
      fault_lease.emplace(std::move(lease));
      if (earlier.kernel >= 0) return DeviceFaultError(earlier, false);
    }
  } else if (allocator == nullptr) {
    allocator = CachingHostAllocator::Default();
  }
  if (graphs_ != nullptr && ctx.cuda_graphs != nullptr) {
    ASSIGN_OR_RETURN(const bool graphed, RunGraphed(ctx, inputs, symbols, sizes,
                                                    allocator, results));
    if (graphed) {
      if (faults_ == nullptr) {
        return synchronize ? transfer_->Synchronize(ctx) : absl::OkStatus();
      }
      fault_lease->Unused();
      ASSIGN_OR_RETURN(const DeviceFault fault,
                       faults_->GraphReplayed(ctx, symbols, synchronize));
      if (fault.kernel >= 0) return DeviceFaultError(fault, true);
      return absl::OkStatus();
    }
  }
  // The destination a slot is written into directly, or null.
  auto direct = [&](int s) -> const Tensor* {
    const int k = direct_output_[s];
    if (k < 0 || stoppable) return nullptr;
    const Tensor* dest = ctx.destination(k);
    if (dest == nullptr || !dest->is_contiguous()) return nullptr;
    const ByteRange range = MemoryRange(*dest);
    for (const Tensor& in : inputs) {
      if (range.Overlaps(MemoryRange(in))) return nullptr;
    }
    return dest;
  };
  // Stops between steps and between parallel chunks; what the stop reports.
  auto stop_before = [&](size_t i) -> absl::Status {
    absl::Status stop = ctx.CheckStop();
    if (stop.ok()) return stop;
    const PlanStep& step = plan_.steps[i];
    return absl::Status(
        stop.code(),
        absl::StrCat(
            stop.message(), " before step ", i + 1, " of ", plan_.steps.size(),
            step.is_kernel
                ? absl::StrCat(" (kernel computing ",
                               absl::StrJoin(step.kernel.computes, ", "), ")")
                : absl::StrCat(" (node '", graph_->node(step.node).name,
                               "')")));
  };
  // Inline capacities cover typical programs: a static hit then allocates
  // nothing on the heap here.
  absl::InlinedVector<Tensor, 16> slots(plan_.slots.size());
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    const Slot& slot = plan_.slots[s];
    if (slot.source == Slot::Source::kInput) {
      slots[s] = inputs[slot.input];
      if (transfer_ != nullptr && inputs[slot.input].device().is_cpu()) {
        // A 0-dim CPU tensor beside device inputs: a scalar, uploaded.
        ASSIGN_OR_RETURN(slots[s], transfer_->ToDevice(slots[s], ctx));
      }
    } else if (slot.source == Slot::Source::kConstant) {
      slots[s] = transfer_ != nullptr ? device_constants_[s]
                                      : graph_->node(slot.node).constant;
    }
  }
  // A host program's buffers are regions of one arena per call, a block of
  // the allocator returned when the call ends: the caching allocator's bins
  // hand a hit the last call's block (no heap allocation, no page faults),
  // and between calls it counts as cached, not in use.
  ArenaBlock block;
  char* arena = nullptr;
  if (transfer_ == nullptr && sizes.arena_bytes > 0) {
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
      arena != nullptr ? 0 : plan_.buffer_bytes.size());
  absl::InlinedVector<void*, 16> pointers;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& step = plan_.steps[i];
    if (stoppable) RETURN_IF_ERROR(stop_before(i));
    if (step.is_kernel) {
      for (int s : step.kernel.allocate) {
        const Slot& slot = plan_.slots[s];
        const int b = plan_.slot_buffer[s];
        const Shape& shape = sizes.slots[s];
        if (const Tensor* dest = direct(s)) {
          slots[s] = Tensor::Borrow(dest->data(), slot.dtype, shape,
                                    dest->strides(), device);
          continue;
        }
        if (b < 0) {
          ASSIGN_OR_RETURN(slots[s],
                           Tensor::Empty(slot.dtype, shape, allocator, device));
          continue;
        }
        // Only kernels read it, so the borrowed view never outlives the
        // arena or buffer this call holds.
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
      pointers.clear();
      for (int s : step.kernel.buffer_slots)
        pointers.push_back(slots[s].data());
      const HostKernelFn fn = kernels_[i];
      void* const* buffers = pointers.data();
      const int64_t* values = symbols.data();
      if (launch_through_module_) {
        const DeviceFaultWords* words =
            fault_lease.has_value() ? fault_lease->words() : nullptr;
        ASSIGN_OR_RETURN(
            const int64_t failed,
            step.gemm != nullptr
                ? RunDeviceGemmStep(*step.gemm, graph_->node(step.node),
                                    *module_, module_index_[i], words, pointers,
                                    slots, symbols, device, allocator, ctx)
            : step.conv != nullptr
                ? RunDeviceConvStep(*step.conv, graph_->node(step.node),
                                    *module_, module_index_[i], words, pointers,
                                    slots, symbols, device, allocator, ctx)
                : module_->Launch(module_index_[i], buffers, symbols, words,
                                  ctx));
        if (failed != 0) {
          const int check = absl::countr_zero(static_cast<uint64_t>(failed));
          return step.kernel.checks.at(check).Error(symbols);
        }
      } else if (step.gemm != nullptr) {
        RETURN_IF_ERROR(
            RunGemmStep(*step.gemm, fn, pointers, slots, symbols, *pool_));
      } else if (step.conv != nullptr) {
        RETURN_IF_ERROR(
            RunConvStep(*step.conv, fn, pointers, slots, symbols, *pool_));
      } else {
        int64_t failed = 0;
        if (sizes.grain[i] > 0) {
          std::atomic<int64_t> faults{0};
          std::atomic<bool> stopped{false};
          const int64_t extent = sizes.outer_extent[i];
          int64_t round = extent;
          if (stoppable) {
            const int64_t per_iteration = std::max<int64_t>(
                1, WorkOf(step.kernel.kernel, symbols) / extent);
            round = std::max<int64_t>(1, kStoppableChunkWork / per_iteration) *
                    (int64_t{pool_->num_threads()} * 4);
          }
          for (int64_t start = 0; start < extent && !stopped.load();
               start += round) {
            pool_->ParallelFor(
                std::min(round, extent - start), sizes.grain[i],
                [&](int64_t begin, int64_t end) {
                  if (stoppable && (stopped.load(std::memory_order_relaxed) ||
                                    !ctx.CheckStop().ok())) {
                    stopped.store(true, std::memory_order_relaxed);
                    return;
                  }
                  const int64_t f =
                      fn(buffers, values, start + begin, start + end);
                  if (f != 0) faults.fetch_or(f);
                });
          }
          if (stopped.load()) {
            absl::Status stop = stop_before(i);
            // The flag may have been cleared since a chunk saw it.
            return stop.ok() ? absl::CancelledError(absl::StrCat(
                                   "cancelled by the host during step ", i + 1))
                             : stop;
          }
          failed = faults.load();
        } else {
          failed = fn(buffers, values, 0, sizes.outer_extent[i]);
        }
        if (failed != 0) {
          const int check = absl::countr_zero(static_cast<uint64_t>(failed));
          return step.kernel.checks.at(check).Error(symbols);
        }
      }
    } else {
      const Node& node = graph_->node(step.node);
      // A device program runs the node's reference kernel on host copies of
      // its arguments (correct, slow: each copy waits for the stream).
      absl::Status moved;
      KernelArgs args(
          node,
          [&](ValueRef v) {
            const int64_t key = (int64_t{v.node} << 16) + v.index;
            for (size_t a = 0; a < step.extern_args.size(); ++a) {
              if (step.extern_args[a].first == key) {
                Tensor view = ViewOf(slots, sizes.extern_args[i][a]);
                if (transfer_ == nullptr || view.device().is_cpu()) {
                  return view;
                }
                absl::StatusOr<Tensor> host = transfer_->ToHost(view, ctx);
                if (host.ok()) return *std::move(host);
                moved.Update(host.status());
                return Tensor();
              }
            }
            return Tensor();
          },
          [](const Scalar& s) { return Tensor::WrappedNumber(s); });
      RETURN_IF_ERROR(moved);
      // Outputs of the graph the kernel writes in place (PlanDirectOutputs:
      // nothing that can fail runs after this step).
      const std::vector<int>& outs = extern_output_slots_[i];
      absl::InlinedVector<const Tensor*, 4> dests(outs.size(), nullptr);
      bool any_dest = false;
      for (size_t k = 0; k < outs.size(); ++k) {
        dests[k] = outs[k] >= 0 ? direct(outs[k]) : nullptr;
        any_dest |= dests[k] != nullptr;
      }
      if (any_dest) args.set_destinations(dests);
      auto result = (*eager_[i])(
          args, num_symbols_ > 0 ? sizes.metas[step.node] : metas_[step.node]);
      if (!result.ok()) {
        return absl::Status(
            result.status().code(),
            absl::StrCat("node '", node.name, "' (", node.target,
                         "): ", result.status().message()));
      }
      if (result->size() < outs.size()) {
        return absl::InternalError(absl::StrCat(
            "node '", node.name, "': kernel returned ", result->size(),
            " outputs, expected at least ", outs.size()));
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k] < 0) continue;  // an output nothing reads
        // Later kernels read eager results as contiguous memory.
        Tensor t = (*result)[k];
        if (!t.is_contiguous()) {
          ASSIGN_OR_RETURN(t, Contiguous(t));
        }
        if (transfer_ != nullptr) {
          ASSIGN_OR_RETURN(t, transfer_->ToDevice(t, ctx));
        }
        slots[outs[k]] = std::move(t);
      }
    }
    for (int s : step.release) slots[s] = kReleased;
  }
  if (transfer_ != nullptr && synchronize) {
    if (!fault_lease.has_value()) {
      RETURN_IF_ERROR(transfer_->Synchronize(ctx));
    } else {
      ASSIGN_OR_RETURN(const DeviceFault fault, fault_lease->Settle());
      if (fault.kernel >= 0) return DeviceFaultError(fault, true);
    }
  }
  for (size_t k = 0; k < sizes.outputs.size(); ++k) {
    results[k] = ViewOf(slots, sizes.outputs[k]);
  }
  return absl::OkStatus();
}

absl::Status CompiledProgram::DeviceFaultError(const DeviceFault& fault,
                                               bool this_call) const {
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    if (module_index_[i] != fault.kernel) continue;
    const int check = absl::countr_zero(static_cast<uint64_t>(fault.mask));
    const absl::Status error =
        plan_.steps[i].kernel.checks.at(check).Error(fault.symbols);
    return absl::Status(
        error.code(),
        absl::StrCat(
            "device-side check failed ",
            this_call ? "during this call" : "in an earlier call on this entry",
            " (kernel ", fault.kernel, " on ", transfer_->device().ToString(),
            "): ", error.message()));
  }
  return absl::InternalError(
      absl::StrCat("device fault in unknown kernel ", fault.kernel));
}

}  // namespace guardjit
