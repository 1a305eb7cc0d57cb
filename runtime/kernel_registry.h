#ifndef GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_
#define GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/bound_args.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"

namespace guardjit {

using KernelArgs = BoundArgs<Tensor>;
// A reference CPU kernel. `out` is what the op's shape/dtype rule inferred;
// the kernel allocates its results to match (or returns views of its inputs)
// and must accept any strides and storage offsets.
using KernelFn = std::function<absl::StatusOr<std::vector<Tensor>>(
    const KernelArgs& args, absl::Span<const TensorMeta> out)>;

class KernelRegistry {
 public:
  // Every built-in kernel (runtime/kernels/). Read-only after first use.
  static const KernelRegistry& Global();

  absl::Status Register(absl::string_view target, KernelFn fn);
  // nullptr when no kernel is registered for `target`.
  const KernelFn* Find(absl::string_view target) const;

  // Marks registered kernels that write their outputs into the caller's
  // destinations (KernelArgs::destination) when given ones they can write:
  // such a kernel returns the destination itself as that output, and fails
  // only before its first write. Eager plans give destinations only to them.
  absl::Status AllowDestinations(absl::Span<const absl::string_view> targets);
  bool writes_destinations(absl::string_view target) const {
    return writes_destinations_.contains(target);
  }
  std::vector<std::string> Targets() const;

 private:
  absl::flat_hash_map<std::string, KernelFn> kernels_;
  absl::flat_hash_set<std::string> writes_destinations_;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_
