#include "capi/function.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capi/context.h"
#include "capi/error.h"
#include "capi/graph.h"
#include "capi/options.h"
#include "capi/raw_enum.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"

namespace guardjit::capi {

Function::Function(std::shared_ptr<const Graph> graph,
                   std::unique_ptr<guardjit::Function> cache,
                   FunctionOptions options)
    : graph_(std::move(graph)),
      cache_(std::move(cache)),
      options_(std::move(options)) {
  if (options_.name.empty()) options_.name = graph_->name();
  cuda_graph_policy_.max_graphs_per_entry = options_.max_graphs_per_entry;
  cuda_graph_policy_.counters = &cuda_graph_counters_;
  for (const Node& node : graph_->nodes()) {
    if (node.kind == NodeKind::kConstant &&
        node.constant.storage() != nullptr) {
      constant_storage_.insert(node.constant.storage().get());
    }
  }
}

absl::StatusOr<std::unique_ptr<Function>> Function::Create(
    std::shared_ptr<const Graph> graph, std::shared_ptr<Compiler> compiler,
    FunctionOptions options, std::shared_ptr<Allocator> allocator) {
  // Fail at creation, not on the first call, when an op has no kernel.
  RETURN_IF_ERROR(compiler->Fallback(graph).status());
  guardjit::FunctionOptions core_options;
  core_options.name = options.name.empty() ? graph->name() : options.name;
  core_options.recompile_limit = options.recompile_limit;
  core_options.dynamic =
      options.dynamic == GJ_DYNAMIC_STATIC    ? DynamicMode::kStatic
      : options.dynamic == GJ_DYNAMIC_DYNAMIC ? DynamicMode::kDynamic
                                              : DynamicMode::kAuto;
  for (const gj_dynamic_dim& d : options.mark_dynamic) {
    core_options.mark_dynamic.push_back({d.input, d.dim, d.min, d.max});
  }
  core_options.fullgraph = options.fullgraph;
  core_options.compile_queue = options.compile_queue;
  ASSIGN_OR_RETURN(
      std::unique_ptr<guardjit::Function> cache,
      guardjit::Function::Create(graph, std::move(compiler), core_options));
  std::unique_ptr<Function> function(
      new Function(std::move(graph), std::move(cache), std::move(options)));
  function->allocator_ = std::move(allocator);
  return function;
}

absl::Status Function::Precompile(absl::Span<const Tensor> inputs,
                                  const CallState& state) {
  std::vector<InputView> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    views.push_back(InputView::Of(inputs[i], state.requires_grad != nullptr &&
                                                 state.requires_grad[i] != 0));
  }
  AmbientState ambient;
  ambient.grad_mode = state.grad_mode;
  ambient.deterministic_algorithms = state.deterministic;
  return cache_->Precompile(CallSignature{views, ambient});
}

absl::StatusOr<std::vector<Tensor>> Function::Run(
    absl::Span<const Tensor> inputs, const CallState& state,
    absl::Span<const Tensor* const> destinations) {
  std::vector<Tensor> results(graph_->num_outputs());
  RETURN_IF_ERROR(
      RunInto(inputs, state, destinations, absl::MakeSpan(results)));
  return results;
}

absl::Status Function::RunInto(absl::Span<const Tensor> inputs,
                               const CallState& state,
                               absl::Span<const Tensor* const> destinations,
                               absl::Span<Tensor> results) {
  // Views into the tensors' own size arrays: no allocation for small calls.
  constexpr size_t kStack = 8;
  InputView stack_views[kStack];
  std::vector<InputView> heap_views;
  InputView* views = stack_views;
  if (inputs.size() > kStack) {
    heap_views.resize(inputs.size());
    views = heap_views.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    views[i] = InputView::Of(inputs[i], state.requires_grad != nullptr &&
                                            state.requires_grad[i] != 0);
  }
  AmbientState ambient;
  ambient.grad_mode = state.grad_mode;
  ambient.deterministic_algorithms = state.deterministic;
  RunContext ctx;
  ctx.destinations = destinations;
  ctx.cancel = state.cancel;
  ctx.deadline = state.deadline;
  ctx.allocator = allocator_;
  std::optional<CudaContextScope> scope;
  if (!state.device.is_cpu()) {
    // Everything the call does on the device happens in its primary
    // context, with memory from its allocator, on the caller's stream.
    ASSIGN_OR_RETURN(const CudaDevice* device,
                     CudaDevice::Get(state.device.index));
    ASSIGN_OR_RETURN(CudaContextScope entered, device->MakeCurrent());
    scope.emplace(std::move(entered));
    ASSIGN_OR_RETURN(CudaCachingAllocator * pool,
                     CudaCachingAllocator::ForDevice(state.device.index));
    ctx.allocator = pool->OnStream(state.stream);
    ctx.stream = state.stream;
    ctx.synchronize = state.synchronize;
    if (options_.mode == GJ_MODE_REDUCE_OVERHEAD) {
      ctx.cuda_graphs = &cuda_graph_policy_;
    }
  }
  return cache_->CallInto(
      inputs, CallSignature{absl::MakeConstSpan(views, inputs.size()), ambient},
      ctx, results);
}

std::string Function::InputLabel(size_t index) const {
  return absl::StrCat("input ", index, " ('",
                      graph_->node(graph_->inputs()[index]).name, "')");
}

