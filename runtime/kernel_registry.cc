#include "runtime/kernel_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {

const KernelRegistry& KernelRegistry::Global() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status s = RegisterAllKernels(*r);
    if (!s.ok()) {
      std::fprintf(stderr, "guardjit: kernel registry: %s\n",
                   s.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

absl::Status KernelRegistry::Register(absl::string_view target, KernelFn fn) {
  auto [it, inserted] =
      kernels_.try_emplace(std::string(target), std::move(fn));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("kernel '", target, "' registered twice"));
  }
  return absl::OkStatus();
}

const KernelFn* KernelRegistry::Find(absl::string_view target) const {
  auto it = kernels_.find(target);
  return it == kernels_.end() ? nullptr : &it->second;
}

absl::Status KernelRegistry::AllowDestinations(
    absl::Span<const absl::string_view> targets) {
  for (absl::string_view target : targets) {
    if (!kernels_.contains(target)) {
      return absl::NotFoundError(
          absl::StrCat("kernel '", target, "' is not registered"));
    }
    writes_destinations_.insert(std::string(target));
  }
  return absl::OkStatus();
}

std::vector<std::string> KernelRegistry::Targets() const {
  std::vector<std::string> out;
  for (const auto& [name, fn] : kernels_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace guardjit
