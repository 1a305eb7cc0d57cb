#include "capi/context.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "capi/error.h"
#include "capi/options.h"
#include "capi/raw_enum.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"
#include "jit/cuda/cuda_backend.h"
#include "jit/device_compiler.h"
#include "jit/jit_compiler.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/eager_compiler.h"

extern "C" {

// The defaults of every field this library knows; gj_context_options_init_v and
// the legacy gj_context_options_init symbol (legacy_init.cc) copy what fits.
static void ContextOptionsDefaults(gj_context_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_context_options);
  options->num_threads = 0;
  options->backend = GJ_BACKEND_DEFAULT;
  options->max_cached_kernels =
      guardjit::KernelCompiler::kDefaultMaxCachedKernels;
  options->max_cached_bytes =
      guardjit::CachingHostAllocator::kDefaultMaxCachedBytes;
  options->cache_dir = nullptr;
  options->max_cache_bytes = guardjit::DiskCache::kDefaultMaxBytes;
  options->cache_key = nullptr;
  options->remote_cache = nullptr;
}

void gj_context_options_init_v(gj_context_options* options,
                               size_t struct_size) {
  guardjit::capi::InitSized(options, struct_size, &ContextOptionsDefaults);
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
      GJ_READ_OPTION(opts, options, max_cached_bytes);
      GJ_READ_OPTION(opts, options, cache_dir);
      GJ_READ_OPTION(opts, options, max_cache_bytes);
      GJ_READ_OPTION(opts, options, cache_key);
      GJ_READ_OPTION(opts, options, remote_cache);
    }
    if (opts.max_cache_bytes < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gj_context_create: options->max_cache_bytes is ",
          opts.max_cache_bytes, "; expected 0 (unbounded) or more"));
    }
    if (opts.max_cached_bytes < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gj_context_create: options->max_cached_bytes is ",
          opts.max_cached_bytes, "; expected 0 (no cache) or more"));
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
    // NULL: the environment's; "": none.
    const guardjit::CompileCacheOptions cache =
        guardjit::CompileCacheOptions::Of(opts.cache_dir, opts.cache_key,
                                          opts.max_cache_bytes,
                                          opts.remote_cache);
    absl::StatusOr<std::shared_ptr<guardjit::CompileCache>> compile_cache =
        guardjit::CompileCache::Create(cache);
    if (!compile_cache.ok()) {
      // A bad URL names the remote cache, anything else the directory.
      const bool remote = absl::IsInvalidArgument(compile_cache.status());
      return absl::Status(
          compile_cache.status().code(),
          absl::StrCat(
              "gj_context_create: options->",
              remote ? "remote_cache" : "cache_dir",
              remote
                  ? (opts.remote_cache == nullptr ? " (GJ_REMOTE_CACHE)" : "")
                  : (opts.cache_dir == nullptr ? " (GJ_CACHE_DIR)" : ""),
              ": ", compile_cache.status().message()));
    }
    context->compile_cache = *std::move(compile_cache);
    context->allocator =
        std::make_shared<guardjit::CachingHostAllocator>(opts.max_cached_bytes);
    switch (guardjit::capi::RawEnum(opts.backend)) {
      case GJ_BACKEND_EAGER:
        context->compiler = std::make_shared<guardjit::EagerCompiler>();
        break;
      case GJ_BACKEND_DEFAULT:
      case GJ_BACKEND_CPU_JIT: {
        guardjit::JitCompiler::Options jit_options;
        jit_options.num_threads = opts.num_threads;
        jit_options.max_cached_kernels = opts.max_cached_kernels;
        jit_options.compile_cache = context->compile_cache;
        ASSIGN_OR_RETURN(context->compiler,
                         guardjit::JitCompiler::Create(jit_options));
        break;
      }
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "gj_context_create: options->backend is ",
            guardjit::capi::RawEnum(opts.backend), "; expected a gj_backend"));
    }
    const bool eager =
        guardjit::capi::RawEnum(opts.backend) == GJ_BACKEND_EAGER;
    context->device_compiler = std::make_shared<guardjit::DeviceCompiler>(
        context->compiler,
        [eager, compile_cache = context->compile_cache](guardjit::Device device)
            -> absl::StatusOr<std::shared_ptr<guardjit::Compiler>> {
          if (eager) return std::make_shared<guardjit::EagerCompiler>();
          guardjit::CudaKernelBackend::Options cuda;
          cuda.device = device.index;
          cuda.compile_cache = compile_cache;
          ASSIGN_OR_RETURN(std::shared_ptr<guardjit::CudaKernelBackend> backend,
                           guardjit::CudaKernelBackend::Create(cuda));
          guardjit::JitCompiler::Options jit_options;
          jit_options.kernel_backend = std::move(backend);
          ASSIGN_OR_RETURN(std::unique_ptr<guardjit::JitCompiler> jit,
                           guardjit::JitCompiler::Create(jit_options));
          return std::shared_ptr<guardjit::Compiler>(std::move(jit));
        });
    *out_context = context.release();
    return absl::OkStatus();
  });
}

void gj_context_destroy(gj_context* context) { delete context; }

