#include "core/op_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/ops/register_ops.h"
#include "core/status_macros.h"

namespace guardjit {

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    absl::Status s = RegisterAllOps(*r);
    if (!s.ok()) {
      // A built-in schema failed to parse: a programming error caught by every
      // test run, never by users.
      std::fprintf(stderr, "guardjit: op registry: %s\n", s.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

absl::Status OpRegistry::Register(absl::string_view schema_text, MetaFn meta) {
  ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(schema_text));
  return RegisterWithTarget(schema.QualifiedName(), schema_text,
                            std::move(meta));
}

absl::Status OpRegistry::RegisterWithTarget(absl::string_view target,
                                            absl::string_view schema_text,
                                            MetaFn meta) {
  ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(schema_text));
  auto def = std::make_unique<OpDef>();
  def->target = std::string(target);
  def->schema = std::move(schema);
  def->meta = std::move(meta);
  auto [it, inserted] = ops_.try_emplace(def->target, std::move(def));
  if (!inserted) {
    return absl::AlreadyExistsError(
        absl::StrCat("op '", target, "' registered twice"));
  }
  return absl::OkStatus();
}

absl::Status OpRegistry::ExpandOneValueLists(absl::string_view target) {
  auto it = ops_.find(target);
  if (it == ops_.end()) {
    return absl::NotFoundError(
        absl::StrCat("op '", target, "' not registered"));
  }
  bool any = false;
  for (ArgSchema& arg : it->second->schema.args) {
    if (arg.type == ArgType::kIntList && arg.fixed_list_size > 1) {
      arg.expands_one_value = true;
      any = true;
    }
  }
  if (!any) {
    return absl::InvalidArgumentError(
        absl::StrCat("op '", target, "' has no int[N] argument"));
  }
  return absl::OkStatus();
}

absl::Status OpRegistry::RegisterDataDependent(absl::string_view schema_text) {
  ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(schema_text));
  const std::string target = schema.QualifiedName();
  RETURN_IF_ERROR(RegisterWithTarget(
      target, schema_text,
      [](const MetaArgs&) -> absl::StatusOr<std::vector<TensorMeta>> {
        return absl::UnimplementedError(
            "its output size depends on input values (a graph break)");
      }));
  ops_.find(target)->second->data_dependent_output = true;
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view target) const {
  auto it = ops_.find(target);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<const OpDef*> OpRegistry::All() const {
  std::vector<const OpDef*> all;
  for (const auto& [name, def] : ops_) all.push_back(def.get());
  std::sort(all.begin(), all.end(), [](const OpDef* a, const OpDef* b) {
    return a->target < b->target;
  });
  return all;
}

}  // namespace guardjit
