// reduce-overhead mode on a device: a call as one replay of its size key's
// CUDA graph. GEMM steps are extern calls of the graph
// (cuBLASLt captured on the capture stream); so are conv steps (all of a
// convolution's strided-batched products in one extern op), whose im2col
// kernel step is a kernel of ours writing the column matrices into the
// key's pool, and whose product goes to the pool too unless cuBLASLt writes
// the output itself (an epilogue that only stores it). Extern operands that
// are call inputs or outputs (A, B, bias, C, D: for a convolution the
// weight, a pointwise convolution's input read in place, the output) are
// read and written in place or staged through the key's pool, as
// runtime/cuda/cuda_graph.h's policy decides.

#include "jit/cuda/program_graphs.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/cuda/device_conv_step.h"
#include "jit/cuda/device_gemm_step.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

// The cuBLASLt products of one GEMM or conv step of a graphed call: what
// its extern op enqueues (a GEMM step's one product; a convolution's one
// strided-batched product per group or per image).
struct GemmCall {
  const CublasLtGemm* gemm = nullptr;
  absl::InlinedVector<CublasLtGemmArgs, 2> args;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

absl::Status EnqueueGemm(const void* context, CUstream stream) {
  const auto* call = static_cast<const GemmCall*>(context);
  for (const CublasLtGemmArgs& args : call->args) {
    RETURN_IF_ERROR(call->gemm->RunWithWorkspace(args, stream, call->workspace,
                                                 call->workspace_bytes));
  }
  return absl::OkStatus();
}

// What an extern step (GEMM or conv) of a graphed call reads and writes.
struct ExternSlots {
  absl::InlinedVector<int, 5> slots;  // operands, in `names` order
  absl::InlinedVector<const char*, 5> names;
  int written = -1;  // the output slot cuBLASLt writes, or -1
  // Bytes of the product in the key's pool an epilogue kernel reads (when
  // `written` is -1).
  int64_t product_bytes = 0;
};

// A call re-builds its ops at most this many times in a row (each time an
// extern operand becomes staged).
constexpr int kMaxRestages = 8;

}  // namespace

absl::StatusOr<std::unique_ptr<ProgramGraphs>> CudaProgramGraphs::Create(
    const Program& program, const Plan& plan) {
  if (plan.steps.size() != program.steps.size()) {
    return absl::InternalError("a plan of another program");
  }
  ASSIGN_OR_RETURN(const CudaDevice* cuda,
                   CudaDevice::Get(program.device().index));
  std::unique_ptr<CudaProgramGraphs> graphs(
      new CudaProgramGraphs(program, cuda));
  // Programs whose steps are kernel launches, GEMM steps and conv steps
  // (cuBLASLt, captured as extern calls of the graph; a convolution's
  // im2col kernel is a kernel step of ours and its column matrices and
  // product live in the key's pool) are recorded.
  bool kernels = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& p = plan.steps[i];
    Step& step = graphs->steps_.emplace_back();
    step.node = p.node;
    step.allocate = program.steps[i].allocate;
    if (!p.is_kernel) {
      if (graphs->refusal_.empty()) {
        const Node& node = program.graph->node(p.node);
        graphs->refusal_ = absl::StrCat(
            "node '", node.name, "' (", node.target,
            ") runs on the host (its reference kernel on host copies, which "
            "waits for the stream)");
      }
      continue;
    }
    kernels = true;
    step.gemm = p.gemm;
    step.conv = p.conv;
    step.buffer_slots = p.kernel.buffer_slots;
    step.module_kernel = program.steps[i].runner->module_kernel();
  }
  if (graphs->refusal_.empty() && !kernels) {
    graphs->refusal_ = "the entry launches no kernels";
  }
  return graphs;
}

std::string CudaProgramGraphs::Describe() const { return graphs_.Describe(); }

