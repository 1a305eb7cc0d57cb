// Shape rules of _assert_tensor_metadata and _assert_scalar. The first is
// the check torch.export leaves where
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

// _assert_scalar(cond, msg): torch.export's runtime assertion on sizes
// (`_assert_scalar(sym_size(x, 0) >= 2, "Runtime assertion failed for
// expression ...")`). Its operand is a size comparison, which shape
// inference decides, recording a shape guard; a false one fails the
// specialization with torch's message, so an entry's guards keep every
// assertion true and a call that breaks one gets the message.
absl::StatusOr<std::vector<TensorMeta>> AssertScalarMeta(const MetaArgs& args) {
  if (!args.scalar(0).to_bool()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'self': ", args.optional_string(1).value_or("assertion")));
  }
  return std::vector<TensorMeta>{};
}

}  // namespace

absl::Status RegisterAssertOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? "
      "stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? "
      "layout=None) -> ()",
      AssertTensorMetadataMeta));
  return registry.Register("_assert_scalar(Scalar self, str assert_msg) -> ()",
                           AssertScalarMeta);
}

}  // namespace guardjit
