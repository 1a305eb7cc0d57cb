#include "jit/compiled_program.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/gemm_step.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

// Kernels with fewer element operations than this run on the calling thread;
// parallel ones get chunks of about kChunkWork.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;
constexpr int64_t kChunkWork = int64_t{1} << 14;

// Element operations of one run of `k` (its loops' iteration counts), or -1
// when a size is symbolic.
int64_t WorkOf(const Kernel& k) {
  int64_t outer = 1;
  for (const LoopRange& l : k.outer) {
    if (!l.extent.is_const()) return -1;
    outer *= l.extent.value();
  }
  int64_t per_point = 0;
  for (const Stage& stage : k.stages) {
    int64_t n = 1;
    for (const LoopRange& l : stage.loops) {
      if (!l.extent.is_const()) return -1;
      n *= l.extent.value();
    }
    per_point += n;
  }
  return outer * std::max<int64_t>(per_point, 1);
}

// The view `ref` describes of the memory in `slots`.
Tensor ViewOf(const std::vector<Tensor>& slots, const TensorRef& ref) {
  const Tensor& base = slots[ref.slot];
  if (ref.offset == 0 &&
      std::equal(ref.sizes.begin(), ref.sizes.end(), base.sizes().begin(),
                 base.sizes().end()) &&
      std::equal(ref.strides.begin(), ref.strides.end(), base.strides().begin(),
                 base.strides().end())) {
    return base;
  }
  return base.AsStrided(ref.sizes, ref.strides, ref.offset);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Create(
    std::shared_ptr<const Graph> graph, GraphMeta metas, Plan plan,
    KernelCompiler& compiler) {
  std::unique_ptr<CompiledProgram> program(
      new CompiledProgram(std::move(graph), std::move(metas), std::move(plan)));
  const Plan& p = program->plan_;
  std::vector<const Kernel*> kernels;
  for (const PlanStep& step : p.steps) {
    if (step.is_kernel) kernels.push_back(&step.kernel.kernel);
  }
  ASSIGN_OR_RETURN(std::vector<CompiledKernelFn> compiled,
                   compiler.Compile(kernels));
  size_t next = 0;
  for (const PlanStep& step : p.steps) {
    std::vector<int> outputs;
    int64_t extent = 1;
    int64_t grain = 0;
    if (step.is_kernel) {
      program->kernels_.push_back(compiled[next++]);
      program->eager_.push_back(nullptr);
      const Kernel& k = step.kernel.kernel;
      if (!k.outer.empty()) {
        if (!k.outer[0].extent.is_const()) {
          return absl::UnimplementedError("symbolic outer extent");
        }
        extent = k.outer[0].extent.value();
        const int64_t work = WorkOf(k);
        if (work >= kMinParallelWork && extent >= 2) {
          const int64_t per_iteration = std::max<int64_t>(1, work / extent);
          grain = std::max<int64_t>(1, kChunkWork / per_iteration);
        }
      }
    } else {
      const Node& node = program->graph_->node(step.node);
      const KernelFn* fn = KernelRegistry::Global().Find(node.target);
      if (fn == nullptr) {
        return absl::UnimplementedError(absl::StrCat(
            "node '", node.name, "' (", node.target, "): no reference kernel"));
      }
      program->kernels_.push_back(nullptr);
      program->eager_.push_back(fn);
      for (size_t s = 0; s < p.slots.size(); ++s) {
        if (p.slots[s].source == Slot::Source::kExtern &&
            p.slots[s].node == step.node) {
          outputs.resize(
              std::max<size_t>(outputs.size(), p.slots[s].output + 1));
          outputs[p.slots[s].output] = static_cast<int>(s);
        }
      }
    }
    program->extern_output_slots_.push_back(std::move(outputs));
    program->outer_extent_.push_back(extent);
    program->grain_.push_back(grain);
  }
  return program;
}

absl::StatusOr<std::vector<Tensor>> CompiledProgram::Run(
    absl::Span<const Tensor> inputs) const {
  static const Tensor kReleased;
  std::vector<Tensor> slots(plan_.slots.size());
  for (size_t s = 0; s < plan_.slots.size(); ++s) {
    const Slot& slot = plan_.slots[s];
    if (slot.source == Slot::Source::kInput) {
      slots[s] = inputs[slot.input];
    } else if (slot.source == Slot::Source::kConstant) {
      slots[s] = graph_->node(slot.node).constant;
    }
  }
  std::vector<Tensor> buffers(plan_.buffer_bytes.size());
  std::vector<void*> pointers;
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& step = plan_.steps[i];
    if (step.is_kernel) {
      for (int s : step.kernel.allocate) {
        const Slot& slot = plan_.slots[s];
        const int b = plan_.slot_buffer[s];
        if (b < 0) {
          ASSIGN_OR_RETURN(slots[s], Tensor::Empty(slot.dtype, slot.sizes));
          continue;
        }
        // Only kernels read it, so the borrowed view never outlives the
        // buffer this call holds.
        if (buffers[b].data() == nullptr) {
          ASSIGN_OR_RETURN(buffers[b], Tensor::Empty(DType::kUInt8,
                                                     {plan_.buffer_bytes[b]}));
        }
        slots[s] = Tensor::Borrow(buffers[b].data(), slot.dtype, slot.sizes,
                                  ContiguousStrides(slot.sizes));
      }
      pointers.clear();
      for (int s : step.kernel.buffer_slots)
        pointers.push_back(slots[s].data());
      const CompiledKernelFn fn = kernels_[i];
      void* const* buffers = pointers.data();
      if (step.gemm != nullptr) {
        RETURN_IF_ERROR(RunGemmStep(*step.gemm, fn, pointers, slots));
      } else if (grain_[i] > 0) {
        ThreadPool::Global().ParallelFor(outer_extent_[i], grain_[i],
                                         [&](int64_t begin, int64_t end) {
                                           fn(buffers, nullptr, begin, end);
                                         });
      } else {
        fn(buffers, nullptr, 0, outer_extent_[i]);
      }
    } else {
      const Node& node = graph_->node(step.node);
      KernelArgs args(
          node,
          [&](ValueRef v) {
            const int64_t key = (int64_t{v.node} << 16) + v.index;
            for (const auto& [k, ref] : step.extern_args) {
              if (k == key) return ViewOf(slots, ref);
            }
            return Tensor();
          },
          [](const Scalar& s) { return Tensor::WrappedNumber(s); });
      auto result = (*eager_[i])(args, metas_[step.node]);
      if (!result.ok()) {
        return absl::Status(
            result.status().code(),
            absl::StrCat("node '", node.name, "' (", node.target,
                         "): ", result.status().message()));
      }
      const std::vector<int>& outs = extern_output_slots_[i];
      if (result->size() != outs.size()) {
        return absl::InternalError(
            absl::StrCat("node '", node.name, "': kernel returned ",
                         result->size(), " outputs, expected ", outs.size()));
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        // Later kernels read eager results as contiguous memory.
        Tensor t = (*result)[k];
        if (!t.is_contiguous()) {
          ASSIGN_OR_RETURN(t, Contiguous(t));
        }
        slots[outs[k]] = std::move(t);
      }
    }
    for (int s : step.release) slots[s] = kReleased;
  }
  std::vector<Tensor> outputs;
  for (const TensorRef& ref : plan_.outputs) {
    outputs.push_back(ViewOf(slots, ref));
  }
  return outputs;
}

}  // namespace guardjit
