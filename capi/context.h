#ifndef GUARDJIT_CAPI_CONTEXT_H_
#define GUARDJIT_CAPI_CONTEXT_H_

#include <memory>

#include "core/compiler.h"
#include "runtime/caching_host_allocator.h"

// Settings shared by the graphs and functions made from it. Functions share
// the context's compiler and host allocator (and keep them alive); the JIT
// compiler holds the thread pool that options->num_threads chose.
struct gj_context {
  std::shared_ptr<guardjit::Compiler> compiler;
  std::shared_ptr<guardjit::CachingHostAllocator> allocator;
};

#endif  // GUARDJIT_CAPI_CONTEXT_H_
