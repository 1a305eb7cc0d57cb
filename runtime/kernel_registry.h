#ifndef GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_
#define GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
  std::vector<std::string> Targets() const;

 private:
  absl::flat_hash_map<std::string, KernelFn> kernels_;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNEL_REGISTRY_H_