bool Function::AliasesConstant(const Tensor& tensor) const {
  return tensor.storage() != nullptr &&
         constant_storage_.contains(tensor.storage().get());
}

namespace {

absl::StatusOr<FunctionOptions> ReadOptions(
    const gj_function_options* options) {
  constexpr absl::string_view kFn = "gj_function_create";
  gj_function_options opts;
  gj_function_options_init(&opts);
  if (options != nullptr) {
    RETURN_IF_ERROR(CheckStructSize(options->struct_size, kFn, "options",
                                    "gj_function_options_init"));
    GJ_READ_OPTION(opts, options, name);
    GJ_READ_OPTION(opts, options, recompile_limit);
    GJ_READ_OPTION(opts, options, dynamic);
    GJ_READ_OPTION(opts, options, mark_dynamic);
    GJ_READ_OPTION(opts, options, num_mark_dynamic);
    GJ_READ_OPTION(opts, options, mode);
    GJ_READ_OPTION(opts, options, max_graphs_per_entry);
    GJ_READ_OPTION(opts, options, fullgraph);
    GJ_READ_OPTION(opts, options, compile);
    GJ_READ_OPTION(opts, options, mark_dynamic_stride);
  }
  FunctionOptions result;
  if (opts.name != nullptr) result.name = opts.name;
  if (opts.recompile_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": options->recompile_limit is ",
                     opts.recompile_limit, "; expected 0 or more"));
  }
  result.recompile_limit = opts.recompile_limit;
  switch (RawEnum(opts.dynamic)) {
    case GJ_DYNAMIC_AUTO:
    case GJ_DYNAMIC_STATIC:
    case GJ_DYNAMIC_DYNAMIC:
      result.dynamic = opts.dynamic;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": options->dynamic is ", RawEnum(opts.dynamic),
                       "; expected a gj_dynamic_mode"));
  }
  if (opts.num_mark_dynamic > 0 && opts.mark_dynamic == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": options->mark_dynamic is NULL but num_mark_dynamic is ",
        opts.num_mark_dynamic));
  }
  for (size_t i = 0; i < opts.num_mark_dynamic; ++i) {
    gj_dynamic_dim d;
    RETURN_IF_ERROR(ReadGrownElement(
        opts.mark_dynamic, i, opts.mark_dynamic_stride,
        absl::StrCat(kFn, ": options->mark_dynamic[", i, "]"), &d));
    result.mark_dynamic.push_back(d);
  }
  switch (RawEnum(opts.mode)) {
    case GJ_MODE_DEFAULT:
    case GJ_MODE_REDUCE_OVERHEAD:
      result.mode = opts.mode;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": options->mode is ", RawEnum(opts.mode),
                       "; expected a gj_function_mode"));
  }
  if (opts.max_graphs_per_entry < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": options->max_graphs_per_entry is ",
                     opts.max_graphs_per_entry, "; expected 0 or more"));
  }
  result.max_graphs_per_entry =
      opts.max_graphs_per_entry == 0 ? 8 : opts.max_graphs_per_entry;
  result.fullgraph = opts.fullgraph != 0;
  if (RawEnum(opts.compile) != GJ_COMPILE_SYNC &&
      RawEnum(opts.compile) != GJ_COMPILE_ASYNC) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": options->compile is ", RawEnum(opts.compile),
                     "; expected a gj_compile_mode"));
  }
  result.compile_async = opts.compile == GJ_COMPILE_ASYNC;
  return result;
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

void gj_function_options_init(gj_function_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_function_options);
  options->name = nullptr;
  options->recompile_limit = 8;
  options->dynamic = GJ_DYNAMIC_AUTO;
  options->mark_dynamic = nullptr;
  options->num_mark_dynamic = 0;
  options->mode = GJ_MODE_DEFAULT;
  options->max_graphs_per_entry = 0;
  options->fullgraph = 0;
  options->compile = GJ_COMPILE_SYNC;
  options->mark_dynamic_stride = 0;
}

void gj_function_options_init_v(gj_function_options* options,
                                size_t struct_size) {
  guardjit::capi::InitSized(options, struct_size, &gj_function_options_init);
}

gj_error* gj_function_create(gj_context* context, const gj_graph* graph,
                             const gj_function_options* options,
                             gj_function** out_function) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_function_create";
  if (out_function != nullptr) *out_function = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (out_function == nullptr) return NullArgument(kFn, "out_function");
    if (context == nullptr) return NullArgument(kFn, "context");
    if (graph == nullptr) return NullArgument(kFn, "graph");
    ASSIGN_OR_RETURN(guardjit::capi::FunctionOptions opts,
                     guardjit::capi::ReadOptions(options));
    if (opts.compile_async) opts.compile_queue = CompileQueueOf(context);
    auto function =
        guardjit::capi::Function::Create(graph->graph, context->device_compiler,
                                         std::move(opts), context->allocator);
    if (!function.ok()) {
      return absl::Status(function.status().code(),
                          absl::StrCat(kFn, ": ", function.status().message()));
    }
    *out_function = new gj_function{*std::move(function)};
    return absl::OkStatus();
  });
}

void gj_function_destroy(gj_function* function) { delete function; }

size_t gj_function_num_inputs(const gj_function* function) {
  return function == nullptr ? 0 : function->impl->graph().inputs().size();
}

size_t gj_function_num_outputs(const gj_function* function) {
  return function == nullptr ? 0 : function->impl->graph().num_outputs();
}

}  // extern "C"
