#include "jit/jit_compiler.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "jit/attention_fusion.h"
#include "jit/fold_batch_norm.h"
#include "jit/lowering/index_simplify.h"
#include "jit/lowering/lowering.h"
#include "jit/lowering/lowering_context.h"
#include "jit/program_builder.h"
#include "jit/steps/attention_step.h"
#include "jit/steps/channels_last.h"
#include "jit/steps/conv_epilogue.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_epilogue.h"
#include "jit/steps/gemm_step.h"
#include "jit/steps/layer_norm_step.h"
#include "jit/steps/packed_gemm.h"
#include "jit/steps/parallel_loop.h"
#include "jit/steps/pool_step.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/eager_compiler.h"

namespace guardjit {
namespace {

// Each input's strides, as expressions over the entry's symbols.
using Layout = std::vector<std::vector<IndexExpr>>;

// `bytes` for explain(): "1.5 MiB", "40.0 KiB".
std::string DescribeBytes(double bytes) {
  return bytes >= (1 << 20) ? absl::StrFormat("%.1f MiB", bytes / (1 << 20))
                            : absl::StrFormat("%.1f KiB", bytes / 1024);
}

// oneDNN's name of a layout of channel blocks of `block`: nChw8c, ...
std::string BlockedLayoutName(int spatial, int block) {
  const char* dims = spatial == 1 ? "w" : spatial == 2 ? "hw" : "dhw";
  return absl::StrCat("nC", dims, block, "c");
}

// The call's symbol values, read from its inputs.
absl::StatusOr<absl::InlinedVector<int64_t, 4>> SymbolValues(
    const std::vector<SymbolSource>& symbols, absl::Span<const Tensor> inputs) {
  absl::InlinedVector<int64_t, 4> values;
  for (const SymbolSource& s : symbols) {
    if (s.input >= static_cast<int>(inputs.size()) ||
        s.dim >= inputs[s.input].dim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no dim ", s.dim, " of input ", s.input, " for a size symbol"));
    }
    values.push_back(inputs[s.input].size(s.dim));
  }
  return values;
}

// Whether `t` is laid out as `strides` for symbol values `symbols` (size-0/1
// dims match any stride).
bool HasLayout(const Tensor& t, const std::vector<IndexExpr>& strides,
               absl::Span<const int64_t> symbols) {
  if (t.dim() != static_cast<int>(strides.size())) return false;
  for (int d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) != strides[d].Evaluate(symbols)) {
      return false;
    }
  }
  return true;
}

// A layout that serves `t` and, where `meta`'s sizes are symbolic and `t` is
// contiguous in some dim order (transposed, channels-last), every size laid
// out in that order: the strides symbolic_inputs.h guards for such inputs.
std::vector<IndexExpr> LayoutOf(const Tensor& t, const TensorMeta& meta,
                                absl::Span<const int64_t> symbols) {
  std::vector<IndexExpr> exact = ConstExprs(t.strides());
  bool symbolic = false;
  for (const SymInt& size : meta.sizes) symbolic |= size.is_symbolic();
  if (!symbolic || meta.dim() != t.dim()) return exact;
  std::vector<int> order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return t.stride(a) > t.stride(b); });
  std::vector<IndexExpr> strides(t.dim());
  IndexExpr stride = IndexExpr::Const(1);
  for (int k = t.dim() - 1; k >= 0; --k) {
    const int d = order[k];
    strides[d] = stride;
    const IndexExpr size = SizeExpr(meta, d);
    if (!size.is_const() || size.value() > 1) stride = stride * size;
  }
  return HasLayout(t, strides, symbols) ? strides : exact;
}

// GJ_FUSE_ATTENTION=0 turns attention fusion off (read once).
bool AttentionFusionEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("GJ_FUSE_ATTENTION");
    return env == nullptr || std::string(env) != "0";
  }();
  return enabled;
}

bool HasTarget(const Graph& graph, absl::string_view target) {
  for (const Node& node : graph.nodes()) {
    if (node.target == target) return true;
  }
  return false;
}

