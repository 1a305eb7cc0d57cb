#include "bindings/cli/cli_common.h"

#include <cstdio>
#include <cstdlib>

namespace guardjit_cli {

const char* CodeName(gj_error_code code) {
  static const char* const kNames[] = {"GJ_OK",
                                       "GJ_CANCELLED",
                                       "GJ_UNKNOWN",
                                       "GJ_INVALID_ARGUMENT",
                                       "GJ_DEADLINE_EXCEEDED",
                                       "GJ_NOT_FOUND",
                                       "GJ_ALREADY_EXISTS",
                                       "GJ_PERMISSION_DENIED",
                                       "GJ_RESOURCE_EXHAUSTED",
                                       "GJ_FAILED_PRECONDITION",
                                       "GJ_ABORTED",
                                       "GJ_OUT_OF_RANGE",
                                       "GJ_UNIMPLEMENTED",
                                       "GJ_INTERNAL",
                                       "GJ_UNAVAILABLE",
                                       "GJ_DATA_LOSS",
                                       "GJ_UNAUTHENTICATED"};
  const int c = static_cast<int>(code);
  return c >= 0 && c <= 16 ? kNames[c] : "GJ_UNKNOWN";
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "guardjit: %s\n(run 'guardjit --help' for usage)\n",
               message.c_str());
  return kExitUsage;
}

bool Failed(gj_error* error) {
  if (error == nullptr) return false;
  std::fprintf(stderr, "guardjit: error: %s: %s\n",
               CodeName(gj_error_get_code(error)), gj_error_message(error));
  gj_error_destroy(error);
  return true;
}

bool ParseCount(const std::string& text, long min, long* value) {
  char* end = nullptr;
  *value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && end == text.c_str() + text.size() && *value >= min;
}

bool InputsInOrder(const gj_graph* graph,
                   const std::map<std::string, InputSpec>& inputs,
                   std::vector<const InputSpec*>* specs, std::string* error) {
  const size_t num_inputs = gj_graph_num_inputs(graph);
  std::string missing;
  std::map<std::string, InputSpec> unused = inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    const std::string name = gj_graph_input_name(graph, i);
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      missing += (missing.empty() ? "" : ", ") + name;
      continue;
    }
    unused.erase(name);
    specs->push_back(&it->second);
  }
  if (!missing.empty()) {
    *error = "no --input for graph input(s): " + missing;
    return false;
  }
  if (!unused.empty()) {
    *error =
        "--input '" + unused.begin()->first + "' names no input of the graph";
    return false;
  }
  return true;
}

}  // namespace guardjit_cli
