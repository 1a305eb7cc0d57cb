// gj_graph_from_proto on arbitrary bytes: an error or a graph, never a crash;
// a graph it accepts can be inspected and made into a function. The bytes
// reach both loaders: guardjit graphs, and ONNX models (recognized by
// content; the corpus's onnx_*.onnx seeds are ONNX 1.12 node tests).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gj_graph_load_options options;
  gj_graph_load_options_init(&options);
  // External data resolves against a directory that does not exist, so only
  // absolute paths can name a file.
  options.external_data_dir = "/nonexistent-guardjit-fuzz";
  gj_graph* graph = reinterpret_cast<gj_graph*>(1);
  if (gjfuzz::Consume(gj_graph_from_proto(gjfuzz::Context(), data, size,
                                          &options, &graph))) {
    if (graph != nullptr)
      gjfuzz::Fail("gj_graph_from_proto wrote its output on error");
    return 0;
  }
  if (graph == nullptr)
    gjfuzz::Fail("gj_graph_from_proto succeeded without a graph");
  gjfuzz::InspectGraph(graph);
  gj_function* function = nullptr;
  if (!gjfuzz::Consume(
          gj_function_create(gjfuzz::Context(), graph, nullptr, &function))) {
    gj_function_destroy(function);
  }
  gj_graph_destroy(graph);
  return 0;
}
