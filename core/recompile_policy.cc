#include "core/recompile_policy.h"

#include "absl/strings/str_cat.h"
#include "core/logging.h"

namespace guardjit {

RecompilePolicy::RecompilePolicy(const FunctionOptions& options,
                                 std::vector<std::string> input_names)
    : limit_(options.recompile_limit),
      mode_(options.dynamic),
      mark_dynamic_(options.mark_dynamic),
      input_names_(std::move(input_names)) {}

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

absl::StatusOr<std::vector<DynamicDim>> RecompilePolicy::DynamicDims(
    const CallSignature& call) {
  std::vector<DynamicDim> out;
  if (mode_ == DynamicMode::kStatic) return out;
  for (const DynamicDim& d : mark_dynamic_) {
    if (d.dim >= call.inputs[d.input].rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("mark_dynamic names dim ", d.dim, " of input '",
                       input_names_[d.input], "', which has rank ",
                       call.inputs[d.input].rank));
    }
    out.push_back(d);
  }
  auto marked = [&](int i, int d) {
    for (const DynamicDim& m : out) {
      if (m.input == i && m.dim == d) return true;
    }
    return false;
  };
  if (mode_ == DynamicMode::kAuto) {
    // Automatic dynamic: a dim whose size differs from the first compile's
    // becomes (and stays) symbolic.
    if (first_sizes_.empty()) {
      for (const InputView& v : call.inputs) {
        first_sizes_.emplace_back(v.sizes, v.sizes + v.rank);
      }
    } else {
      for (size_t i = 0; i < call.inputs.size(); ++i) {
        const InputView& v = call.inputs[i];
        if (v.rank != static_cast<int>(first_sizes_[i].size())) continue;
        for (int d = 0; d < v.rank; ++d) {
          if (v.sizes[d] != first_sizes_[i][d] &&
              auto_dynamic_.insert({static_cast<int>(i), d}).second &&
              LogEnabled(LogTopic::kRecompiles)) {
            Log(LogTopic::kRecompiles,
                absl::StrCat("automatic dynamic ", input_names_[i], ".size()[",
                             d, "]: ", first_sizes_[i][d], " != ", v.sizes[d]));
          }
        }
      }
    }
  }
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    for (int d = 0; d < call.inputs[i].rank; ++d) {
      const bool dynamic = mode_ == DynamicMode::kDynamic ||
                           auto_dynamic_.contains({static_cast<int>(i), d});
      if (dynamic && !marked(static_cast<int>(i), d)) {
        out.push_back({static_cast<int>(i), d});
      }
    }
  }
  return out;
}

}  // namespace guardjit