// `backend`: the kernels' backend; one that is not host code keeps matrix
// products and convolutions eager (their epilogues are CPU code), but a
// device's, which run on cuBLASLt.
absl::StatusOr<Plan> PlanGraph(
    const Graph& graph, const GraphMeta& metas, const Layout& layout,
    int num_symbols, const KernelBackend& backend,
    const absl::flat_hash_set<int>& contiguous_results = {}) {
  std::vector<std::string> fallbacks;
  const Device device = backend.transfer() != nullptr
                            ? backend.transfer()->device()
                            : Device::Cpu();
  // Nodes a host program runs as steps of the library's own, not lowered.
  absl::flat_hash_set<int> layer_norms, pools;
  if (backend.host_code()) {
    for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
      if (TakesLayerNormStep(graph, metas, n, num_symbols)) {
        layer_norms.insert(n);
      } else if (TakesPoolStep(graph, metas, n)) {
        pools.insert(n);
      }
    }
  }
  absl::flat_hash_set<int> library_steps = layer_norms;
  library_steps.insert(pools.begin(), pools.end());
  ASSIGN_OR_RETURN(LoweredGraph lowered, Lower(graph, metas, layout, &fallbacks,
                                               device, library_steps));
  // Activations around oneDNN convolutions are laid out channels last
  // (jit/steps/channels_last.h).
  const std::vector<bool> channels_last =
      backend.host_code()
          ? PreferChannelsLast(graph, lowered, contiguous_results, pools)
          : std::vector<bool>();
  LayOutConvResults(lowered, channels_last);
  ASSIGN_OR_RETURN(Plan plan, Schedule(lowered, channels_last));
  // Views' index arithmetic with the loops' ranges (jit/lowering/
  // index_simplify.h), before the steps below look for affine indices.
  for (PlanStep& step : plan.steps) {
    if (step.is_kernel) SimplifyIndices(step.kernel.kernel);
  }
  // GEMM and conv steps of a dynamic entry bind their symbolic extents per
  // call (FuseConvSteps logs why a convolution stays eager).
  if (backend.host_code()) {
    FuseGemmEpilogues(graph, plan);
    FuseConvSteps(graph, plan, &fallbacks);
    // A convolution whose result was laid out channels last but which no
    // conv step took (FuseConvSteps says why) would be written contiguous by
    // its reference kernel: plan again with its result contiguous.
    if (absl::flat_hash_set<int> eager = StridedResultsLeftEager(plan, pools);
        !eager.empty()) {
      eager.insert(contiguous_results.begin(), contiguous_results.end());
      return PlanGraph(graph, metas, layout, num_symbols, backend, eager);
    }
    OrderChannelsLastLoops(plan);
    LeadWithParallelLoops(plan);
    for (PlanStep& step : plan.steps) {
      step.attention = !step.is_kernel &&
                       TakesAttentionStep(graph, metas, step.node, num_symbols);
      step.layer_norm = !step.is_kernel && layer_norms.contains(step.node);
      step.pool = !step.is_kernel && pools.contains(step.node);
    }
    PlanBuffers(plan);
  } else if (backend.transfer() != nullptr) {
    // A device's matrix products and convolutions run on cuBLASLt
    // (jit/cuda/device_gemm_step.h, device_conv_step.h) where it loads; else
    // they stay host steps, which the plan shows.
    if (const absl::StatusOr<const CublasLtApi*> cublaslt = CublasLtApi::Get();
        cublaslt.ok()) {
      FuseGemmEpilogues(graph, plan, /*device=*/true);
      FuseConvSteps(graph, plan, &fallbacks, /*device=*/true);
    } else {
      Log(LogTopic::kCodegen,
          absl::StrCat("graph '", graph.name(),
                       "': matrix products and convolutions stay host steps: ",
                       cublaslt.status().message()));
    }
  }
  // Every kernel of a dynamic entry takes all its symbols: one calling
  // convention for the program.
  for (PlanStep& step : plan.steps) {
    if (step.is_kernel) step.kernel.kernel.num_size_params = num_symbols;
  }
  if (LogEnabled(LogTopic::kCodegen)) {
    std::string message = absl::StrCat(
        "graph '", graph.name(), "': ", plan.num_kernels(), " kernels",
        backend.host_code() ? "" : absl::StrCat(" for ", backend.name()),
        num_symbols > 0 ? " over size symbols" : "", "\n", plan.ToString());
    // Lowering's reasons for the nodes still eager (a GEMM or conv step
    // took over others, and the plan shows those).
    std::vector<std::string> eager;
    for (const PlanStep& step : plan.steps) {
      if (step.is_kernel) continue;
      const Node& node = graph.node(step.node);
      const std::string prefix =
          absl::StrCat(node.name, " (", node.target, "): ");
      for (const std::string& reason : fallbacks) {
        if (absl::StartsWith(reason, prefix)) eager.push_back(reason);
      }
    }
    if (!eager.empty()) {
      absl::StrAppend(&message, "eager nodes:\n  ",
                      absl::StrJoin(eager, "\n  "), "\n");
    }
    Log(LogTopic::kCodegen, message);
  }
  return plan;
}

