#include "core/recompile_policy.h"

#include "absl/strings/str_cat.h"

namespace guardjit {

bool RecompilePolicy::OnMiss(int num_entries, const std::string& reason,
                             std::optional<std::string>& warning,
                             const std::string& function_name) {
  warning.reset();
  if (num_entries < limit_) {
    if (num_entries > 0) reasons_.push_back(reason);
    return true;
  }
  if (!run_only_) {
    run_only_ = true;
    warning = absl::StrCat(
        "function '", function_name, "' hit the recompile limit (", limit_,
        "); running existing entries and eager for the rest. last reason: ",
        reason);
  }
  return false;
}

}  // namespace guardjit
