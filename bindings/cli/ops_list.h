#ifndef GUARDJIT_BINDINGS_CLI_OPS_LIST_H_
#define GUARDJIT_BINDINGS_CLI_OPS_LIST_H_

// `guardjit ops [--json]`: every op the library knows and what runs it
// (gj_list_ops), as a table or as the library's JSON.

#include <string>
#include <vector>

namespace guardjit_cli {

// `args` follow "ops". Returns the process exit status.
int OpsList(const std::vector<std::string>& args);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_OPS_LIST_H_
