// Shape and dtype rules of the reductions: sum, mean, prod, amax/amin,
// argmax/argmin, var, any/all. Each follows the structured ATen meta function
// of the same name (ReduceOps.cpp): which dims are reduced, the result dtype
// and the checks that make PyTorch raise.

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/reduction_args.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", message));
}

// The `dtype` keyword of sum/mean/prod, if the overload has one and it is set.
std::optional<DType> DTypeArg(const MetaArgs& args) {
  const int index = args.node().op->schema.ArgIndex("dtype");
  if (index < 0) return std::nullopt;
  return args.optional_dtype(index);
}

// ATen's zero_numel_check_dims: reductions without an identity (max, min,
// argmax, argmin) refuse to reduce over an empty dim.
absl::Status CheckReducedDimsNonEmpty(const MetaArgs& args,
                                      const TensorMeta& self,
                                      const std::vector<bool>& mask) {
  if (self.numel() != 0) return absl::OkStatus();
  const std::string name = absl::StrCat(args.node().op->schema.name, "()");
  const int dim_index = args.node().op->schema.ArgIndex("dim");
  if (args.is_none(dim_index) || args.int_list(dim_index).empty()) {
    return ArgError(
        "dim", absl::StrCat(name,
                            ": Expected reduction dim to be specified for "
                            "input.numel() == 0. Specify the reduction dim "
                            "with the 'dim' argument."));
  }
  for (int d = 0; d < self.dim(); ++d) {
    if (mask[d] && self.sizes[d] == 0) {
      return ArgError("dim", absl::StrCat(name, ": Expected reduction dim ", d,
                                          " to have non-zero size."));
    }
  }
  return absl::OkStatus();
}

// Result dtype of one reduction family, after its checks.
using DTypeRule = absl::StatusOr<DType> (*)(const MetaArgs& args,
                                            const TensorMeta& self,
                                            const std::vector<bool>& mask);

// sum and prod: integral and bool inputs accumulate in int64 unless `dtype`
// names another type; the input is converted to `dtype` before reducing.
absl::StatusOr<DType> SumProdDType(const MetaArgs& args, const TensorMeta& self,
                                   const std::vector<bool>&) {
  if (std::optional<DType> dtype = DTypeArg(args)) return *dtype;
  return IsIntegral(self.dtype, /*include_bool=*/true) ? DType::kInt64
                                                       : self.dtype;
}

absl::StatusOr<DType> MeanDType(const MetaArgs& args, const TensorMeta& self,
                                const std::vector<bool>&) {
  if (std::optional<DType> dtype = DTypeArg(args)) {
    if (!IsFloating(*dtype)) {
      return ArgError(
          "dtype",
          absl::StrCat("mean(): could not infer output dtype. Optional "
                       "dtype must be either a floating point or "
                       "complex dtype. Got: ",
                       DTypeName(*dtype)));
    }
    return *dtype;
  }
  if (!IsFloating(self.dtype)) {
    return ArgError(
        "self", absl::StrCat("mean(): could not infer output dtype. Input "
                             "dtype must be either a floating point or complex "
                             "dtype. Got: ",
                             DTypeName(self.dtype)));
  }
  return self.dtype;
}

absl::StatusOr<DType> MinMaxDType(const MetaArgs& args, const TensorMeta& self,
                                  const std::vector<bool>& mask) {
  RETURN_IF_ERROR(CheckReducedDimsNonEmpty(args, self, mask));
  return self.dtype;
}

absl::StatusOr<DType> ArgMinMaxDType(const MetaArgs& args,
                                     const TensorMeta& self,
                                     const std::vector<bool>& mask) {
  if (self.dtype == DType::kBool) {
    // ATen dispatches argmax/argmin over numeric types only.
    return ArgError("self", absl::StrCat(args.node().op->schema.name,
                                         "(): not implemented for 'bool'"));
  }
  RETURN_IF_ERROR(CheckReducedDimsNonEmpty(args, self, mask));
  return DType::kInt64;
}

