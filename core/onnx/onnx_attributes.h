#ifndef GUARDJIT_CORE_ONNX_ONNX_ATTRIBUTES_H_
#define GUARDJIT_CORE_ONNX_ONNX_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// A node's attributes, read by name with their ONNX types checked. Every
// read marks the attribute as understood; CheckAllRead() then refuses any
// attribute the op mapping never looked at, so an attribute the importer
// does not know can never be silently ignored. Errors are INVALID_ARGUMENT
// (wrong type, duplicate) and name the attribute; the caller adds the node.
class OnnxAttributes {
 public:
  static absl::StatusOr<OnnxAttributes> Create(const onnx::NodeProto& node);

  bool Has(absl::string_view name) const { return by_name_.contains(name); }
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback);
  absl::StatusOr<std::optional<int64_t>> OptionalInt(absl::string_view name);
  absl::StatusOr<float> Float(absl::string_view name, float fallback);
  absl::StatusOr<std::string> String(absl::string_view name,
                                     absl::string_view fallback);
  absl::StatusOr<std::optional<std::vector<int64_t>>> Ints(
      absl::string_view name);
  absl::StatusOr<std::optional<std::vector<float>>> Floats(
      absl::string_view name);
  // The attribute itself (TENSOR, GRAPH, ...), or null when absent.
  const onnx::AttributeProto* Raw(absl::string_view name);

  // UNIMPLEMENTED naming the first attribute nothing read.
  absl::Status CheckAllRead() const;

 private:
  absl::StatusOr<const onnx::AttributeProto*> Find(
      absl::string_view name, onnx::AttributeProto::AttributeType type);

  const onnx::NodeProto* node_ = nullptr;
  absl::flat_hash_map<std::string, const onnx::AttributeProto*> by_name_;
  absl::flat_hash_set<std::string> read_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_ATTRIBUTES_H_