// The defaults of every field this library knows; gj_memory_stats_init_v and
// the legacy gj_memory_stats_init symbol (legacy_init.cc) copy what fits.
static void MemoryStatsDefaults(gj_memory_stats* stats) {
  if (stats == nullptr) return;
  *stats = gj_memory_stats{};
  stats->struct_size = sizeof(gj_memory_stats);
}

void gj_memory_stats_init_v(gj_memory_stats* stats, size_t struct_size) {
  guardjit::capi::InitSized(stats, struct_size, &MemoryStatsDefaults);
}

}  // extern "C"

namespace guardjit::capi {
namespace {

// The caching allocator of a CUDA `device` named in `fn`'s messages.
absl::StatusOr<CudaCachingAllocator*> CudaPool(DLDevice device,
                                               absl::string_view fn) {
  if (device.device_type != kDLCUDA) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": device type ", static_cast<int>(device.device_type),
                     " is neither kDLCPU (1) nor kDLCUDA (2)"));
  }
  if (device.device_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": device id ", device.device_id, " is negative"));
  }
  absl::StatusOr<CudaCachingAllocator*> pool =
      CudaCachingAllocator::ForDevice(device.device_id);
  if (!pool.ok()) {
    return absl::Status(pool.status().code(),
                        absl::StrCat(fn, ": CUDA device ", device.device_id,
                                     ": ", pool.status().message()));
  }
  return pool;
}

// Fills `stats` for `device` (struct_size checked by the caller).
absl::Status DeviceMemoryStats(const gj_context& context, DLDevice device,
                               absl::string_view fn, gj_memory_stats* stats) {
  gj_memory_stats full;
  gj_memory_stats_init(&full);
  if (device.device_type == kDLCPU) {
    if (device.device_id != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          fn, ": device {kDLCPU, ", device.device_id, "}: the host is 0"));
    }
    const CachingHostAllocator::Stats s = context.allocator->stats();
    full.bytes_in_use = s.bytes_in_use;
    full.bytes_cached = s.bytes_cached;
    full.peak_bytes_in_use = s.peak_bytes_in_use;
    full.system_allocations = s.system_allocations;
    full.cache_hits = s.cache_hits;
    if (auto* jit = dynamic_cast<JitCompiler*>(context.compiler.get())) {
      full.compiled_modules = jit->kernels().live_modules();
      full.cached_kernels = jit->kernels().cached_kernels();
      full.packed_weight_bytes = jit->live_programs().PackedBytes();
    }
  } else {
    ASSIGN_OR_RETURN(CudaCachingAllocator * pool, CudaPool(device, fn));
    const CudaCachingAllocator::Stats s = pool->stats();
    full.bytes_in_use = s.bytes_in_use;
    full.bytes_cached = s.bytes_cached;
    full.peak_bytes_in_use = s.peak_bytes_in_use;
    full.system_allocations = s.device_allocations;
    full.cache_hits = s.cache_hits;
  }
  // An older host's struct is shorter: write only what it has.
  const size_t size = std::min(stats->struct_size, sizeof(full));
  full.struct_size = stats->struct_size;
  std::memcpy(stats, &full, size);
  return absl::OkStatus();
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

gj_error* gj_context_get_memory_stats(const gj_context* context,
                                      gj_memory_stats* stats) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_context_get_memory_stats";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (stats == nullptr) return NullArgument(kFn, "stats");
    if (context == nullptr) return NullArgument(kFn, "context");
    RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
        stats->struct_size, kFn, "stats", "gj_memory_stats_init"));
    return guardjit::capi::DeviceMemoryStats(*context, {kDLCPU, 0}, kFn, stats);
  });
}

gj_error* gj_context_get_device_memory_stats(const gj_context* context,
                                             DLDevice device,
                                             gj_memory_stats* stats) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_context_get_device_memory_stats";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (stats == nullptr) return NullArgument(kFn, "stats");
    if (context == nullptr) return NullArgument(kFn, "context");
    RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
        stats->struct_size, kFn, "stats", "gj_memory_stats_init"));
    return guardjit::capi::DeviceMemoryStats(*context, device, kFn, stats);
  });
}

gj_error* gj_context_release_cached_memory(gj_context* context) {
  if (context == nullptr) {
    return guardjit::capi::ToError(guardjit::capi::NullArgument(
        "gj_context_release_cached_memory", "context"));
  }
  context->allocator->ReleaseCached();
  return nullptr;
}

gj_error* gj_context_release_cached_device_memory(gj_context* context,
                                                  DLDevice device) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_context_release_cached_device_memory";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (context == nullptr) return NullArgument(kFn, "context");
    if (device.device_type == kDLCPU && device.device_id == 0) {
      context->allocator->ReleaseCached();
      return absl::OkStatus();
    }
    if (device.device_type == kDLCPU) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": device {kDLCPU, ", device.device_id, "}: the host is 0"));
    }
    ASSIGN_OR_RETURN(guardjit::CudaCachingAllocator * pool,
                     guardjit::capi::CudaPool(device, kFn));
    pool->ReleaseCached();
    return absl::OkStatus();
  });
}

}  // extern "C"
