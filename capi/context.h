#ifndef GUARDJIT_CAPI_CONTEXT_H_
#define GUARDJIT_CAPI_CONTEXT_H_

#include <memory>
#include <mutex>

#include "core/compile_queue.h"
#include "core/compiler.h"
#include "runtime/caching_host_allocator.h"
#include "runtime/compile_cache/compile_cache.h"

// Settings shared by the graphs and functions made from it. Functions share
// the context's compiler and host allocator (and keep them alive); the JIT
// compiler holds the thread pool that options->num_threads chose.
struct gj_context {
  // The host compiler (JIT or eager), and what functions compile with: it,
  // or for entries on a CUDA device that device's compiler (made on the first
  // such entry: the JIT with the CUDA kernel backend).
  std::shared_ptr<guardjit::Compiler> compiler;
  std::shared_ptr<guardjit::Compiler> device_compiler;
  std::shared_ptr<guardjit::CachingHostAllocator> allocator;
  // The persistent compile cache (cache_dir, GJ_CACHE_DIR), or null; the
  // host JIT's kernels go through it.
  std::shared_ptr<guardjit::CompileCache> compile_cache;
  // The background thread of GJ_COMPILE_ASYNC functions, started by the
  // first one (CompileQueueOf); functions keep it alive.
  std::once_flag compile_queue_once;
  std::shared_ptr<guardjit::CompileQueue> compile_queue;
};

// The context's compile queue, started on first use. Thread-safe.
inline std::shared_ptr<guardjit::CompileQueue> CompileQueueOf(
    gj_context* context) {
  std::call_once(context->compile_queue_once, [context] {
    context->compile_queue = std::make_shared<guardjit::CompileQueue>(1);
  });
  return context->compile_queue;
}

#endif  // GUARDJIT_CAPI_CONTEXT_H_