class JitExecutable : public Executable {
 public:
  JitExecutable(std::shared_ptr<const Graph> graph, GraphMeta metas,
                const Specialization& spec, std::shared_ptr<ThreadPool> pool,
                Layout layout, std::unique_ptr<ProgramRunner> program,
                Plan plan, EntryBackend entry, LivePrograms& live)
      : graph_(std::move(graph)),
        metas_(std::move(metas)),
        inputs_(spec.inputs),
        symbols_(spec.symbols),
        pool_(std::move(pool)),
        layout_(std::move(layout)),
        entry_(std::move(entry)),
        program_(std::move(program)),
        plan_(std::move(plan)),
        registration_(live.Add(program_->program())) {}

  absl::Span<const SymbolBound> chosen_bounds() const override {
    return entry_.chosen_bounds;
  }
  std::string chosen_bounds_purpose() const override {
    return entry_.chosen_bounds.empty() ? "" : entry_.chosen_purpose;
  }

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    RETURN_IF_ERROR(CheckInputCount(*graph_, inputs.size()));
    absl::InlinedVector<int64_t, 4> read;
    ASSIGN_OR_RETURN(const absl::Span<const int64_t> values,
                     Symbols(inputs, ctx.symbols, read));
    RETURN_IF_ERROR(CheckChosenBounds(values));
    if (Matches(layout_, inputs, values)) [[likely]] {
      return program_->Run(ctx, inputs, values, outputs);
    }
    ASSIGN_OR_RETURN(const Executable* unplanned, Unplanned(inputs, values));
    return unplanned->Run(ctx, inputs, outputs);
  }

  size_t num_outputs() const override { return graph_->num_outputs(); }

  Device device() const override { return program_->program().device(); }

  CodeOrigin origin() const override {
    const auto& module = program_->program().module;
    return module != nullptr ? module->origin() : CodeOrigin();
  }

  std::string DescribeProfile() const override {
    return program_->DescribeProfile();
  }

  std::string Describe() const override {
    int eager = 0;
    for (const PlanStep& s : plan_.steps) {
      eager += !s.is_kernel && !s.attention && !s.layer_norm && !s.pool;
    }
    std::string text = absl::StrCat("jit: ", plan_.num_kernels(),
                                    " fused kernels, ", eager, " eager nodes");
    if (!symbols_.empty()) {
      absl::StrAppend(&text, ", ", symbols_.size(), " size symbols");
    }
    if (!entry_.description.empty()) {
      absl::StrAppend(&text, ", ", entry_.description);
    }
    // Intermediates between steps: one arena per concurrent call (host), or
    // per-call device buffers.
    if (const int buffers = program_->num_arena_buffers(); buffers > 0) {
      if (entry_.backend->transfer() != nullptr) {
        absl::StrAppend(&text, ", ", buffers,
                        " intermediate buffers per call on the device");
      } else if (program_->static_arena_bytes() >= 0) {
        absl::StrAppend(&text, ", intermediates in a ",
                        program_->static_arena_bytes(), "-byte arena (",
                        buffers, " buffers)");
      } else {
        absl::StrAppend(&text, ", intermediates in an arena of ", buffers,
                        " buffers sized per call");
      }
    }
    if (!entry_.backend->host_code()) {
      absl::StrAppend(&text, ", kernels on ", entry_.backend->name());
    }
    if (const int64_t n = unplanned_calls_.load(std::memory_order_relaxed);
        n > 0) {
      // Calls laid out unlike the layout the program was planned for.
      absl::StrAppend(&text, ", ", n,
                      " calls in a layout it was not planned for ran on the "
                      "reference kernels");
    }
    // Matrix products and convolutions handed to BLAS or cuBLASLt, named
    // by their node (the plan's text has the extents: GJ_LOGS=codegen).
    std::vector<std::string> externs;
    const bool device = entry_.backend->transfer() != nullptr;
    for (const PlanStep& s : plan_.steps) {
      if (s.attention) {
        externs.push_back(absl::StrCat(
            "'", graph_->node(s.node).name, "' (", graph_->node(s.node).target,
            ") as one attention step (oneDNN or BLAS products and a softmax "
            "per block of query "
            "rows, no score matrix in memory)"));
        continue;
      }
      if (s.layer_norm) {
        externs.push_back(absl::StrCat(
            "'", graph_->node(s.node).name, "' (", graph_->node(s.node).target,
            ") as one layer-norm step (the library's loop, no kernel)"));
        continue;
      }
      if (s.pool) {
        externs.push_back(absl::StrCat(
            "'", graph_->node(s.node).name, "' (", graph_->node(s.node).target,
            ") as one pool step (the library's loop, no kernel)"));
        continue;
      }
      if (s.gemm == nullptr && s.conv == nullptr) continue;
      const std::string name =
          s.node >= 0 ? absl::StrCat("'", graph_->node(s.node).name, "' (",
                                     graph_->node(s.node).target, ")")
                      : (s.gemm != nullptr ? s.gemm->target : s.conv->target);
      const char* library = device ? "cuBLASLt" : "BLAS";
      if (s.gemm != nullptr && s.gemm->packed.has_value()) {
        const PackedGemm& p = *s.gemm->packed->kernel.packed_gemm;
        externs.push_back(absl::StrCat(
            name, " as a packed product (", p.tile_rows, "x", p.panel_width,
            " tiles, ",
            AheadOfTimePackedGemm(p) != nullptr ? "ahead-of-time kernel"
                                                : "LLVM kernel",
            ", weights packed once, ",
            DescribeBytes(p.panels() * p.k * p.panel_width * 4.0), ")",
            s.gemm->packed->pointwise.has_value()
                ? absl::StrCat(" then ", s.gemm->packed->pointwise->ToString(),
                               " into its output (the library's loop, no "
                               "kernel)")
            : s.gemm->result_param >= 0 ? " writing its result"
                                        : " with an epilogue kernel"));
      } else if (s.gemm != nullptr && s.gemm->onednn.has_value()) {
        externs.push_back(absl::StrCat(
            name, " on oneDNN (", s.gemm->onednn->impl,
            s.gemm->onednn->weight_node >= 0 ? ", weights packed once)"
                                             : ", batched)",
            s.gemm->result_param >= 0 ? " writing its result"
                                      : " with an epilogue kernel"));
      } else if (s.gemm != nullptr) {
        const bool fused = device && s.gemm->device_epilogue.has_value();
        externs.push_back(absl::StrCat(name, " on ", library,
                                       fused ? " with the epilogue inside it"
                                       : s.gemm->result_param >= 0
                                           ? " writing its result"
                                           : " with an epilogue kernel"));
      } else if (s.conv->device.has_value()) {
        const ConvStep::Device& d = *s.conv->device;
        externs.push_back(absl::StrCat(
            name,
            d.cols_slot >= 0 ? " as im2col and " : " reading its input on ",
            library,
            d.out_slot >= 0 ? " writing the output"
                            : " with an epilogue kernel"));
      } else if (s.conv->onednn.has_value()) {
        const ConvStep::OneDnn& dnn = *s.conv->onednn;
        externs.push_back(absl::StrCat(
            name, " on oneDNN (", dnn.impl,
            dnn.weight_node >= 0 ? ", weights packed once" : "",
            dnn.block == 0 ? ", channels last"
            : dnn.block == 1
                ? ""
                : absl::StrCat(", ",
                               BlockedLayoutName(s.conv->spatial, dnn.block)),
            dnn.pointwise.has_value()
                ? absl::StrCat(") writing its output, then ",
                               dnn.pointwise->ToString(),
                               " in place (the library's loop, no kernel)")
            : dnn.result_param >= 0 ? ") writing its result"
            : dnn.in_place_param >= 0
                ? ") with an epilogue kernel in place on its output"
                : ") with an epilogue kernel"));
      } else {
        externs.push_back(absl::StrCat(name, " as im2col and ", library,
                                       " per image with an epilogue kernel"));
      }
    }
    if (!externs.empty()) {
      absl::StrAppend(&text, "; extern calls: ", absl::StrJoin(externs, ", "));
    }
    // Reductions split into partials (split_reduction.h).
    for (const PlanStep& s : plan_.steps) {
      if (!s.kernel.split.empty()) absl::StrAppend(&text, "; ", s.kernel.split);
    }
    const std::string copies = program_->placement().DescribeCopies();
    if (!copies.empty()) absl::StrAppend(&text, "; ", copies);
    const std::string graphs = program_->DescribeCudaGraphs();
    if (!graphs.empty()) absl::StrAppend(&text, "; ", graphs);
    return text;
  }

 private:
  // The call's symbol values: the ones its guards bound (`bound`, from a
  // Function's hit), else read from the inputs into `read`.
  absl::StatusOr<absl::Span<const int64_t>> Symbols(
      absl::Span<const Tensor> inputs, absl::Span<const int64_t> bound,
      absl::InlinedVector<int64_t, 4>& read) const {
    if (bound.size() == symbols_.size()) return bound;
    ASSIGN_OR_RETURN(read, SymbolValues(symbols_, inputs));
    return absl::Span<const int64_t>(read);
  }

  // A call beyond a bound the kernels rely on would index past 32 bits:
  // the entry's guards keep such calls out, so only a caller of the
  // executable itself gets this error.
  absl::Status CheckChosenBounds(absl::Span<const int64_t> values) const {
    for (size_t i = 0; i < entry_.chosen_bounds.size(); ++i) {
      const SymbolBound& b = entry_.chosen_bounds[i];
      if (values[b.symbol] <= b.max) [[likely]] {
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          entry_.chosen_sources[i], " = ", values[b.symbol], " exceeds ", b.max,
          ", the bound under which ", entry_.chosen_purpose,
          " (the guards of the entry that runs this executable check it)"));
    }
    return absl::OkStatus();
  }

  static bool Matches(const Layout& layout, absl::Span<const Tensor> inputs,
                      absl::Span<const int64_t> symbols) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!HasLayout(inputs[i], layout[i], symbols)) return false;
    }
    return true;
  }

  // A call whose input strides differ from the planned layout. The
  // function's guards pin every input's layout class (exact strides, or
  // contiguous in one dim order over the symbols), so only a caller of the
  // executable itself gets here; such calls run on the reference kernels,
  // counted in Describe(), and nothing is compiled inside Run (issue #13).
  absl::StatusOr<const Executable*> Unplanned(
      absl::Span<const Tensor> inputs,
      absl::Span<const int64_t> symbols) const {
    if (!entry_.backend->host_code()) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (HasLayout(inputs[i], layout_[i], symbols)) continue;
        return absl::FailedPreconditionError(
            absl::StrCat("input ", i, " has strides [",
                         absl::StrJoin(inputs[i].strides(), ", "),
                         "], not the layout the entry's kernels on ",
                         entry_.backend->name(), " were compiled for"));
      }
    }
    unplanned_calls_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    if (unplanned_ == nullptr) {
      ASSIGN_OR_RETURN(unplanned_, EagerCompiler().Fallback(graph_));
      Log(LogTopic::kWarnings,
          absl::StrCat("jit: graph '", graph_->name(),
                       "': a call's input strides are not the layout its "
                       "entry was planned for; such calls run on the "
                       "reference kernels"));
    }
    return unplanned_.get();
  }

  std::shared_ptr<const Graph> graph_;
  GraphMeta metas_;
  std::vector<TensorMeta> inputs_;
  std::vector<SymbolSource> symbols_;
  std::shared_ptr<ThreadPool> pool_;
  Layout layout_;
  // What the backend made of the entry beyond its kernels: the backend
  // that compiled them (kept, and destroyed after the program: it keeps
  // their code loaded) and the bounds on the entry's symbols they rely on.
  const EntryBackend entry_;
  std::unique_ptr<ProgramRunner> program_;
  // The plan the program was built from: what Describe says of its steps.
  const Plan plan_;
  mutable std::atomic<int64_t> unplanned_calls_{0};
  mutable std::mutex mu_;
  mutable std::unique_ptr<Executable> unplanned_ ABSL_GUARDED_BY(mu_);
  // Last: leaves the compiler's live programs before the program goes.
  const std::unique_ptr<LivePrograms::Registration> registration_;
};

