// Shape rule of _assert_tensor_metadata, the check torch.export leaves where
// a program relies on a tensor's dtype or sizes. It returns nothing; the rule
// checks the metadata at specialization, where a symbolic size compared with
// the asserted one becomes a shape guard, so a cache entry's guards keep the
// check true; the eager interpreter's kernel checks again. Strides, device
// and layout are not checked: guardjit's graphs are device-agnostic and its
// kernels choose their own layouts.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::StatusOr<std::vector<TensorMeta>> AssertTensorMetadataMeta(
    const MetaArgs& args) {
  const TensorMeta a = args.tensor(0);
  if (std::optional<DType> dtype = args.optional_dtype(3);
      dtype.has_value() && *dtype != a.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'dtype': Tensor dtype mismatch! Expected: ",
                     DTypeName(*dtype), ", Got: ", DTypeName(a.dtype)));
  }
  if (!args.is_none(1)) {
    const std::vector<SymInt> size = args.sym_int_list(1);
    bool equal = size.size() == a.sizes.size();
    for (size_t d = 0; equal && d < size.size(); ++d) {
      equal = a.sizes[d] == size[d];
    }
    if (!equal) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument 'size': Tensor sizes mismatch! Expected: ",
                       ShapeToString(size), ", Got: ", ShapeToString(a.sizes)));
    }
  }
  return std::vector<TensorMeta>{};
}

}  // namespace

absl::Status RegisterAssertOps(OpRegistry& registry) {
  return registry.Register(
      "_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? "
      "stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? "
      "layout=None) -> ()",
      AssertTensorMetadataMeta);
}

}  // namespace guardjit
