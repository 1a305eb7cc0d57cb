#include "capi/graph.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "capi/c_string.h"
#include "capi/error.h"
#include "capi/options.h"
#include "capi/raw_enum.h"
#include "core/graph_loader.h"
#include "core/graph_printer.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {
namespace {

absl::StatusOr<GraphLoadOptions> ReadLoadOptions(
    const gj_graph_load_options* options, absl::string_view fn) {
  gj_graph_load_options opts;
  gj_graph_load_options_init(&opts);
  if (options != nullptr) {
    RETURN_IF_ERROR(CheckStructSize(options->struct_size, fn, "options",
                                    "gj_graph_load_options_init"));
    GJ_READ_OPTION(opts, options, external_data_dir);
    GJ_READ_OPTION(opts, options, format);
  }
  GraphLoadOptions result;
  if (opts.external_data_dir != nullptr)
    result.external_data_dir = opts.external_data_dir;
  switch (RawEnum(opts.format)) {
    case GJ_GRAPH_FORMAT_DETECT:
      result.format = GraphFormat::kDetect;
      break;
    case GJ_GRAPH_FORMAT_GUARDJIT:
      result.format = GraphFormat::kGuardjit;
      break;
    case GJ_GRAPH_FORMAT_ONNX:
      result.format = GraphFormat::kOnnx;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(fn, ": options->format is ", RawEnum(opts.format),
                       "; expected a gj_graph_format (GJ_GRAPH_FORMAT_DETECT, "
                       "_GUARDJIT or _ONNX)"));
  }
  return result;
}

// The shared part of the three loaders: argument checks, then `load`.
template <typename Load>
gj_error* LoadGraph(absl::string_view fn, gj_context* context,
                    const gj_graph_load_options* options, gj_graph** out_graph,
                    Load load) {
  if (out_graph != nullptr) *out_graph = nullptr;
  return Guarded([&]() -> absl::Status {
    if (out_graph == nullptr) return NullArgument(fn, "out_graph");
    if (context == nullptr) return NullArgument(fn, "context");
    ASSIGN_OR_RETURN(GraphLoadOptions opts, ReadLoadOptions(options, fn));
    absl::StatusOr<std::unique_ptr<Graph>> graph = load(opts);
    if (!graph.ok()) {
      return absl::Status(graph.status().code(),
                          absl::StrCat(fn, ": ", graph.status().message()));
    }
    *out_graph = new gj_graph(std::shared_ptr<const Graph>(*std::move(graph)));
    return absl::OkStatus();
  });
}

}  // namespace
}  // namespace guardjit::capi

gj_graph::gj_graph(std::shared_ptr<const guardjit::Graph> g)
    : graph(std::move(g)) {
  for (const guardjit::Arg& a : graph->output_node().args) {
    const guardjit::ValueRef v = a.as_value();
    const guardjit::Node& node = graph->node(v.node);
    output_names.push_back(node.num_outputs > 1
                               ? absl::StrCat(node.name, "[", v.index, "]")
                               : node.name);
  }
}

extern "C" {

// The defaults of every field this library knows; gj_graph_load_options_init_v
// and the legacy gj_graph_load_options_init symbol (legacy_init.cc) copy what
// fits.
static void GraphLoadOptionsDefaults(gj_graph_load_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_graph_load_options);
  options->external_data_dir = nullptr;
  options->format = GJ_GRAPH_FORMAT_DETECT;
}

void gj_graph_load_options_init_v(gj_graph_load_options* options,
                                  size_t struct_size) {
  guardjit::capi::InitSized(options, struct_size, &GraphLoadOptionsDefaults);
}

gj_error* gj_graph_from_proto(gj_context* context, const void* data,
                              size_t size, const gj_graph_load_options* options,
                              gj_graph** out_graph) {
  constexpr absl::string_view kFn = "gj_graph_from_proto";
  return guardjit::capi::LoadGraph(
      kFn, context, options, out_graph,
      [&](const guardjit::GraphLoadOptions& opts)
          -> absl::StatusOr<std::unique_ptr<guardjit::Graph>> {
        if (data == nullptr && size > 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("data is NULL with size ", size));
        }
        return guardjit::LoadGraphFromBinary(
            absl::string_view(static_cast<const char*>(data), size), opts);
      });
}

gj_error* gj_graph_from_text(gj_context* context, const char* text, size_t size,
                             const gj_graph_load_options* options,
                             gj_graph** out_graph) {
  constexpr absl::string_view kFn = "gj_graph_from_text";
  return guardjit::capi::LoadGraph(
      kFn, context, options, out_graph,
      [&](const guardjit::GraphLoadOptions& opts)
          -> absl::StatusOr<std::unique_ptr<guardjit::Graph>> {
        if (text == nullptr && size > 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("text is NULL with size ", size));
        }
        if (opts.format == guardjit::GraphFormat::kOnnx) {
          return absl::InvalidArgumentError(
              "options->format is GJ_GRAPH_FORMAT_ONNX, but ONNX models are "
              "binary: load them with gj_graph_from_proto or "
              "gj_graph_from_file");
        }
        return guardjit::LoadGraphFromText(absl::string_view(text, size), opts);
      });
}

gj_error* gj_graph_from_file(gj_context* context, const char* path,
                             const gj_graph_load_options* options,
                             gj_graph** out_graph) {
  constexpr absl::string_view kFn = "gj_graph_from_file";
  return guardjit::capi::LoadGraph(
      kFn, context, options, out_graph,
      [&](const guardjit::GraphLoadOptions& opts)
          -> absl::StatusOr<std::unique_ptr<guardjit::Graph>> {
        if (path == nullptr) return absl::InvalidArgumentError("path is NULL");
        return guardjit::LoadGraphFromFile(path, opts);
      });
}

void gj_graph_destroy(gj_graph* graph) { delete graph; }

size_t gj_graph_num_inputs(const gj_graph* graph) {
  return graph == nullptr ? 0 : graph->graph->inputs().size();
}

size_t gj_graph_num_outputs(const gj_graph* graph) {
  return graph == nullptr ? 0 : graph->graph->num_outputs();
}

const char* gj_graph_output_name(const gj_graph* graph, size_t index) {
  if (graph == nullptr || index >= graph->output_names.size()) return nullptr;
  return graph->output_names[index].c_str();
}

const char* gj_graph_input_name(const gj_graph* graph, size_t index) {
  if (graph == nullptr || index >= graph->graph->inputs().size())
    return nullptr;
  return graph->graph->node(graph->graph->inputs()[index]).name.c_str();
}

gj_error* gj_graph_to_tabular(const gj_graph* graph, char** out_text) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_graph_to_tabular";
  if (out_text != nullptr) *out_text = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (out_text == nullptr) return NullArgument(kFn, "out_text");
    if (graph == nullptr) return NullArgument(kFn, "graph");
    ASSIGN_OR_RETURN(*out_text, guardjit::capi::NewCString(
                                    guardjit::FormatTabular(*graph->graph)));
    return absl::OkStatus();
  });
}

}  // extern "C"
