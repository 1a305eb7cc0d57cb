// Shared by the libFuzzer targets in this folder: one context per process
// (contexts own a thread pool and a compiler; hosts share one), and helpers
// that assert the C API's conventions on every result.
#ifndef GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_
#define GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_

#include <guardjit/guardjit.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gjfuzz {

// A broken promise of the header: print it and abort, which libFuzzer
// reports as a crash with the input that caused it.
[[noreturn]] inline void Fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "guardjit fuzz: %s %s\n", what, detail);
  std::abort();
}

// The context every input of this process uses: one thread, so runs are
// deterministic, and a small kernel cache, so memory stays flat across
// millions of distinct graphs. backend: GJ_BACKEND_*.
inline gj_context* Context(gj_backend backend = GJ_BACKEND_DEFAULT) {
  static gj_context* contexts[3] = {nullptr, nullptr, nullptr};
  int index = static_cast<int>(backend);
  if (index < 0 || index > 2) index = 0;
  if (contexts[index] == nullptr) {
    gj_context_options options;
    gj_context_options_init(&options);
    options.num_threads = 1;
    options.backend = backend;
    options.max_cached_kernels = 16;
    gj_error* error = gj_context_create(&options, &contexts[index]);
    if (error != nullptr) Fail("gj_context_create failed:", gj_error_message(error));
  }
  return contexts[index];
}

// Checks an error the API returned: a known code and a non-empty message.
// Returns true when `error` is an error (and destroys it).
inline bool Consume(gj_error* error) {
  if (error == nullptr) return false;
  const gj_error_code code = gj_error_get_code(error);
  if (code <= GJ_OK || code > GJ_UNAUTHENTICATED) Fail("error with code outside absl's");
  const char* message = gj_error_message(error);
  if (message == nullptr || message[0] == '\0') Fail("error without a message");
  // Messages are bounded (4 KiB plus a short tail saying what was cut).
  if (std::strlen(message) > 8192) Fail("error message longer than 8 KiB:", message);
  // INTERNAL and UNKNOWN mean the library caught something it did not
  // expect (an exception, a broken invariant): a bug on any input.
  if (code == GJ_INTERNAL || code == GJ_UNKNOWN) Fail("INTERNAL/UNKNOWN error:", message);
  gj_error_destroy(error);
  return true;
}

// Exercises what a loaded graph offers: its counts, names and tabular dump.
inline void InspectGraph(const gj_graph* graph) {
  const size_t inputs = gj_graph_num_inputs(graph);
  for (size_t i = 0; i < inputs; ++i) {
    if (gj_graph_input_name(graph, i) == nullptr) Fail("NULL name of an input in range");
  }
  if (gj_graph_input_name(graph, inputs) != nullptr) Fail("name of an input out of range");
  (void)gj_graph_num_outputs(graph);
  char* text = nullptr;
  if (!Consume(gj_graph_to_tabular(graph, &text))) {
    if (text == nullptr) Fail("gj_graph_to_tabular succeeded without text");
    gj_string_destroy(text);
  } else if (text != nullptr) {
    Fail("gj_graph_to_tabular wrote its output on error");
  }
}

}  // namespace gjfuzz

#endif  // GUARDJIT_TESTS_FUZZ_FUZZ_COMMON_H_
