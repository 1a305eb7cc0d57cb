#include "runtime/program/step_profile.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace guardjit {
namespace {

const char* KindName(StepKind kind) {
  switch (kind) {
    case StepKind::kKernel:
      return "kernel";
    case StepKind::kGemm:
      return "gemm";
    case StepKind::kConv:
      return "conv";
    case StepKind::kEager:
      return "eager";
    case StepKind::kAttention:
      return "attention";
    case StepKind::kLayerNorm:
      return "layer_norm";
    case StepKind::kPool:
      return "pool";
  }
  return "step";
}

// "8.412 ms", or "41.3 us" below a millisecond.
std::string Ms(double ns) {
  return ns >= 1e6 ? absl::StrFormat("%.3f ms", ns * 1e-6)
                   : absl::StrFormat("%.1f us", ns * 1e-3);
}

}  // namespace

bool StepProfilingEnabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("GJ_PROFILE");
    return env != nullptr && env[0] != '\0' && std::string(env) != "0";
  }();
  return enabled;
}

int StepProfileTopSteps() {
  static const int top = [] {
    const char* env = std::getenv("GJ_PROFILE");
    int n = 0;
    return env != nullptr && absl::SimpleAtoi(env, &n) && n >= 2 ? n : 12;
  }();
  return top;
}

StepProfile::StepProfile(size_t num_steps)
    : num_steps_(num_steps), step_ns_(new std::atomic<int64_t>[num_steps]) {
  for (size_t i = 0; i < num_steps; ++i) step_ns_[i].store(0);
}

void StepProfile::AddCall(const int64_t* step_ns, int64_t call_ns) {
  for (size_t i = 0; i < num_steps_; ++i) {
    step_ns_[i].fetch_add(step_ns[i], std::memory_order_relaxed);
  }
  call_ns_.fetch_add(call_ns, std::memory_order_relaxed);
  calls_.fetch_add(1, std::memory_order_relaxed);
}

std::string StepProfile::Describe(const Program& program, int top) const {
  const int64_t calls = calls_.load();
  if (calls == 0 || num_steps_ != program.steps.size()) return "";
  std::vector<double> mean(num_steps_);
  double steps = 0;
  for (size_t i = 0; i < num_steps_; ++i) {
    mean[i] = static_cast<double>(step_ns_[i].load()) / calls;
    steps += mean[i];
  }
  const double call = static_cast<double>(call_ns_.load()) / calls;
  const double share = call > 0 ? 100 * steps / call : 0;
  std::string text =
      absl::StrCat(calls, " calls, ", Ms(call), " per call: steps ", Ms(steps),
                   absl::StrFormat(" (%.1f%%)", share), ", between steps ",
                   Ms(std::max(0.0, call - steps)));
  // Time per kind, then the slowest steps.
  double by_kind[5] = {0, 0, 0, 0, 0};
  int count[5] = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < num_steps_; ++i) {
    const int k = static_cast<int>(program.steps[i].kind);
    by_kind[k] += mean[i];
    ++count[k];
  }
  for (int k = 0; k < 5; ++k) {
    if (count[k] == 0) continue;
    absl::StrAppend(&text, "\n  ", count[k], " ",
                    KindName(static_cast<StepKind>(k)),
                    " steps: ", Ms(by_kind[k]));
  }
  std::vector<size_t> order(num_steps_);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return mean[a] > mean[b]; });
  const size_t shown = std::min(order.size(), static_cast<size_t>(top));
  for (size_t r = 0; r < shown; ++r) {
    const size_t i = order[r];
    const ProgramStep& step = program.steps[i];
    absl::StrAppend(
        &text, "\n  step ", i + 1, " (", KindName(step.kind),
        "): ", Ms(mean[i]),
        absl::StrFormat(" (%.1f%%) ", steps > 0 ? 100 * mean[i] / steps : 0),
        step.label);
  }
  return text;
}

}  // namespace guardjit
