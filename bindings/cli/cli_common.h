#ifndef GUARDJIT_BINDINGS_CLI_CLI_COMMON_H_
#define GUARDJIT_BINDINGS_CLI_CLI_COMMON_H_

// What every subcommand shares: exit statuses, error printing, the handles a
// command holds and the mapping of --input specs onto the graph's inputs.

#include <map>
#include <string>
#include <vector>

#include "bindings/cli/input_spec.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

// "GJ_INVALID_ARGUMENT".
const char* CodeName(gj_error_code code);

// Prints `message` with a pointer to --help; returns kExitUsage.
int UsageError(const std::string& message);

// Prints and frees `error`; true if there was one.
bool Failed(gj_error* error);

struct Handles {
  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    gj_function_destroy(function);
    gj_graph_destroy(graph);
    gj_context_destroy(context);
  }
  gj_context* context = nullptr;
  gj_graph* graph = nullptr;
  gj_function* function = nullptr;
};

// Parses a base-10 integer of at least `min`.
bool ParseCount(const std::string& text, long min, long* value);

// The specs in the graph's input order. False, with `*error` naming them,
// when an input has no spec or a spec names no input.
bool InputsInOrder(const gj_graph* graph,
                   const std::map<std::string, InputSpec>& inputs,
                   std::vector<const InputSpec*>* specs, std::string* error);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_CLI_COMMON_H_
