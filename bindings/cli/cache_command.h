#ifndef GUARDJIT_BINDINGS_CLI_CACHE_COMMAND_H_
#define GUARDJIT_BINDINGS_CLI_CACHE_COMMAND_H_

#include <string>
#include <vector>

namespace guardjit_cli {

// guardjit cache stats|verify|clear [DIR] [--remove-bad]: a compile cache
// directory (DIR, else $GJ_CACHE_DIR) through gj_cache_dir_inspect and
// gj_cache_dir_clear. verify checks signatures under $GJ_CACHE_KEY when set
// and exits 1 when a record fails.
int CacheCommand(const std::vector<std::string>& args);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_CACHE_COMMAND_H_