Layout ContiguousLayout(const Specialization& spec) {
  Layout layout;
  for (const TensorMeta& meta : spec.inputs) {
    layout.push_back(ContiguousStrideExprs(LoweringContext::Sizes(meta)));
  }
  return layout;
}

// The layout of the call that made the entry (Specialization's examples),
// so the program it runs is compiled once, here, for the strides it will
// see; contiguous where the specialization carries no example.
Layout ExampleLayout(const Specialization& spec) {
  if (spec.example_strides.size() != spec.inputs.size() ||
      spec.example_sizes.size() != spec.inputs.size()) {
    return ContiguousLayout(spec);
  }
  absl::InlinedVector<int64_t, 4> symbols;
  for (const SymbolSource& s : spec.symbols) {
    symbols.push_back(spec.example_sizes[s.input][s.dim]);
  }
  Layout layout;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const Tensor example =
        Tensor::Borrow(nullptr, spec.inputs[i].dtype, spec.example_sizes[i],
                       spec.example_strides[i]);
    layout.push_back(LayoutOf(example, spec.inputs[i], symbols));
  }
  return layout;
}

// Every value's metadata: a dynamic entry's symbolic metas as specialization
// left them (with its guards), else inferred from the inputs.
absl::StatusOr<GraphMeta> MetasOf(const Graph& graph,
                                  const Specialization& spec) {
  if (spec.dynamic() && !spec.meta.empty()) return spec.meta;
  return InferShapes(graph, spec.inputs);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JitCompiler>> JitCompiler::Create(
    const Options& options) {
  if (options.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("JitCompiler: num_threads is ", options.num_threads,
                     "; expected 0 (the global pool) or more"));
  }
  // The global pool is never destroyed: share it without ownership.
  std::shared_ptr<ThreadPool> pool =
      options.num_threads == 0
          ? std::shared_ptr<ThreadPool>(&ThreadPool::Global(),
                                        [](ThreadPool*) {})
          : std::make_shared<ThreadPool>(options.num_threads);
  ASSIGN_OR_RETURN(std::unique_ptr<KernelCompiler> kernels,
                   KernelCompiler::Create(options.max_cached_kernels,
                                          options.compile_cache, pool));
  return std::unique_ptr<JitCompiler>(
      new JitCompiler(std::move(kernels), std::move(pool),
                      options.fail_instead_of_eager, options.kernel_backend));
}

