#ifndef GUARDJIT_CORE_OP_SCHEMA_H_
#define GUARDJIT_CORE_OP_SCHEMA_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/arg_value.h"

namespace guardjit {

// Argument types of ATen's schema language that guardjit understands.
enum class ArgType {
  kTensor,
  kTensorList,
  kScalar,
  kInt,      // int and SymInt
  kIntList,  // int[], int[N], SymInt[]
  kFloat,
  kFloatList,
  kBool,
  kBoolList,
  kString,
  kScalarType,
  kDevice,
  kLayout,
  kMemoryFormat,
  kGenerator,
  kGraph,  // a nested subgraph (control flow), not an ATen type
  kAny,    // any literal (getitem's index, sym ops' operands)
};

const char* ArgTypeName(ArgType type);

struct ArgSchema {
  std::string name;
  ArgType type = ArgType::kTensor;
  bool optional = false;    // `Tensor?`: None accepted
  bool kwarg_only = false;  // after `*`
  int fixed_list_size = 0;  // N of `int[N]`: a single int is broadcast
  // An `int[N]` that also broadcasts a list of one value to N, as ATen's
  // pooling kernels do (avg_pool2d(..., padding=[1])); others refuse it as
  // torch does (_adaptive_avg_pool2d: "output_size must be 2"). Set by
  // OpRegistry::ExpandOneValueLists.
  bool expands_one_value = false;
  // `Tensor?[]`: None accepted as an element.
  bool optional_elements = false;
  std::optional<Arg> default_value;
};

// A parsed ATen function schema, e.g.
// "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
struct OpSchema {
  std::string name;      // "add"
  std::string overload;  // "Tensor" ("default" when the schema has none)
  std::vector<ArgSchema> args;
  int num_returns = 1;
  // `-> SymInt`, `-> SymBool`, `-> int`: the node computes an integer (a
  // size), usable where an int argument is expected.
  bool returns_int = false;
  bool returns_list =
      false;  // `-> Tensor[]`: number of outputs set at run time

  // "aten.add.Tensor": the target a graph node names.
  std::string QualifiedName(absl::string_view ns = "aten") const;
  // Index of the argument called `name`, or -1.
  int ArgIndex(absl::string_view name) const;
  // The schema in ATen syntax.
  std::string ToString() const;
};

absl::StatusOr<OpSchema> ParseOpSchema(absl::string_view text);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OP_SCHEMA_H_