absl::StatusOr<bool> CudaProgramGraphs::Replay(
    const GraphCall& call, absl::Span<Tensor> results) const {
  const RunContext& ctx = call.ctx;
  const absl::Span<const Tensor> inputs = call.inputs;
  const absl::Span<const int64_t> symbols = call.symbols;
  const CallSizes& sizes = call.sizes;
  const std::shared_ptr<Allocator>& allocator = call.allocator;
  DeviceFaultPool* const faults = call.faults;
  const Program& program = program_;
  const Graph& graph = *program.graph;
  CudaGraphSet* const graphs = &graphs_;
  if (!refusal_.empty()) {
    graphs->Refuse(refusal_);
    return false;
  }
  if (ctx.stoppable()) return false;
  for (const Slot& slot : program.slots) {
    if (slot.source == Slot::Source::kInput &&
        inputs[slot.input].device().is_cpu()) {
      graphs->Refuse(
          absl::StrCat("input ", slot.input, " ('",
                       graph.node(graph.inputs()[slot.input]).name,
                       "') is a CPU tensor (a scalar uploaded on every call)"));
      return false;
    }
  }
  std::optional<CudaGraphSet::Lease> lease =
      graphs->TryAcquire(symbols, *ctx.cuda_graphs);
  if (!lease.has_value() || lease->FirstCall()) return false;
  const Device device = program.device();
  // Every replay's kernels write the fault words of the key's graph (an
  // address baked into the graph; device_faults.h).
  const DeviceFaultWords* fault_words = nullptr;
  if (faults != nullptr) {
    ASSIGN_OR_RETURN(
        fault_words,
        faults->GraphWords(
            symbols, static_cast<size_t>(
                         std::max(0, ctx.cuda_graphs->max_graphs_per_entry))));
  }
  // A call that ends without a replay gives the words back; a replay hands
  // them to GraphReplayed (ProgramRunner::Run).
  bool replayed = false;
  absl::Cleanup give_back_words = [&] {
    if (fault_words != nullptr && !replayed) faults->GraphUnused(symbols);
  };
  const CublasLtGemm* gemm = nullptr;
  // GEMM steps bound to the call's symbols (a static step as is).
  absl::InlinedVector<const GemmStep*, 8> gemm_of(steps_.size(), nullptr);
  std::vector<GemmStep> bound;
  // Conv steps bound to the call's symbols (a static step as is).
  absl::InlinedVector<const ConvStep*, 8> conv_of(steps_.size(), nullptr);
  std::vector<ConvStep> bound_convs;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (const ConvStep* conv = steps_[i].conv.get()) {
      if (conv->symbolic.has_value()) {
        if (bound_convs.capacity() == 0) {
          bound_convs.reserve(steps_.size());
        }
        ASSIGN_OR_RETURN(ConvStep b, conv->Bind(symbols));
        bound_convs.push_back(std::move(b));
        conv = &bound_convs.back();
      }
      conv_of[i] = conv;
    }
    const GemmStep* step = steps_[i].gemm.get();
    if (step == nullptr && conv_of[i] == nullptr) continue;
    if (gemm == nullptr) {
      ASSIGN_OR_RETURN(const CudaDevice* cuda, CudaDevice::Get(device.index));
      ASSIGN_OR_RETURN(CublasLtGemm * g, CublasLtGemm::ForDevice(*cuda));
      gemm = g;
    }
    if (step == nullptr) continue;
    if (step->symbolic.has_value()) {
      if (bound.capacity() == 0) bound.reserve(steps_.size());
      ASSIGN_OR_RETURN(GemmStep b, step->Bind(symbols));
      bound.push_back(std::move(b));
      step = &bound.back();
    }
    gemm_of[i] = step;
  }
  // The destination an output slot is written into directly, or null.
  auto destination = [&](int s) -> const Tensor* {
    return call.placement.Destination(ctx, inputs, s);
  };
  constexpr int64_t kAlign = 256;
  auto aligned = [](int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  absl::InlinedVector<int, 16> output_of(program.slots.size(), -1);
  for (size_t k = program.outputs.size(); k-- > 0;) {
    output_of[program.outputs[k].slot] = static_cast<int>(k);
  }
  auto role = [&](int s, const absl::InlinedVector<int64_t, 16>& pool_offset)
      -> CudaGraphBuffer {
    const Slot& slot = program.slots[s];
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
  auto slot_bytes = [&](int s) -> int64_t {
    if (program.slots[s].source == Slot::Source::kInput) {
      const ByteRange r = MemoryRange(inputs[program.slots[s].input]);
      return static_cast<int64_t>(r.end - r.begin);
    }
    int64_t elements = 1;
    for (int64_t d : sizes.slots[s]) elements *= d;
    return elements * ItemSize(program.slots[s].dtype);
  };
  // The slots extern step i reads or writes (none: not an extern step).
  auto extern_slots = [&](size_t i) {
    ExternSlots e;
    if (const GemmStep* g = gemm_of[i]) {
      e.slots = {g->a.slot, g->b.slot};
      e.names = {"A", "B"};
      if (g->device_epilogue.has_value()) {
        if (g->device_epilogue->bias.has_value()) {
          e.slots.push_back(g->device_epilogue->bias->slot);
          e.names.push_back("bias");
        }
        if (g->device_epilogue->c.has_value()) {
          e.slots.push_back(g->device_epilogue->c->slot);
          e.names.push_back("C");
        }
        e.written = g->device_epilogue->out_slot;
        e.slots.push_back(e.written);
        e.names.push_back("D");
      } else {
        e.product_bytes = g->batch * g->m * g->n * ItemSize(g->dtype);
      }
    } else if (const ConvStep* c = conv_of[i]) {
      // The weight, the column matrices (in the pool: the im2col kernel's)
      // or the input a pointwise convolution reads in place, and the output
      // when cuBLASLt writes it (the epilogue only stores the result).
      e.slots = {c->weight.slot, c->device->cols_slot >= 0
                                     ? c->device->cols_slot
                                     : c->input.slot};
      e.names = {"A", "B"};
      e.product_bytes = c->batch * c->groups * c->out_channels * c->cols() *
                        ItemSize(c->dtype);
      const int out = c->device->out_slot;
      if (out >= 0 && slot_bytes(out) == e.product_bytes) {
        e.written = out;
        e.slots.push_back(out);
        e.names.push_back("D");
      }
    }
    return e;
  };
  for (int round = 0;; ++round) {
    if (round == kMaxRestages) return false;
    // Outputs get fresh memory (or their destination) on every call; every
    // other slot a kernel writes lives in the key's private pool, at the
    // same address on every replay (slots sharing a plan buffer share its
    // region), as do cuBLASLt products an epilogue kernel reads and staged
    // extern operands.
    absl::InlinedVector<int64_t, 16> pool_offset(program.slots.size(), -1);
    absl::InlinedVector<int64_t, 16> stage_offset(program.slots.size(), -1);
    absl::InlinedVector<int64_t, 8> product_offset(steps_.size(), -1);
    absl::InlinedVector<int64_t, 8> buffer_offset(program.buffer_bytes.size(),
                                                  -1);
    int64_t pool_bytes = 0;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& step = steps_[i];
      for (int s : step.allocate) {
        if (output_of[s] >= 0) continue;
        const int b = program.slot_buffer[s];
        if (b >= 0) {
          if (buffer_offset[b] < 0) {
            buffer_offset[b] = pool_bytes;
            pool_bytes += aligned(sizes.buffer_bytes[b]);
          }
          pool_offset[s] = buffer_offset[b];
        } else {
          pool_offset[s] = pool_bytes;
          pool_bytes += aligned(slot_bytes(s));
        }
      }
      if (gemm_of[i] == nullptr && conv_of[i] == nullptr) continue;
      const ExternSlots e = extern_slots(i);
      if (e.written < 0) {
        product_offset[i] = pool_bytes;
        pool_bytes += aligned(e.product_bytes);
      }
      for (int s : e.slots) {
        const CudaGraphBuffer r = role(s, pool_offset);
        if (r.kind != CudaGraphBuffer::Kind::kInput &&
            r.kind != CudaGraphBuffer::Kind::kOutput) {
          continue;
        }
        // An output in fresh memory moves on every call (the caller holds
        // the last one): staged from the start when small.
        if (r.kind == CudaGraphBuffer::Kind::kOutput && !lease->Staged(r) &&
            destination(s) == nullptr &&
            slot_bytes(s) <= lease->max_staged_bytes()) {
          lease->Stage(r, absl::StrCat("output ", r.index, " of node '",
                                       graph.node(steps_[i].node).name,
                                       "' (fresh memory on every call)"));
        }
        if (stage_offset[s] < 0 && lease->Staged(r)) {
          stage_offset[s] = pool_bytes;
          pool_bytes += aligned(slot_bytes(s));
        }
      }
    }
    absl::StatusOr<CUdeviceptr> pool = lease->Pool(pool_bytes);
    if (absl::IsResourceExhausted(pool.status())) {
      graphs->Refuse(std::string(pool.status().message()));
      return false;
    }
    RETURN_IF_ERROR(pool.status());
    char* const base = reinterpret_cast<char*>(*pool);
    absl::InlinedVector<Tensor, 16> slots(program.slots.size());
    for (size_t s = 0; s < program.slots.size(); ++s) {
      const Slot& slot = program.slots[s];
      if (slot.source == Slot::Source::kInput) {
        slots[s] = inputs[slot.input];
      } else if (slot.source == Slot::Source::kConstant) {
        slots[s] = program.constants[s];
      }
    }
    // Where a slot's memory starts (an input's lowest byte).
    auto begin_of = [&](int s) -> const char* {
      return reinterpret_cast<const char*>(MemoryRange(slots[s]).begin);
    };
    // Whether a staged slot's pool region holds its value now (an extern
    // wrote it there, or it was copied in).
    absl::InlinedVector<bool, 16> stage_holds(program.slots.size(), false);
    // Inline capacities cover a 10-layer MLP's ops: a replay allocates
    // nothing here.
    absl::InlinedVector<CudaGraphOp, 16> ops;
    absl::InlinedVector<GemmCall, 16> calls;
    calls.reserve(steps_.size());
    absl::InlinedVector<size_t, 16> extern_ops;
    absl::InlinedVector<void*, 16> pointers;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& step = steps_[i];
      for (int s : step.allocate) {
        const Slot& slot = program.slots[s];
        const Shape& shape = sizes.slots[s];
        stage_holds[s] = false;
        if (output_of[s] < 0) {
          slots[s] = Tensor::Borrow(base + pool_offset[s], slot.dtype, shape,
                                    ContiguousStrides(shape), device);
          continue;
        }
        if (const Tensor* dest = destination(s)) {
          slots[s] = Tensor::Borrow(dest->data(), slot.dtype, shape,
                                    dest->strides(), device);
        } else {
          ASSIGN_OR_RETURN(slots[s],
                           Tensor::Empty(slot.dtype, shape, allocator, device));
        }
      }
      const GemmStep* g = gemm_of[i];
      const ConvStep* conv = conv_of[i];
      void* product = nullptr;
      if (g != nullptr || conv != nullptr) {
        const std::string& node_name = graph.node(step.node).name;
        // Staged inputs the products read: copied into the pool first.
        const ExternSlots e = extern_slots(i);
        const absl::InlinedVector<int, 5>& touched = e.slots;
        const int written = e.written;
        for (int s : touched) {
          if (s == written || stage_offset[s] < 0 || stage_holds[s]) continue;
          CudaGraphOp& copy = ops.emplace_back();
          copy.kind = CudaGraphOp::Kind::kCopy;
          copy.copy.src = reinterpret_cast<CUdeviceptr>(begin_of(s));
          copy.copy.dst = reinterpret_cast<CUdeviceptr>(base + stage_offset[s]);
          copy.copy.bytes = slot_bytes(s);
          copy.copy.src_buffer = role(s, pool_offset);
          copy.copy.dst_buffer = {CudaGraphBuffer::Kind::kPool,
                                  stage_offset[s]};
          stage_holds[s] = true;
        }
        auto where = [&](int s, const void* address) -> const void* {
          if (stage_offset[s] < 0) return address;
          return base + stage_offset[s] +
                 (static_cast<const char*>(address) - begin_of(s));
        };
        product = written >= 0
                      ? const_cast<void*>(where(written, slots[written].data()))
                      : base + product_offset[i];
        absl::StatusOr<absl::InlinedVector<CublasLtGemmArgs, 4>> args;
        if (g != nullptr) {
          absl::StatusOr<CublasLtGemmArgs> one =
              GraphedGemmArgs(*g, slots, product, where);
          if (one.ok()) {
            args.emplace();
            args->push_back(*one);
          } else {
            args = one.status();
          }
        } else {
          args = GraphedConvArgs(*conv, slots, product, where);
        }
        if (absl::IsFailedPrecondition(args.status())) {
          graphs->Refuse(absl::StrCat("node '", node_name, "' (",
                                      graph.node(step.node).target,
                                      "): ", args.status().message()));
          return false;
        }
        RETURN_IF_ERROR(args.status());
        GemmCall& call = calls.emplace_back();
        call.gemm = gemm;
        call.args.assign(args->begin(), args->end());
        CudaGraphOp& op = ops.emplace_back();
        op.kind = CudaGraphOp::Kind::kExtern;
        op.call.node = &node_name;
        op.call.enqueue = &EnqueueGemm;
        op.call.context = &call;
        for (size_t k = 0; k < touched.size(); ++k) {
          const int s = touched[k];
          CudaGraphOperand& o = op.call.operands.emplace_back();
          o.name = e.names[k];
          o.bytes = slot_bytes(s);
          if (stage_offset[s] >= 0) {
            o.buffer = {CudaGraphBuffer::Kind::kPool, stage_offset[s]};
            o.address = reinterpret_cast<uint64_t>(base + stage_offset[s]);
          } else {
            o.buffer = role(s, pool_offset);
            o.address = reinterpret_cast<uint64_t>(begin_of(s));
          }
        }
        extern_ops.push_back(ops.size() - 1);
        if (written >= 0 && stage_offset[written] >= 0) {
          // The product out of the pool into the output.
          stage_holds[written] = true;
          CudaGraphOp& copy = ops.emplace_back();
          copy.kind = CudaGraphOp::Kind::kCopy;
          copy.copy.src =
              reinterpret_cast<CUdeviceptr>(base + stage_offset[written]);
          copy.copy.dst = reinterpret_cast<CUdeviceptr>(slots[written].data());
          copy.copy.bytes = slot_bytes(written);
          copy.copy.src_buffer = {CudaGraphBuffer::Kind::kPool,
                                  stage_offset[written]};
          copy.copy.dst_buffer = role(written, pool_offset);
        }
        // cuBLASLt computes the whole epilogue (or the convolution's
        // epilogue only stores its result): no kernel.
        if (written >= 0) continue;
      }
      pointers.clear();
      for (int s : step.buffer_slots) pointers.push_back(slots[s].data());
      const int product_param = g != nullptr      ? g->product_param
                                : conv != nullptr ? conv->product_param
                                                  : -1;
      if (product_param >= 0) pointers[product_param] = product;
      CudaGraphOp& op = ops.emplace_back();
      op.kind = CudaGraphOp::Kind::kKernel;
      CudaKernelLaunch& launch = op.launch;
      RETURN_IF_ERROR(program.module->DescribeLaunch(
          step.module_kernel, pointers.data(), symbols, fault_words, &launch));
      for (size_t b = 0; b < step.buffer_slots.size(); ++b) {
        launch.buffers[b] = role(step.buffer_slots[b], pool_offset);
      }
      if (product_param >= 0) {
        launch.buffers[product_param] = {CudaGraphBuffer::Kind::kPool,
                                         product_offset[i]};
      }
    }
    // cuBLASLt's workspace: the key's own, given explicitly (nothing is
    // allocated while the stream is captured).
    if (!calls.empty()) {
      size_t workspace_bytes = 0;
      for (const GemmCall& call : calls) {
        for (const CublasLtGemmArgs& args : call.args) {
          ASSIGN_OR_RETURN(const size_t bytes, gemm->WorkspaceBytes(args));
          workspace_bytes = std::max(workspace_bytes, bytes);
        }
      }
      CUdeviceptr workspace = 0;
      if (workspace_bytes > 0) {
        absl::StatusOr<CUdeviceptr> space =
            lease->Workspace(static_cast<int64_t>(workspace_bytes));
        // Out of device memory refuses the key, as for its pool.
        if (absl::IsResourceExhausted(space.status())) {
          graphs->Refuse(std::string(space.status().message()));
          return false;
        }
        RETURN_IF_ERROR(space.status());
        workspace = *space;
      }
      for (size_t e = 0; e < calls.size(); ++e) {
        calls[e].workspace = reinterpret_cast<void*>(workspace);
        calls[e].workspace_bytes = workspace_bytes;
        CudaGraphOperand& o = ops[extern_ops[e]].call.operands.emplace_back();
        o.name = "workspace";
        o.buffer = {CudaGraphBuffer::Kind::kValue, 0};
        o.address = workspace;
        o.bytes = static_cast<int64_t>(workspace_bytes);
      }
    }
    ASSIGN_OR_RETURN(const CudaGraphSet::Lease::Outcome outcome,
                     lease->Replay(ops, static_cast<CUstream>(ctx.stream)));
    if (outcome == CudaGraphSet::Lease::Outcome::kRestage) continue;
    if (outcome != CudaGraphSet::Lease::Outcome::kReplayed) return false;
    for (size_t k = 0; k < sizes.outputs.size(); ++k) {
      results[k] = ViewOf(slots, sizes.outputs[k]);
    }
    replayed = true;
    return true;
  }
}

}  // namespace guardjit
