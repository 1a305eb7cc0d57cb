#ifndef GUARDJIT_CORE_ONNX_ONNX_OP_TABLE_H_
#define GUARDJIT_CORE_ONNX_ONNX_OP_TABLE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/onnx/onnx_node_context.h"

namespace guardjit {

// Adds the ATen nodes computing one ONNX node (reading its opset's
// attributes and inputs) and defines its outputs; UNIMPLEMENTED for an
// attribute value or input it cannot map, never an approximation.
using OnnxOpMapper = absl::Status (*)(OnnxNodeContext& ctx);

// ONNX operators (default domain) the importer maps, by op_type. Built once,
// then read-only: thread-safe.
class OnnxOpTable {
 public:
  static const OnnxOpTable& Default();

  void Add(absl::string_view op_type, OnnxOpMapper mapper);
  OnnxOpMapper Find(absl::string_view op_type) const;
  // The oldest opset of the default domain whose definition of `op_type`
  // the mapping reads: below kMinOnnxOpset (7) only for operators whose
  // definition did not change from that opset to 7 (ONNX's Changelog.md;
  // version 6 of most activations only dropped `consumed_inputs`), else 7.
  static int OldestOpset(absl::string_view op_type);
  std::vector<std::string> OpTypes() const;  // sorted

 private:
  absl::flat_hash_map<std::string, OnnxOpMapper> mappers_;
};

// The families (one file each under core/onnx/).
void AddElementwiseOnnxOps(OnnxOpTable& table);
void AddActivationOnnxOps(OnnxOpTable& table);
void AddNnOnnxOps(OnnxOpTable& table);
void AddPoolOnnxOps(OnnxOpTable& table);
void AddLossOnnxOps(OnnxOpTable& table);
void AddResizeOnnxOps(OnnxOpTable& table);
void AddStructureOnnxOps(OnnxOpTable& table);
void AddShapeOnnxOps(OnnxOpTable& table);
void AddReduceOnnxOps(OnnxOpTable& table);
void AddTensorOnnxOps(OnnxOpTable& table);
void AddEinsumOnnxOps(OnnxOpTable& table);
void AddSignalOnnxOps(OnnxOpTable& table);
void AddRnnOnnxOps(OnnxOpTable& table);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_OP_TABLE_H_
