#ifndef GUARDJIT_CORE_RECOMPILE_POLICY_H_
#define GUARDJIT_CORE_RECOMPILE_POLICY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/compile_queue.h"
#include "core/symbolic_inputs.h"

namespace guardjit {

enum class DynamicMode {
  kAuto,     // static first; dims whose size changed become symbolic
  kStatic,   // every size specialized
  kDynamic,  // every size symbolic from the first compile
};

struct FunctionOptions {
  std::string name;
  int recompile_limit = 8;
  DynamicMode dynamic = DynamicMode::kAuto;
  // torch._dynamo.mark_dynamic(input, dim, min, max): symbolic from the
  // first compile (ignored with kStatic); sizes outside [min, max] fail the
  // entry's guards.
  std::vector<DynamicDim> mark_dynamic;
  // torch.compile(fullgraph=True): a graph break is an error naming the node
  // and the reason instead of a split into segments.
  bool fullgraph = false;
  // GJ_COMPILE_ASYNC: a miss runs the eager fallback at once and compiles
  // its entry on this queue (the context's); null: the missing call
  // compiles.
  std::shared_ptr<CompileQueue> compile_queue;
};

// Decides, on a miss, whether to compile another entry: TorchDynamo's
// recompile_limit. Past the limit the function is "run-only": existing
// entries still serve and other calls run eager, with one warning that names
// the function and the last reason. Not thread-safe: the Function calls it
// under its compile lock.
class RecompilePolicy {
 public:
  explicit RecompilePolicy(int limit) : limit_(limit) {}

  // Records a miss with `reason` ("first call" when no entry existed).
  // Returns true if the caller should compile; false means run eager, and
  // `warning` is set the first time that happens.
  bool OnMiss(int num_entries, const std::string& reason,
              std::optional<std::string>& warning,
              const std::string& function_name);

  bool run_only() const { return run_only_; }
  const std::vector<std::string>& recompile_reasons() const { return reasons_; }
  int limit() const { return limit_; }

 private:
  int limit_;
  bool run_only_ = false;
  std::vector<std::string> reasons_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_RECOMPILE_POLICY_H_
