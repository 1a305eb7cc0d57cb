#ifndef GUARDJIT_CAPI_CONTEXT_H_
#define GUARDJIT_CAPI_CONTEXT_H_

#include <memory>

#include "core/compiler.h"

// Settings shared by the graphs and functions made from it. Functions share
// the context's compiler (and keep it alive); the JIT compiler holds the
// thread pool that options->num_threads chose.
struct gj_context {
  std::shared_ptr<guardjit::Compiler> compiler;
};

#endif  // GUARDJIT_CAPI_CONTEXT_H_
