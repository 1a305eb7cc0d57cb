// Shape and dtype rules of the unary pointwise ops. The result always has the
// input's shape; the dtype rules and the dtypes each op rejects follow
// PyTorch's meta functions and CPU kernel dispatch lists.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

enum class DTypeRule {
  kKeep,            // result dtype = input dtype, every dtype accepted
  kKeepNonBool,     // as kKeep, bool rejected (abs, neg, relu, ...)
  kIntToFloat,      // integral and bool inputs compute in float32
  kFloatOnly,       // floating inputs only (gelu, silu, round.decimals)
  kToBool,          // bool result for every input dtype
  kIntegralOrBool,  // bitwise ops
};

struct UnaryOp {
  const char* schema;
  DTypeRule rule;
  // Appended to the bool-input error where PyTorch suggests an alternative.
  const char* bool_hint = "";
};

constexpr UnaryOp kUnaryOps[] = {
    {"abs(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    {"neg(Tensor self) -> Tensor", DTypeRule::kKeepNonBool,
     "; to invert a mask use logical_not() or bitwise_not()"},
    {"exp(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"log(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"log1p(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"log2(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"log10(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"expm1(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"sqrt(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"rsqrt(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"sin(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"cos(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"tan(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"asin(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"acos(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"atan(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"sinh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"cosh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"tanh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"asinh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"acosh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"atanh(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"sigmoid(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"erf(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"reciprocal(Tensor self) -> Tensor", DTypeRule::kIntToFloat},
    {"relu(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    // PyTorch's gelu and silu keep the dtype and only have floating kernels:
    // integral inputs are errors there, not promoted.
    {"gelu(Tensor self, *, str approximate='none') -> Tensor",
     DTypeRule::kFloatOnly},
    {"silu(Tensor self) -> Tensor", DTypeRule::kFloatOnly},
    // Integral inputs are returned unchanged; bool has no kernel in PyTorch.
    {"floor(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    {"ceil(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    {"round(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    {"trunc(Tensor self) -> Tensor", DTypeRule::kKeepNonBool},
    // Unlike round.default, PyTorch has no integral shortcut here.
    {"round.decimals(Tensor self, *, int decimals) -> Tensor",
     DTypeRule::kFloatOnly},
    {"sign(Tensor self) -> Tensor", DTypeRule::kKeep},
    {"logical_not(Tensor self) -> Tensor", DTypeRule::kToBool},
    {"isnan(Tensor self) -> Tensor", DTypeRule::kToBool},
    {"isinf(Tensor self) -> Tensor", DTypeRule::kToBool},
    {"bitwise_not(Tensor self) -> Tensor", DTypeRule::kIntegralOrBool},
};

absl::Status DTypeError(const std::string& op, DType dtype,
                        absl::string_view wants) {
  return absl::InvalidArgumentError(absl::StrCat(
      "argument 'self': ", op, " ", wants, ", got ", DTypeName(dtype)));
}

absl::StatusOr<DType> ResultDType(const UnaryOp& op, const std::string& name,
                                  const TensorMeta& self) {
  // A number literal in the Tensor slot promotes like a 0-dim tensor of the
  // default dtype of its category, as in PyTorch.
  const DType in = ResultType({self});
  switch (op.rule) {
    case DTypeRule::kKeep:
      return in;
    case DTypeRule::kKeepNonBool:
      if (in == DType::kBool) {
        return absl::InvalidArgumentError(
            absl::StrCat("argument 'self': ", name,
                         " does not support bool tensors", op.bool_hint));
      }
      return in;
    case DTypeRule::kIntToFloat:
      return IsFloating(in) ? in : kDefaultFloat;
    case DTypeRule::kFloatOnly:
      if (!IsFloating(in))
        return DTypeError(name, in, "needs a floating tensor");
      return in;
    case DTypeRule::kToBool:
      return DType::kBool;
    case DTypeRule::kIntegralOrBool:
      if (IsFloating(in)) {
        return DTypeError(name, in, "needs an integral or bool tensor");
      }
      return in;
  }
  return in;
}

absl::Status CheckGeluApproximate(const MetaArgs& args) {
  absl::string_view approximate = args.optional_string(1).value_or("none");
  if (approximate == "none" || approximate == "tanh") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("argument 'approximate': expected 'none' or 'tanh', got '",
                   approximate, "'"));
}

}  // namespace

absl::Status RegisterUnaryOps(OpRegistry& registry) {
  for (const UnaryOp& op : kUnaryOps) {
    const absl::string_view schema(op.schema);
    // "round.decimals" for the overload, "abs" for the default one.
    const std::string name(schema.substr(0, schema.find('(')));
    const bool is_gelu = name == "gelu";
    RETURN_IF_ERROR(registry.Register(
        op.schema,
        [op, name, is_gelu](
            const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
          if (is_gelu) RETURN_IF_ERROR(CheckGeluApproximate(args));
          const TensorMeta self = args.tensor(0);
          ASSIGN_OR_RETURN(DType dtype, ResultDType(op, name, self));
          return std::vector<TensorMeta>{{dtype, self.sizes, self.device}};
        }));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
