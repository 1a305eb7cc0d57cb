#include "capi/context.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "capi/error.h"
#include "capi/options.h"
#include "capi/raw_enum.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"
#include "jit/jit_compiler.h"
#include "runtime/eager_compiler.h"

extern "C" {

void gj_context_options_init(gj_context_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_context_options);
  options->num_threads = 0;
  options->backend = GJ_BACKEND_DEFAULT;
  options->max_cached_kernels =
      guardjit::KernelCompiler::kDefaultMaxCachedKernels;
}

gj_error* gj_context_create(const gj_context_options* options,
                            gj_context** out_context) {
  using guardjit::capi::NullArgument;
  if (out_context != nullptr) *out_context = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (out_context == nullptr)
      return NullArgument("gj_context_create", "out_context");
    gj_context_options opts;
    gj_context_options_init(&opts);
    if (options != nullptr) {
      RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
          options->struct_size, "gj_context_create", "options",
          "gj_context_options_init"));
      GJ_READ_OPTION(opts, options, num_threads);
      GJ_READ_OPTION(opts, options, backend);
      GJ_READ_OPTION(opts, options, max_cached_kernels);
    }
    if (opts.max_cached_kernels < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gj_context_create: options->max_cached_kernels is ",
          opts.max_cached_kernels, "; expected 0 (no cache) or more"));
    }
    if (opts.num_threads < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("gj_context_create: options->num_threads is ",
                       opts.num_threads, "; expected 0 (all cores) or more"));
    }
    auto context = std::make_unique<gj_context>();
    switch (guardjit::capi::RawEnum(opts.backend)) {
      case GJ_BACKEND_EAGER:
        context->compiler = std::make_shared<guardjit::EagerCompiler>();
        break;
      case GJ_BACKEND_DEFAULT:
      case GJ_BACKEND_CPU_JIT: {
        guardjit::JitCompiler::Options jit_options;
        jit_options.num_threads = opts.num_threads;
        jit_options.max_cached_kernels = opts.max_cached_kernels;
        ASSIGN_OR_RETURN(context->compiler,
                         guardjit::JitCompiler::Create(jit_options));
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "gj_context_create: options->backend is ",
            guardjit::capi::RawEnum(opts.backend), "; expected a gj_backend"));
    }
    *out_context = context.release();
    return absl::OkStatus();
  });
}

void gj_context_destroy(gj_context* context) { delete context; }

}  // extern "C"
