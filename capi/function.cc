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

namespace {

InputView ViewOf(const Tensor& input, size_t i, const CallState& state) {
  return InputView::Of(
      input, state.requires_grad != nullptr && state.requires_grad[i] != 0);
}

AmbientState AmbientOf(const CallState& state) {
  AmbientState ambient;
  ambient.grad_mode = state.grad_mode;
  ambient.deterministic_algorithms = state.deterministic;
  return ambient;
}

}  // namespace

absl::Status PrecompileFunction(const gj_function& function,
                                absl::Span<const Tensor> inputs,
                                const CallState& state) {
  std::vector<InputView> views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    views.push_back(ViewOf(inputs[i], i, state));
  }
  return function.impl->Precompile(CallSignature{views, AmbientOf(state)});
}

absl::StatusOr<std::vector<Tensor>> RunFunction(
    const gj_function& function, absl::Span<const Tensor> inputs,
    const CallState& state, absl::Span<const Tensor* const> destinations) {
  std::vector<Tensor> results(function.impl->graph().num_outputs());
  RETURN_IF_ERROR(RunFunctionInto(function, inputs, state, destinations,
                                  absl::MakeSpan(results)));
  return results;
}

absl::Status RunFunctionInto(const gj_function& function,
                             absl::Span<const Tensor> inputs,
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
    views[i] = ViewOf(inputs[i], i, state);
  }
  RunContext ctx;
  ctx.destinations = destinations;
  ctx.cancel = state.cancel;
  ctx.deadline = state.deadline;
  ctx.allocator = function.allocator;
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
    ctx.cuda_graphs = function.impl->cuda_graph_policy();
  }
  return function.impl->Call(
      inputs,
      CallSignature{absl::MakeConstSpan(views, inputs.size()),
                    AmbientOf(state)},
      ctx, results);
}

namespace {

// The C struct as core's options; `compile_async` says whether the function
// compiles on the context's queue (the caller attaches it).
absl::StatusOr<guardjit::FunctionOptions> ReadOptions(
    const gj_function_options* options, bool* compile_async) {
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
  guardjit::FunctionOptions result;
  if (opts.name != nullptr) result.name = opts.name;
  if (opts.recompile_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": options->recompile_limit is ",
                     opts.recompile_limit, "; expected 0 or more"));
  }
  result.recompile_limit = opts.recompile_limit;
  switch (RawEnum(opts.dynamic)) {
    case GJ_DYNAMIC_AUTO:
      result.dynamic = DynamicMode::kAuto;
      break;
    case GJ_DYNAMIC_STATIC:
      result.dynamic = DynamicMode::kStatic;
      break;
    case GJ_DYNAMIC_DYNAMIC:
      result.dynamic = DynamicMode::kDynamic;
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
    result.mark_dynamic.push_back({d.input, d.dim, d.min, d.max});
  }
  switch (RawEnum(opts.mode)) {
    case GJ_MODE_DEFAULT:
      result.mode = FunctionMode::kDefault;
      break;
    case GJ_MODE_REDUCE_OVERHEAD:
      result.mode = FunctionMode::kReduceOverhead;
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
  result.max_graphs_per_entry = opts.max_graphs_per_entry == 0
                                    ? kDefaultMaxGraphsPerEntry
                                    : opts.max_graphs_per_entry;
  result.fullgraph = opts.fullgraph != 0;
  if (RawEnum(opts.compile) != GJ_COMPILE_SYNC &&
      RawEnum(opts.compile) != GJ_COMPILE_ASYNC) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": options->compile is ", RawEnum(opts.compile),
                     "; expected a gj_compile_mode"));
  }
  *compile_async = opts.compile == GJ_COMPILE_ASYNC;
  return result;
}

// Fails at creation, not on the first call, when an op has no kernel.
absl::StatusOr<std::unique_ptr<guardjit::Function>> CreateFunction(
    std::shared_ptr<const Graph> graph, std::shared_ptr<Compiler> compiler,
    guardjit::FunctionOptions options) {
  RETURN_IF_ERROR(compiler->Fallback(graph).status());
  return guardjit::Function::Create(std::move(graph), std::move(compiler),
                                    std::move(options));
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

// The defaults of every field this library knows; gj_function_options_init_v
// and the legacy gj_function_options_init symbol (legacy_init.cc) copy what
// fits.
static void FunctionOptionsDefaults(gj_function_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_function_options);
  options->name = nullptr;
  options->recompile_limit = guardjit::kDefaultRecompileLimit;
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
  guardjit::capi::InitSized(options, struct_size, &FunctionOptionsDefaults);
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
    bool compile_async = false;
    ASSIGN_OR_RETURN(guardjit::FunctionOptions opts,
                     guardjit::capi::ReadOptions(options, &compile_async));
    if (compile_async) opts.compile_queue = CompileQueueOf(context);
    auto function = guardjit::capi::CreateFunction(
        graph->graph, context->device_compiler, std::move(opts));
    if (!function.ok()) {
      return absl::Status(function.status().code(),
                          absl::StrCat(kFn, ": ", function.status().message()));
    }
    *out_function = new gj_function{*std::move(function), context->allocator};
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
