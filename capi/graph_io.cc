// Graph input/output metadata at the C boundary: gj_graph_input_dtype and
// friends read Graph::input_spec/output_spec.

#include "capi/arg_convert.h"
#include "capi/graph.h"
#include "core/io_spec.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {
namespace {

const IoSpec* InputSpec(const gj_graph* graph, size_t index) {
  if (graph == nullptr || index >= graph->graph->inputs().size()) {
    return nullptr;
  }
  return &graph->graph->input_spec(static_cast<int>(index));
}

const IoSpec* OutputSpec(const gj_graph* graph, size_t index) {
  if (graph == nullptr ||
      index >= static_cast<size_t>(graph->graph->num_outputs())) {
    return nullptr;
  }
  return &graph->graph->output_spec(static_cast<int>(index));
}

gj_dtype DTypeOf(const IoSpec* spec) {
  return spec == nullptr || !spec->dtype ? GJ_DTYPE_UNKNOWN
                                         : DTypeToC(*spec->dtype);
}

int64_t RankOf(const IoSpec* spec) {
  return spec == nullptr ? -1 : spec->rank();
}

const IoDim* DimOf(const IoSpec* spec, size_t dim) {
  if (spec == nullptr || !spec->dims || dim >= spec->dims->size()) {
    return nullptr;
  }
  return &(*spec->dims)[dim];
}

int64_t SizeOf(const IoDim* dim) { return dim == nullptr ? -1 : dim->size; }

const char* SymbolOf(const IoDim* dim) {
  return dim == nullptr || dim->is_static() ? nullptr : dim->symbol.c_str();
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

gj_dtype gj_graph_input_dtype(const gj_graph* graph, size_t index) {
  using namespace guardjit::capi;  // NOLINT: the helpers above
  return DTypeOf(InputSpec(graph, index));
}

int64_t gj_graph_input_rank(const gj_graph* graph, size_t index) {
  using namespace guardjit::capi;  // NOLINT
  return RankOf(InputSpec(graph, index));
}

int64_t gj_graph_input_dim(const gj_graph* graph, size_t index, size_t dim) {
  using namespace guardjit::capi;  // NOLINT
  return SizeOf(DimOf(InputSpec(graph, index), dim));
}

const char* gj_graph_input_dim_symbol(const gj_graph* graph, size_t index,
                                      size_t dim) {
  using namespace guardjit::capi;  // NOLINT
  return SymbolOf(DimOf(InputSpec(graph, index), dim));
}

gj_dtype gj_graph_output_dtype(const gj_graph* graph, size_t index) {
  using namespace guardjit::capi;  // NOLINT
  return DTypeOf(OutputSpec(graph, index));
}

int64_t gj_graph_output_rank(const gj_graph* graph, size_t index) {
  using namespace guardjit::capi;  // NOLINT
  return RankOf(OutputSpec(graph, index));
}

int64_t gj_graph_output_dim(const gj_graph* graph, size_t index, size_t dim) {
  using namespace guardjit::capi;  // NOLINT
  return SizeOf(DimOf(OutputSpec(graph, index), dim));
}

const char* gj_graph_output_dim_symbol(const gj_graph* graph, size_t index,
                                       size_t dim) {
  using namespace guardjit::capi;  // NOLINT
  return SymbolOf(DimOf(OutputSpec(graph, index), dim));
}

}  // extern "C"
