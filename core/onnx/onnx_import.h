#ifndef GUARDJIT_CORE_ONNX_ONNX_IMPORT_H_
#define GUARDJIT_CORE_ONNX_ONNX_IMPORT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph.h"
#include "core/graph_loader.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// Opsets of ONNX's default domain the importer reads: 7 to 20 (what
// torch.onnx.export writes by default). Debian's ONNX 1.12 node tests reach
// 17; the changes of 18 to 20 to mapped operators are read (axes and split
// counts as inputs or attributes, Gelu) or refused (Pad's axes input, new
// attributes as any unread attribute), each tested by hand.
inline constexpr int kMinOnnxOpset = 7;
inline constexpr int kMaxOnnxOpset = 20;

// Builds a validated Graph from an ONNX ModelProto: initializers (inline or
// external data, relative to options.external_data_dir) become constants,
// graph inputs placeholders, each node ATen nodes with ONNX's broadcasting,
// type and attribute rules. What cannot be mapped exactly is refused at
// load, never approximated: UNIMPLEMENTED for an op, attribute value, dtype,
// domain or opset the importer lacks, INVALID_ARGUMENT for a malformed
// model; node errors read "ONNX node 3 'conv1' (Conv, domain 'ai.onnx',
// opset 13): ...".
// A graph input a node must know (a Reshape's shape) makes the graph one
// that value-specializes it (core/value_inputs.h, onnx_value_inputs.h).
absl::StatusOr<std::unique_ptr<Graph>> LoadOnnxModel(
    const onnx::ModelProto& model, const GraphLoadOptions& options);

// Where an import failed: the node, and the graph inputs whose values its
// mapping asked for and the import did not know.
struct OnnxImportFailure {
  int node = -1;
  std::vector<std::string> wanted;
  // Those of `wanted` the mapping cannot do without (NeededConstant): only
  // these may be float inputs, which a mapping that merely looks for a
  // known value (to fold) could not tell from data.
  std::vector<std::string> needed;
};

// The import itself, with the graph inputs in `bound` known (their values,
// of their dtype and the call's sizes) while staying placeholders; with
// `failure`, where it failed.
absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxGraph(
    const onnx::ModelProto& model, const GraphLoadOptions& options,
    const absl::flat_hash_map<std::string, Tensor>& bound,
    OnnxImportFailure* failure);

// UNIMPLEMENTED naming the first node from `from_node` on whose op or
// domain the importer lacks.
absl::Status CheckOnnxOps(const onnx::ModelProto& model, int from_node);
// From serialized bytes (IsOnnxModel).
absl::StatusOr<std::unique_ptr<Graph>> LoadOnnxModelFromBinary(
    absl::string_view bytes, const GraphLoadOptions& options);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_IMPORT_H_
