#ifndef GUARDJIT_CAPI_CONTEXT_H_
#define GUARDJIT_CAPI_CONTEXT_H_

#include <cstdint>

// Process-wide settings shared by the graphs and functions made from it. The
// thread count is resolved at creation so later users see a fixed value.
struct gj_context {
  int32_t num_threads = 1;
};

#endif  // GUARDJIT_CAPI_CONTEXT_H_
