#ifndef GUARDJIT_CAPI_CONTEXT_H_
#define GUARDJIT_CAPI_CONTEXT_H_

#include <cstdint>
#include <memory>

#include "core/compiler.h"

// Process-wide settings shared by the graphs and functions made from it. The
// thread count is resolved at creation so later users see a fixed value.
// Functions share the context's compiler (and keep it alive).
struct gj_context {
  int32_t num_threads = 1;
  std::shared_ptr<guardjit::Compiler> compiler;
};

#endif  // GUARDJIT_CAPI_CONTEXT_H_
