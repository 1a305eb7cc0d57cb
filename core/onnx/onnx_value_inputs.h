#ifndef GUARDJIT_CORE_ONNX_ONNX_VALUE_INPUTS_H_
#define GUARDJIT_CORE_ONNX_ONNX_VALUE_INPUTS_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/graph_loader.h"
#include "core/onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// ONNX's graph inputs a node must know to be mapped (a Reshape's `shape`, a
// Slice's `starts`, a Resize's `sizes`: torch's exporter and ONNX's node
// tests pass them as inputs) become value-specialized inputs
// (core/value_inputs.h): the graph loaded is the inputs, one
// higher_order.value_specialized node over them, and the declared outputs;
// its GraphRebuilder imports the model again with the inputs known, for
// each entry's values. `failure` is where the plain import failed with
// `error`; its wanted inputs are specialized (integers, bools, float32 or
// float64), with the failing node's other small integer graph inputs (its
// mapping stopped at the first it asked for; a float is specialized only
// when asked for: it may be data). `error` itself when one of them cannot
// be (a float16, a symbolic or too large shape: kMaxSpecializedValues), or
// when a later node's op or domain is not supported.
absl::StatusOr<std::unique_ptr<Graph>> ValueSpecializedOnnxGraph(
    const onnx::ModelProto& model, const GraphLoadOptions& options,
    const OnnxImportFailure& failure, const absl::Status& error);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_VALUE_INPUTS_H_
