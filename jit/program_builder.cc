#include "jit/program_builder.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "jit/steps/attention_step.h"
#include "jit/steps/gemm_step.h"
#include "jit/steps/layer_norm_step.h"
#include "jit/steps/pool_step.h"
#include "runtime/program/eager_step.h"

namespace guardjit {

namespace {

// The runners of `plan`'s kernel steps, in order; kernel step i's code is
// kernel `module_index[i]` of the program's module (-1: none, the step never
// runs it). Making them is most of a
// warm start: the compile cache serves the kernels' code, but a oneDNN step
// still creates its primitives and packs its constant weights, which oneDNN
// cannot persist on a CPU. A host program makes them on `pool`'s threads at
// once, runner i always from kernel i and into slot i, so the program is the
// same whatever thread made each. Device backends make theirs on the calling
// thread (a CUDA context is current per thread).
absl::StatusOr<std::vector<std::unique_ptr<const StepRunner>>>
MakeKernelRunners(const Plan& plan, const Program& p,
                  const KernelBackend& backend,
                  const std::vector<int>& module_index,
                  const std::shared_ptr<ThreadPool>& pool) {
  std::vector<const PlanStep*> steps;
  for (const PlanStep& step : plan.steps) {
    if (step.is_kernel) steps.push_back(&step);
  }
  const int64_t n = static_cast<int64_t>(steps.size());
  std::vector<absl::StatusOr<std::unique_ptr<const StepRunner>>> made(n);
  // Each thread takes the next step until none is left: a oneDNN
  // convolution costs a hundred times a fused kernel's runner, so fixed
  // chunks would leave one thread with most of the work.
  std::atomic<int64_t> next{0};
  auto make = [&](int64_t, int64_t) {
    for (int64_t i = next++; i < n; i = next++) {
      made[i] = backend.MakeStepRunner(*steps[i], *p.graph, p.module,
                                       module_index[i], pool);
    }
  };
  if (backend.host_code() && pool != nullptr && n > 1) {
    pool->ParallelFor(std::min<int64_t>(n, pool->num_threads()), 1, make);
  } else {
    make(0, n);
  }
  std::vector<std::unique_ptr<const StepRunner>> runners;
  runners.reserve(n);
  for (auto& runner : made) {
    RETURN_IF_ERROR(runner.status());  // the first failing step's error
    runners.push_back(*std::move(runner));
  }
  return runners;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProgramRunner>> BuildProgram(
    std::shared_ptr<const Graph> graph, GraphMeta metas, const Plan& plan,
    KernelBackend& backend, std::shared_ptr<ThreadPool> pool, int num_symbols) {
  auto program = std::make_unique<Program>();
  Program& p = *program;
  p.graph = std::move(graph);
  p.metas = std::move(metas);
  p.num_symbols = num_symbols;
  p.slots = plan.slots;
  p.outputs = plan.outputs;
  p.slot_buffer = plan.slot_buffer;
  p.buffer_bytes = plan.buffer_bytes;
  p.transfer = backend.transfer();
  std::vector<const Kernel*> kernels;
  std::vector<std::string> labels;  // for a forbidden compile's error
  std::vector<int> module_index;    // per kernel step
  for (const PlanStep& step : plan.steps) {
    if (!step.is_kernel) continue;
    if (step.kernel.kernel.num_size_params != num_symbols) {
      return absl::InternalError(absl::StrCat(
          "kernel takes ", step.kernel.kernel.num_size_params,
          " size parameters; the program has ", num_symbols, " symbols"));
    }
    // A step's kernels are consecutive in the module: a packed product's
    // own code first, then the step's kernel where it runs.
    const Kernel* packed = step.gemm != nullptr && step.gemm->packed.has_value()
                               ? &step.gemm->packed->kernel
                               : nullptr;
    const bool runs = backend.RunsKernelOf(step);
    if (packed == nullptr && !runs) {
      module_index.push_back(-1);
      continue;
    }
    module_index.push_back(static_cast<int>(kernels.size()));
    if (packed != nullptr) {
      labels.push_back(
          absl::StrCat("kernel ", kernels.size(), " (the packed product of ",
                       absl::StrJoin(step.kernel.computes, ", "), ")"));
      kernels.push_back(packed);
    }
    if (!runs) continue;
    labels.push_back(absl::StrCat("kernel ", kernels.size(), " (computing ",
                                  absl::StrJoin(step.kernel.computes, ", "),
                                  ")"));
    kernels.push_back(&step.kernel.kernel);
    p.has_device_checks |= step.kernel.kernel.num_checks > 0;
  }
  p.has_device_checks &= p.transfer != nullptr;
  ASSIGN_OR_RETURN(p.module, backend.Compile(kernels, labels));
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<const StepRunner>> runners,
                   MakeKernelRunners(plan, p, backend, module_index, pool));
  size_t next = 0;
  for (const PlanStep& plan_step : plan.steps) {
    ProgramStep step;
    if (plan_step.is_kernel) {
      step.runner = std::move(runners[next++]);
      step.kind = plan_step.gemm != nullptr   ? StepKind::kGemm
                  : plan_step.conv != nullptr ? StepKind::kConv
                                              : StepKind::kKernel;
      step.node = plan_step.node;
      step.allocate = plan_step.kernel.allocate;
      step.can_fail = plan_step.kernel.kernel.num_checks > 0;
      step.label = absl::StrCat("kernel computing ",
                                absl::StrJoin(plan_step.kernel.computes, ", "));
      step.computes = plan_step.kernel.computes;
    } else if (plan_step.attention) {
      ASSIGN_OR_RETURN(step, MakeAttentionStep(p, plan_step.node,
                                               plan_step.extern_args, pool));
    } else if (plan_step.layer_norm) {
      ASSIGN_OR_RETURN(step, MakeLayerNormStep(p, plan_step.node,
                                               plan_step.extern_args, pool));
    } else if (plan_step.pool) {
      ASSIGN_OR_RETURN(
          step, MakePoolStep(p, plan_step.node, plan_step.extern_args, pool));
    } else {
      ASSIGN_OR_RETURN(step,
                       MakeEagerStep(p, plan_step.node, plan_step.extern_args));
      if (p.transfer != nullptr) {
        // Nodes without a lowering for the device run their reference
        // kernels on host copies: correct, slow, and said once per program.
        const Node& node = p.graph->node(plan_step.node);
        Log(LogTopic::kCodegen,
            absl::StrCat(p.transfer->device().ToString(), ": node '", node.name,
                         "' (", node.target,
                         ") has no lowering for the device; it runs its "
                         "reference kernel on host copies of its arguments"));
      }
    }
    step.release = plan_step.release;
    p.steps.push_back(std::move(step));
  }
  // Kernels read the graph's constants where they run: a device program
  // keeps one device copy of each.
  p.constants.resize(p.slots.size());
  for (size_t s = 0; s < p.slots.size(); ++s) {
    if (p.slots[s].source != Slot::Source::kConstant) continue;
    const Tensor& constant = p.graph->node(p.slots[s].node).constant;
    if (p.transfer == nullptr) {
      p.constants[s] = constant;
    } else {
      ASSIGN_OR_RETURN(p.constants[s],
                       p.transfer->ToDevice(constant, RunContext()));
    }
  }
  std::unique_ptr<ProgramGraphs> graphs;
  if (p.transfer != nullptr) {
    ASSIGN_OR_RETURN(graphs, backend.MakeGraphs(p, plan));
  }
  return ProgramRunner::Create(std::move(program), std::move(graphs));
}

}  // namespace guardjit
