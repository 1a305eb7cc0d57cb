#include "jit/compiled_program.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/conv_step.h"
#include "jit/gemm_step.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

// Kernels with fewer element operations than this run on the calling thread;
// parallel ones get chunks of about kChunkWork.
constexpr int64_t kMinParallelWork = int64_t{1} << 16;
constexpr int64_t kChunkWork = int64_t{1} << 14;

// Element operations of one run of `k` (its loops' iteration counts) for
// size parameters `sizes`.
int64_t WorkOf(const Kernel& k, absl::Span<const int64_t> sizes) {
  int64_t outer = 1;
  for (const LoopRange& l : k.outer) outer *= l.extent.Evaluate(sizes);
  int64_t per_point = 0;
  for (const Stage& stage : k.stages) {
    int64_t n = 1;
    for (const LoopRange& l : stage.loops) n *= l.extent.Evaluate(sizes);
    per_point += n;
  }
  return outer * std::max<int64_t>(per_point, 1);
}

template <typename Ref>
Tensor ViewOf(const std::vector<Tensor>& slots, const Ref& ref) {
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
    KernelCompiler& compiler, std::shared_ptr<ThreadPool> pool,
    int num_symbols) {
  std::unique_ptr<CompiledProgram> program(
      new CompiledProgram(std::move(graph), std::move(metas), std::move(plan),
                          std::move(pool), num_symbols));
  const Plan& p = program->plan_;
  std::vector<const Kernel*> kernels;
  for (const PlanStep& step : p.steps) {
    if (!step.is_kernel) continue;
    if (step.kernel.kernel.num_size_params != num_symbols) {
      return absl::InternalError(absl::StrCat(
          "kernel takes ", step.kernel.kernel.num_size_params,
          " size parameters; the program has ", num_symbols, " symbols"));
    }
    kernels.push_back(&step.kernel.kernel);
  }
  ASSIGN_OR_RETURN(std::vector<CompiledKernelFn> compiled,
                   compiler.Compile(kernels));
  size_t next = 0;
  for (const PlanStep& step : p.steps) {
    std::vector<int> outputs;
    if (step.is_kernel) {
      program->kernels_.push_back(compiled[next++]);
      program->eager_.push_back(nullptr);
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
  }
  if (num_symbols == 0) program->static_sizes_ = program->Evaluate({});
  return program;
}

CompiledProgram::CallSizes CompiledProgram::Evaluate(
    absl::Span<const int64_t> symbols) const {
  CallSizes out;
  auto ref = [&](const TensorRef& r) {
    return ConcreteRef{r.slot, EvaluateShape(r.sizes, symbols),
                       EvaluateShape(r.strides, symbols),
                       r.offset.Evaluate(symbols)};
  };
  for (const Slot& slot : plan_.slots) {
    out.slots.push_back(EvaluateShape(slot.sizes, symbols));
  }
  for (const IndexExpr& bytes : plan_.buffer_bytes) {
    out.buffer_bytes.push_back(bytes.Evaluate(symbols));
  }
  if (num_symbols_ > 0) out.metas.resize(metas_.size());
  for (const PlanStep& step : plan_.steps) {
    int64_t extent = 1;
    int64_t grain = 0;
    std::vector<ConcreteRef> args;
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
      for (const auto& arg : step.extern_args) args.push_back(ref(arg.second));
      if (num_symbols_ > 0) {
        // The eager kernel reads its output metadata at the call's sizes.
        auto concrete = [&](const SymInt& v) {
          return v.is_symbolic() ? SymInt(v.expr().Evaluate(symbols)) : v;
        };
        for (TensorMeta m : metas_[step.node]) {
          for (SymInt& size : m.sizes) size = concrete(size);
          if (m.sym_value) m.sym_value = concrete(*m.sym_value);
          out.metas[step.node].push_back(std::move(m));
        }
      }
    }
    out.outer_extent.push_back(extent);
    out.grain.push_back(grain);
    out.extern_args.push_back(std::move(args));
  }
  for (const TensorRef& r : plan_.outputs) out.outputs.push_back(ref(r));
  return out;
}

absl::StatusOr<std::vector<Tensor>> CompiledProgram::Run(
    absl::Span<const Tensor> inputs, absl::Span<const int64_t> symbols) const {
  static const Tensor kReleased;
  if (static_cast<int>(symbols.size()) != num_symbols_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", num_symbols_, " symbol values, got ", symbols.size()));
  }
  CallSizes evaluated;
  if (num_symbols_ > 0) evaluated = Evaluate(symbols);
  const CallSizes& sizes = num_symbols_ > 0 ? evaluated : static_sizes_;
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
        const Shape& shape = sizes.slots[s];
        if (b < 0) {
          ASSIGN_OR_RETURN(slots[s], Tensor::Empty(slot.dtype, shape));
          continue;
        }
        // Only kernels read it, so the borrowed view never outlives the
        // buffer this call holds.
        if (buffers[b].data() == nullptr) {
          ASSIGN_OR_RETURN(buffers[b], Tensor::Empty(DType::kUInt8,
                                                     {sizes.buffer_bytes[b]}));
        }
        slots[s] = Tensor::Borrow(buffers[b].data(), slot.dtype, shape,
                                  ContiguousStrides(shape));
      }
      pointers.clear();
      for (int s : step.kernel.buffer_slots)
        pointers.push_back(slots[s].data());
      const CompiledKernelFn fn = kernels_[i];
      void* const* buffers = pointers.data();
      const int64_t* values = symbols.data();
      if (step.gemm != nullptr) {
        // Only static entries fuse GEMM and conv epilogues (their kernels take
        // no size parameters).
        RETURN_IF_ERROR(RunGemmStep(*step.gemm, fn, pointers, slots, *pool_));
      } else if (step.conv != nullptr) {
        RETURN_IF_ERROR(RunConvStep(*step.conv, fn, pointers, slots, *pool_));
      } else {
        int64_t failed = 0;
        if (sizes.grain[i] > 0) {
          std::atomic<int64_t> faults{0};
          pool_->ParallelFor(sizes.outer_extent[i], sizes.grain[i],
                             [&](int64_t begin, int64_t end) {
                               const int64_t f =
                                   fn(buffers, values, begin, end);
                               if (f != 0) faults.fetch_or(f);
                             });
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
      KernelArgs args(
          node,
          [&](ValueRef v) {
            const int64_t key = (int64_t{v.node} << 16) + v.index;
            for (size_t a = 0; a < step.extern_args.size(); ++a) {
              if (step.extern_args[a].first == key) {
                return ViewOf(slots, sizes.extern_args[i][a]);
              }
            }
            return Tensor();
          },
          [](const Scalar& s) { return Tensor::WrappedNumber(s); });
      auto result = (*eager_[i])(
          args, num_symbols_ > 0 ? sizes.metas[step.node] : metas_[step.node]);
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
  for (const ConcreteRef& ref : sizes.outputs) {
    outputs.push_back(ViewOf(slots, ref));
  }
  return outputs;
}

}  // namespace guardjit
