#include "bindings/cli/io_info.h"

#include <cstdint>
#include <string>

namespace guardjit_cli {
namespace {

const char* DTypeName(gj_dtype dtype) {
  switch (dtype) {
    case GJ_DTYPE_FLOAT32:
      return "float32";
    case GJ_DTYPE_FLOAT64:
      return "float64";
    case GJ_DTYPE_FLOAT16:
      return "float16";
    case GJ_DTYPE_BFLOAT16:
      return "bfloat16";
    case GJ_DTYPE_INT8:
      return "int8";
    case GJ_DTYPE_UINT8:
      return "uint8";
    case GJ_DTYPE_INT16:
      return "int16";
    case GJ_DTYPE_INT32:
      return "int32";
    case GJ_DTYPE_INT64:
      return "int64";
    case GJ_DTYPE_BOOL:
      return "bool";
    default:
      return "?";
  }
}

// The accessors of inputs or of outputs.
struct Accessors {
  const char* kind;
  size_t (*count)(const gj_graph*);
  const char* (*name)(const gj_graph*, size_t);
  gj_dtype (*dtype)(const gj_graph*, size_t);
  int64_t (*rank)(const gj_graph*, size_t);
  int64_t (*dim)(const gj_graph*, size_t, size_t);
  const char* (*symbol)(const gj_graph*, size_t, size_t);
};

void Append(const gj_graph* graph, const Accessors& a, std::string* out) {
  for (size_t i = 0; i < a.count(graph); ++i) {
    *out += std::string(a.kind) + " " + a.name(graph, i) + ": " +
            DTypeName(a.dtype(graph, i));
    const int64_t rank = a.rank(graph, i);
    if (rank < 0) {
      *out += "[*]\n";
      continue;
    }
    *out += "[";
    for (int64_t k = 0; k < rank; ++k) {
      if (k > 0) *out += ", ";
      const int64_t size = a.dim(graph, i, k);
      const char* symbol = a.symbol(graph, i, k);
      if (size >= 0) {
        *out += std::to_string(size);
      } else {
        *out += symbol != nullptr && *symbol != '\0' ? symbol : "?";
      }
    }
    *out += "]\n";
  }
}

}  // namespace

std::string FormatIoInfo(const gj_graph* graph) {
  std::string out;
  Append(
      graph,
      {"input", gj_graph_num_inputs, gj_graph_input_name, gj_graph_input_dtype,
       gj_graph_input_rank, gj_graph_input_dim, gj_graph_input_dim_symbol},
      &out);
  Append(graph,
         {"output", gj_graph_num_outputs, gj_graph_output_name,
          gj_graph_output_dtype, gj_graph_output_rank, gj_graph_output_dim,
          gj_graph_output_dim_symbol},
         &out);
  return out;
}

}  // namespace guardjit_cli
