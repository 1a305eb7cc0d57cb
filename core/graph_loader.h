#ifndef GUARDJIT_CORE_GRAPH_LOADER_H_
#define GUARDJIT_CORE_GRAPH_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph.h"
#include "core/graph.pb.h"
#include "core/op_registry.h"

namespace guardjit {

// What the bytes given to a loader are.
enum class GraphFormat {
  kDetect,    // an ONNX ModelProto if IsOnnxModel says so, else guardjit's
  kGuardjit,  // core/proto/graph.proto (binary or text as the call says)
  kOnnx,      // an ONNX ModelProto (core/onnx/onnx_import.h)
};

struct GraphLoadOptions {
  GraphFormat format = GraphFormat::kDetect;
  // Directory that relative ExternalData paths resolve against ("" = cwd).
  std::string external_data_dir;
  // Ops the graph may use; null means OpRegistry::Global().
  const OpRegistry* registry = nullptr;
};

// Builds a validated Graph from the protobuf description (core/proto/
// graph.proto) through GraphBuilder, so every error names its node:
// INVALID_ARGUMENT for malformed graphs, UNIMPLEMENTED for unknown targets,
// NOT_FOUND / DATA_LOSS for external data that is missing or short.
absl::StatusOr<std::unique_ptr<Graph>> LoadGraph(
    const proto::Graph& graph, const GraphLoadOptions& options);
// From serialized binary protobuf: a guardjit graph or an ONNX model (see
// GraphLoadOptions::format).
absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromBinary(
    absl::string_view bytes, const GraphLoadOptions& options);
// From protobuf text format; parse errors give line and column.
absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromText(
    absl::string_view text, const GraphLoadOptions& options);
// An ONNX model whatever the file is called (by content, or as the options
// say); else text format for *.pbtxt and *.txt, binary otherwise. Relative
// external data resolves against the file's directory unless options say
// otherwise.
absl::StatusOr<std::unique_ptr<Graph>> LoadGraphFromFile(
    const std::string& path, GraphLoadOptions options = {});

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_LOADER_H_