absl::StatusOr<Plan> JitCompiler::PlanFor(const Graph& graph,
                                          const Specialization& spec) {
  ASSIGN_OR_RETURN(GraphMeta metas, MetasOf(graph, spec));
  return PlanGraph(graph, metas, ContiguousLayout(spec),
                   static_cast<int>(spec.symbols.size()), *backend_);
}

// Graphs the lowering does not take yet: control flow (a cond the
// specializer could not inline runs in the interpreter). Nodes computing
// sizes (aten.sym_size.int, integer arithmetic) are lowered from their
// values' expressions over the entry's symbols (SizeNodesReason).
std::optional<std::string> JitCompiler::EagerOnlyReason(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.target == kCondTarget) {
      return absl::StrCat("node '", node.name, "' is a cond");
    }
  }
  return std::nullopt;
}

namespace {

// Why the lowering cannot take a node computing a size: its value is not an
// expression over the entry's `num_symbols` symbols.
std::optional<std::string> SizeNodesReason(const Graph& graph,
                                           const GraphMeta& metas,
                                           int num_symbols) {
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = graph.node(static_cast<int>(i));
    if (node.op == nullptr || !node.op->schema.returns_int) continue;
    const bool known = i < metas.size() && metas[i].size() == 1 &&
                       metas[i][0].sym_value.has_value();
    bool in_range = known;
    if (known) {
      for (int symbol : metas[i][0].sym_value->expr().Symbols()) {
        in_range = in_range && symbol < num_symbols;
      }
    }
    if (!in_range) {
      return absl::StrCat("node '", node.name, "' (", node.target,
                          ") computes a size that is not an expression over "
                          "the entry's symbols");
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<JitCompiler::RewrittenGraph> JitCompiler::RewriteForHost(
    std::shared_ptr<const Graph> graph, const Specialization& spec) const {
  RewrittenGraph out;
  out.graph = std::move(graph);
  if (!backend_->host_code()) return out;
  // Inference batch norms after convolutions fold into their constants
  // (host plans: a device's would copy the folded constants to it too).
  absl::StatusOr<FoldedGraph> folded = FoldBatchNorms(out.graph, pool_.get());
  if (folded.ok() && folded->folded > 0) {
    out.graph = std::move(folded->graph);
    if (spec.dynamic() && !spec.meta.empty()) {
      // The entry's symbolic metadata, node by node of the folded graph.
      Specialization remapped = spec;
      remapped.meta.clear();
      for (size_t i = 0; i < folded->source_node.size(); ++i) {
        const int from = folded->source_node[i];
        remapped.meta.push_back(from >= 0
                                    ? spec.meta[from]
                                    : std::vector<TensorMeta>{TensorMeta::Of(
                                          out.graph->node(i).constant)});
      }
      out.spec = std::move(remapped);
    }
  } else if (!folded.ok()) {
    Log(LogTopic::kWarnings,
        absl::StrCat("jit: graph '", out.graph->name(),
                     "': batch norms not folded: ", folded.status().message()));
  }
  // Attention chains become one scaled_dot_product_attention
  // (jit/attention_fusion.h): static entries, which run it as one attention
  // step. GJ_FUSE_ATTENTION=0 leaves them as written.
  const Specialization& specialized = out.SpecOr(spec);
  if (!specialized.dynamic() && AttentionFusionEnabled() &&
      HasTarget(*out.graph, "aten._softmax.default")) {
    absl::StatusOr<GraphMeta> before = MetasOf(*out.graph, specialized);
    if (!before.ok()) return out;  // the caller reports the shapes' error
    absl::StatusOr<FusedAttention> fused = FuseAttention(out.graph, *before);
    if (fused.ok() && fused->fused > 0) {
      absl::StatusOr<GraphMeta> after = MetasOf(*fused->graph, specialized);
      if (after.ok()) {
        out.graph = std::move(fused->graph);
        out.metas = *std::move(after);
        return out;
      }
    } else if (!fused.ok()) {
      Log(LogTopic::kWarnings,
          absl::StrCat("jit: graph '", out.graph->name(),
                       "': attention not fused: ", fused.status().message()));
    }
    out.metas = *std::move(before);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Executable>> JitCompiler::Compile(
    std::shared_ptr<const Graph> graph, const Specialization& spec) {
  if (std::optional<std::string> why = EagerOnlyReason(*graph)) {
    if (LogEnabled(LogTopic::kCodegen)) {
      Log(LogTopic::kCodegen, absl::StrCat("jit: graph '", graph->name(),
                                           "' runs the eager plan: ", *why));
    }
    return EagerCompiler().Compile(std::move(graph), spec);
  }
  ASSIGN_OR_RETURN(RewrittenGraph rewritten,
                   RewriteForHost(std::move(graph), spec));
  graph = rewritten.graph;
  const Specialization* specialized = &rewritten.SpecOr(spec);
  // Shapes the graph rejects are the caller's error.
  GraphMeta metas;
  if (rewritten.metas.has_value()) {
    metas = *std::move(rewritten.metas);
  } else {
    ASSIGN_OR_RETURN(metas, MetasOf(*graph, *specialized));
  }
  Layout layout = ExampleLayout(*specialized);
  const int num_symbols = static_cast<int>(specialized->symbols.size());
  if (std::optional<std::string> why =
          SizeNodesReason(*graph, metas, num_symbols)) {
    if (LogEnabled(LogTopic::kCodegen)) {
      Log(LogTopic::kCodegen, absl::StrCat("jit: graph '", graph->name(),
                                           "' runs the eager plan: ", *why));
    }
    return EagerCompiler().Compile(std::move(graph), *specialized);
  }
  // The backend may specialize itself for the entry (a CUDA device's
  // renders a dynamic entry's index math in 32 bits under size bounds, which
  // the entry then guards): the program compiles through what it returns.
  absl::StatusOr<Plan> plan =
      PlanGraph(*graph, metas, layout, num_symbols, *backend_);
  absl::StatusOr<EntryBackend> entry =
      plan.ok() ? backend_->ForEntry(backend_, *graph, *specialized, *plan)
                : absl::StatusOr<EntryBackend>(plan.status());
  absl::StatusOr<std::unique_ptr<ProgramRunner>> program =
      entry.ok()
          ? BuildProgram(graph, metas, *plan, *entry->backend, pool_,
                         num_symbols)
          : absl::StatusOr<std::unique_ptr<ProgramRunner>>(entry.status());
  // A kernel compile forbidden by the ASSERT_COMPILE switch is the call's
  // error: the eager plan would hide exactly the compile it asserts on.
  if (!program.ok() && IsKernelCacheMissError(program.status())) {
    return program.status();
  }
  if (!program.ok()) {
    if (strict_) {
      return absl::Status(program.status().code(),
                          absl::StrCat("jit: graph '", graph->name(),
                                       "': ", program.status().message()));
    }
    // A JIT failure must not fail the call: run the eager plan (the dynamic
    // one for a dynamic entry) instead.
    Log(LogTopic::kWarnings,
        absl::StrCat("jit: graph '", graph->name(),
                     "' runs eagerly: ", program.status().ToString()));
    return EagerCompiler().Compile(std::move(graph), *specialized);
  }
  return std::make_unique<JitExecutable>(std::move(graph), std::move(metas),
                                         *specialized, pool_, std::move(layout),
                                         *std::move(program), *std::move(plan),
                                         *std::move(entry), *live_);
}

absl::StatusOr<std::unique_ptr<Executable>> JitCompiler::Fallback(
    std::shared_ptr<const Graph> graph) {
  return EagerCompiler().Fallback(std::move(graph));
}

}  // namespace guardjit
