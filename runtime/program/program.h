#ifndef GUARDJIT_RUNTIME_PROGRAM_PROGRAM_H_
#define GUARDJIT_RUNTIME_PROGRAM_PROGRAM_H_

// A compiled entry's program: what the JIT made of one graph for one input
// layout, immutable once built. Steps run in order, each by the runner its
// backend supplied for its kind (step_runner.h); the slots are the values
// steps read and write; the buffer plan says which intermediates share
// memory. ProgramRunner (program_runner.h) runs it for a call; a device
// program's CUDA-graph replays are a class of their own over it
// (program_graphs.h).

#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/graph.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "runtime/index_expr.h"
#include "runtime/program/kernel_module.h"

namespace guardjit {

// Memory a program reads or writes at run time.
struct Slot {
  enum class Source { kInput, kConstant, kExtern, kKernel };
  Source source = Source::kKernel;
  int input = -1;  // kInput: input number
  int node = -1;   // kConstant, kExtern: graph node
  int output = 0;  // kExtern: output of that node
  DType dtype = DType::kFloat32;
  std::vector<IndexExpr> sizes;  // kKernel, kExtern: allocated contiguous
  // kExtern written by a step of the plan (a convolution's epilogue), not by
  // a reference kernel: the strides it stores and kernels read it at (a
  // permutation of the contiguous layout, so the allocation is the same);
  // empty = contiguous.
  std::vector<IndexExpr> strides;
};

// A strided view of a slot's memory, in expressions over the program's size
// symbols (constants for a static entry).
struct TensorRef {
  int slot = -1;
  std::vector<IndexExpr> sizes;
  std::vector<IndexExpr> strides;
  IndexExpr offset;
};

class StepRunner;  // step_runner.h

// The kinds of step a backend supplies runners for.
enum class StepKind {
  kKernel,  // a fused kernel of the program's module
  kGemm,    // an extern matrix product (BLAS, cuBLASLt) with its epilogue
  kConv,    // an extern convolution with its epilogue
  kEager,   // a graph node run by its reference kernel
  // A graph node run by a backend's own step in place of its reference
  // kernel (scaled-dot-product attention: jit/steps/attention_step.h); it
  // fills the node's slots as an eager step does.
  kAttention,
  // Likewise layer norm (jit/steps/layer_norm_step.h).
  kLayerNorm,
  // A max pool or spatial mean of the library's own (jit/steps/
  // pool_step.h). Unlike the kinds above it writes one output slot, which
  // it allocates (ProgramStep::allocate) and stores at the slot's strides.
  kPool,
};

// Whether steps of `kind` run one graph node and fill its output slots.
inline bool RunsGraphNode(StepKind kind) {
  return kind == StepKind::kEager || kind == StepKind::kAttention ||
         kind == StepKind::kLayerNorm;
}

struct ProgramStep {
  StepKind kind = StepKind::kKernel;
  std::unique_ptr<const StepRunner> runner;
  // The graph node of an eager, GEMM or conv step; -1 for a fused kernel.
  int node = -1;
  // Slots the step writes into memory the runner of the program gives it
  // before the step runs: a caller's destination, the call's arena, or a
  // fresh tensor (OutputPlacement decides).
  std::vector<int> allocate;
  // Slots nothing reads after this step: their memory is let go.
  std::vector<int> release;
  // Whether the step can fail once the call runs it (a kernel with index
  // checks, which reports them after its writes; any eager step): an output
  // written into its destination before it would be left behind by a
  // failed call (OutputPlacement).
  bool can_fail = false;
  // Eager steps: the reference kernel writes the destinations it is given,
  // failing only before its first write (KernelRegistry).
  bool writes_destinations = false;
  // "kernel computing add, relu" or "node 'mm'": for stop messages and
  // explain().
  std::string label;
  // Kernel steps: the graph values the kernel stores (for messages).
  std::vector<std::string> computes;
};

struct Program {
  std::shared_ptr<const Graph> graph;
  // The nodes' output metadata: symbolic over `num_symbols` symbols for a
  // dynamic program (eager steps make it concrete per call).
  GraphMeta metas;
  int num_symbols = 0;
  std::vector<Slot> slots;
  std::vector<ProgramStep> steps;
  std::vector<TensorRef> outputs;
  // Intermediates only kernels touch share reusable buffers by liveness:
  // slot_buffer[slot] is the buffer it lives in (-1: its own allocation),
  // buffer_bytes[b] the largest slot it holds.
  std::vector<int> slot_buffer;
  std::vector<IndexExpr> buffer_bytes;
  // Per slot: a constant's tensor where its steps read it (a device copy
  // for a device program), else empty.
  std::vector<Tensor> constants;
  // The module whose code the kernel steps run (kept loaded while the
  // program lives), and a device backend's transfers (null on the host).
  std::shared_ptr<const KernelModule> module;
  const DeviceTransfer* transfer = nullptr;
  // Whether any kernel reports index checks on the device (fault words).
  bool has_device_checks = false;

  Device device() const {
    return transfer != nullptr ? transfer->device() : Device::Cpu();
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_PROGRAM_H_
