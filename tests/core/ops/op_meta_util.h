#ifndef GUARDJIT_TESTS_CORE_OPS_OP_META_UTIL_H_
#define GUARDJIT_TESTS_CORE_OPS_OP_META_UTIL_H_

// Runs one op's shape and dtype rule (core/ops/) the way shape inference
// does for a graph: tests of the rules' output metadata and their errors,
// without running a kernel.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "core/tensor_meta.h"

namespace guardjit::testing {

// An int list argument.
inline Arg Ints(const std::vector<int64_t>& values) {
  std::vector<Arg> list;
  for (int64_t v : values) list.push_back(Arg::Int(v));
  return Arg::OfList(std::move(list));
}

// The outputs' metadata that `target`'s rule gives for tensor inputs of
// `inputs` (at least one), which `args` and `kwargs` refer to as
// Arg::Ref("x0"), "x1", ...;
// or the error of shape inference, which names the node 'op'.
inline absl::StatusOr<std::vector<TensorMeta>> OpMetas(
    const std::string& target, const std::vector<TensorMeta>& inputs,
    std::vector<Arg> args, Kwargs kwargs = {}) {
  GraphBuilder b("g");
  for (size_t i = 0; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(b.AddPlaceholder("x" + std::to_string(i)).status());
  }
  RETURN_IF_ERROR(
      b.AddNode("op", target, std::move(args), std::move(kwargs)).status());
  // The graph returns its first input: the op may have several outputs.
  RETURN_IF_ERROR(b.SetOutputs({Arg::Ref("x0")}));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, b.Finish());
  ASSIGN_OR_RETURN(GraphMeta metas, InferShapes(*graph, inputs));
  return metas[graph->FindNode("op")];
}

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_CORE_OPS_OP_META_UTIL_H_
