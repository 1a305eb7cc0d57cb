#ifndef GUARDJIT_CORE_RECOMPILE_POLICY_H_
#define GUARDJIT_CORE_RECOMPILE_POLICY_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/call_signature.h"
#include "core/function_options.h"
#include "core/symbolic_inputs.h"

namespace guardjit {

// Decides, on a miss, whether to compile another entry and which dims it
// makes symbolic: TorchDynamo's recompile_limit and automatic dynamic. Past
// the limit the function is "run-only": existing entries still serve and
// other calls run eager, with one warning that names the function and the
// last reason. Not thread-safe: the Function calls it under its compile lock.
class RecompilePolicy {
 public:
  // `input_names` name the graph's inputs in messages and logs.
  RecompilePolicy(const FunctionOptions& options,
                  std::vector<std::string> input_names);

  // Records a miss with `reason` ("first call" when no entry existed).
  // Returns true if the caller should compile; false means run eager, and
  // `warning` is set the first time that happens.
  bool OnMiss(int num_entries, const std::string& reason,
              std::optional<std::string>& warning,
              const std::string& function_name);

  // The dims to make symbolic on the compile `call` missed into: the
  // mark_dynamic dims, every dim in kDynamic mode, and in kAuto mode every
  // dim whose size differed from the first compile's on some miss since
  // (it stays symbolic, logged under GJ_LOGS=recompiles when it turns).
  // INVALID_ARGUMENT when mark_dynamic names a dim the input lacks.
  absl::StatusOr<std::vector<DynamicDim>> DynamicDims(
      const CallSignature& call);

  bool run_only() const { return run_only_; }
  const std::vector<std::string>& recompile_reasons() const { return reasons_; }
  int limit() const { return limit_; }

 private:
  int limit_;
  DynamicMode mode_;
  std::vector<DynamicDim> mark_dynamic_;
  std::vector<std::string> input_names_;
  bool run_only_ = false;
  std::vector<std::string> reasons_;
  // Automatic dynamic: the first compile's sizes and the (input, dim)s that
  // changed since.
  std::vector<std::vector<int64_t>> first_sizes_;
  absl::flat_hash_set<std::pair<int, int>> auto_dynamic_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_RECOMPILE_POLICY_H_
