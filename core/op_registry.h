#ifndef GUARDJIT_CORE_OP_REGISTRY_H_
#define GUARDJIT_CORE_OP_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/bound_args.h"
#include "core/op_schema.h"
#include "core/tensor_meta.h"

namespace guardjit {

using MetaArgs = BoundArgs<TensorMeta>;
// Shape and dtype inference: output metadata from input metadata, or an
// INVALID_ARGUMENT error saying which argument is wrong (the caller prefixes
// the node name).
using MetaFn =
    std::function<absl::StatusOr<std::vector<TensorMeta>>(const MetaArgs&)>;

// What core knows of an op: its ATen schema and its shape/dtype rule. The
// reference kernel lives in runtime/ under the same target name.
struct OpDef {
  std::string target;  // "aten.add.Tensor"
  OpSchema schema;
  MetaFn meta;
  // Output sizes depend on input values (nonzero, masked_select, unique,
  // item): the op ends a compiled segment (a graph break); its shape rule is
  // never asked for sizes (it answers UNIMPLEMENTED) and its reference kernel
  // gets an empty `out` and sizes its results itself.
  bool data_dependent_output = false;
};

class OpRegistry {
 public:
  // Every built-in op (core/ops/). Built once, then read-only: thread-safe.
  static const OpRegistry& Global();

  // Registers `schema` (ATen syntax, without the namespace) under
  // "aten.<name>.<overload>". Fails on a bad schema or a duplicate.
  absl::Status Register(absl::string_view schema, MetaFn meta);
  // Registers under a target of another namespace ("getitem"-like builtins).
  absl::Status RegisterWithTarget(absl::string_view target,
                                  absl::string_view schema, MetaFn meta);
  // Registers an op whose output sizes depend on input values
  // (OpDef::data_dependent_output) under "aten.<name>.<overload>". Its shape
  // rule always answers UNIMPLEMENTED, "its output size depends on input
  // values (a graph break)"; the reference kernel checks the arguments.
  absl::Status RegisterDataDependent(absl::string_view schema);

  // Lets every `int[N]` argument of the registered `target` take a list of
  // one value (ArgSchema::expands_one_value).
  absl::Status ExpandOneValueLists(absl::string_view target);

  const OpDef* Find(absl::string_view target) const;
  // All ops sorted by target.
  std::vector<const OpDef*> All() const;

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_OP_REGISTRY_H_
