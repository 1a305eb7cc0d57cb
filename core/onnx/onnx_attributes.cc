#include "core/onnx/onnx_attributes.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using onnx::AttributeProto;

const char* TypeName(AttributeProto::AttributeType type) {
  return AttributeProto::AttributeType_IsValid(type)
             ? AttributeProto::AttributeType_Name(type).c_str()
             : "UNDEFINED";
}

// The attribute's type: its `type` field, or for producers that leave it
// unset (ONNX IR < 3), the field that holds a value.
AttributeProto::AttributeType TypeOf(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  return AttributeProto::UNDEFINED;
}

}  // namespace

absl::StatusOr<OnnxAttributes> OnnxAttributes::Create(
    const onnx::NodeProto& node) {
  OnnxAttributes attrs;
  attrs.node_ = &node;
  for (const AttributeProto& a : node.attribute()) {
    if (!a.ref_attr_name().empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "attribute '", a.name(), "' refers to a function attribute ('",
          a.ref_attr_name(), "')"));
    }
    if (!attrs.by_name_.emplace(a.name(), &a).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", a.name(), "' given twice"));
    }
  }
  return attrs;
}

absl::StatusOr<const AttributeProto*> OnnxAttributes::Find(
    absl::string_view name, AttributeProto::AttributeType type) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  read_.insert(std::string(name));
  if (TypeOf(*it->second) != type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute '", name, "' is ", TypeName(TypeOf(*it->second)),
        ", expected ", TypeName(type)));
  }
  return it->second;
}

absl::StatusOr<int64_t> OnnxAttributes::Int(absl::string_view name,
                                            int64_t fallback) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::INT));
  return a ? a->i() : fallback;
}

absl::StatusOr<std::optional<int64_t>> OnnxAttributes::OptionalInt(
    absl::string_view name) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::INT));
  if (a == nullptr) return std::optional<int64_t>();
  return std::optional<int64_t>(a->i());
}

absl::StatusOr<float> OnnxAttributes::Float(absl::string_view name,
                                            float fallback) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::FLOAT));
  return a ? a->f() : fallback;
}

absl::StatusOr<std::string> OnnxAttributes::String(absl::string_view name,
                                                   absl::string_view fallback) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::STRING));
  return a ? a->s() : std::string(fallback);
}

absl::StatusOr<std::optional<std::vector<int64_t>>> OnnxAttributes::Ints(
    absl::string_view name) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::INTS));
  if (a == nullptr) return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(
      std::vector<int64_t>(a->ints().begin(), a->ints().end()));
}

absl::StatusOr<std::optional<std::vector<float>>> OnnxAttributes::Floats(
    absl::string_view name) {
  ASSIGN_OR_RETURN(const AttributeProto* a, Find(name, AttributeProto::FLOATS));
  if (a == nullptr) return std::optional<std::vector<float>>();
  return std::optional<std::vector<float>>(
      std::vector<float>(a->floats().begin(), a->floats().end()));
}

const AttributeProto* OnnxAttributes::Raw(absl::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  read_.insert(std::string(name));
  return it->second;
}

absl::Status OnnxAttributes::CheckAllRead() const {
  for (const AttributeProto& a : node_->attribute()) {
    if (!read_.contains(a.name())) {
      return absl::UnimplementedError(
          absl::StrCat("attribute '", a.name(), "' is not supported"));
    }
  }
  return absl::OkStatus();
}

}  // namespace guardjit