absl::StatusOr<DType> VarDType(const MetaArgs&, const TensorMeta& self,
                               const std::vector<bool>&) {
  if (!IsFloating(self.dtype)) {
    return ArgError("self", absl::StrCat("std and var only support floating "
                                         "point and complex dtypes, got ",
                                         DTypeName(self.dtype)));
  }
  return self.dtype;
}

// any/all keep uint8 (the pre-bool mask type) and give bool otherwise.
absl::StatusOr<DType> AnyAllDType(const MetaArgs&, const TensorMeta& self,
                                  const std::vector<bool>&) {
  return self.dtype == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
}

struct ReductionOp {
  const char* schema;
  DTypeRule dtype_rule;
  EmptyDims empty_dims = EmptyDims::kReduceAll;
};

const ReductionOp kReductionOps[] = {
    {"sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", SumProdDType},
    {"sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
     "ScalarType? dtype=None) -> Tensor",
     SumProdDType},
    {"mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", MeanDType},
    {"mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
     "ScalarType? dtype=None) -> Tensor",
     MeanDType},
    {"prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", SumProdDType},
    {"prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
     "ScalarType? dtype=None) -> Tensor",
     SumProdDType},
    {"amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
     MinMaxDType},
    {"amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
     MinMaxDType},
    {"argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
     ArgMinMaxDType},
    {"argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
     ArgMinMaxDType},
    {"var.correction(Tensor self, int[1]? dim=None, *, Scalar? "
     "correction=None, bool keepdim=False) -> Tensor",
     VarDType},
    {"var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool "
     "keepdim=False) -> Tensor",
     VarDType},
    {"any(Tensor self) -> Tensor", AnyAllDType},
    {"any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
     AnyAllDType},
    {"any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
     AnyAllDType, EmptyDims::kReduceNone},
    {"all(Tensor self) -> Tensor", AnyAllDType},
    {"all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
     AnyAllDType},
    {"all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
     AnyAllDType, EmptyDims::kReduceNone},
};

absl::StatusOr<std::vector<TensorMeta>> ReductionMeta(const ReductionOp& op,
                                                      const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  ASSIGN_OR_RETURN(std::vector<bool> mask,
                   ReadReductionMask(args, self.dim(), op.empty_dims));
  ASSIGN_OR_RETURN(DType dtype, op.dtype_rule(args, self, mask));
  const int keepdim_index = args.node().op->schema.ArgIndex("keepdim");
  const bool keepdim = keepdim_index >= 0 && args.bool_arg(keepdim_index);
  return std::vector<TensorMeta>{
      {dtype, ReducedShape(self.sizes, mask, keepdim), self.device}};
}

// max.dim/min.dim -> (values, indices): values of self's dtype (bool
// included), int64 indices; an empty reduced dim is an error as for amax.
absl::StatusOr<std::vector<TensorMeta>> MinMaxDimMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  ASSIGN_OR_RETURN(std::vector<bool> mask,
                   ReadReductionMask(args, self.dim(), EmptyDims::kReduceAll));
  RETURN_IF_ERROR(CheckReducedDimsNonEmpty(args, self, mask));
  const SymShape sizes = ReducedShape(self.sizes, mask, args.bool_arg(2));
  return std::vector<TensorMeta>{{self.dtype, sizes, self.device},
                                 {DType::kInt64, sizes, self.device}};
}

}  // namespace

absl::Status RegisterReductionOps(OpRegistry& registry) {
  for (const char* schema :
       {"max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
        "Tensor indices)",
        "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
        "Tensor indices)"}) {
    RETURN_IF_ERROR(registry.Register(schema, MinMaxDimMeta));
  }
  for (const ReductionOp& op : kReductionOps) {
    RETURN_IF_ERROR(registry.Register(op.schema, [&op](const MetaArgs& args) {
      return ReductionMeta(op, args);
    }));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
