#ifndef GUARDJIT_CAPI_GRAPH_H_
#define GUARDJIT_CAPI_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"

// An immutable graph; functions made from it share ownership.
struct gj_graph {
  explicit gj_graph(std::shared_ptr<const guardjit::Graph> g);

  std::shared_ptr<const guardjit::Graph> graph;
  // Per output, the name of the value it returns ("add"; "split[1]" for an
  // element of a multi-output node returned directly).
  std::vector<std::string> output_names;
};

#endif  // GUARDJIT_CAPI_GRAPH_H_
