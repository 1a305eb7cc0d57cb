#ifndef GUARDJIT_CAPI_GRAPH_H_
#define GUARDJIT_CAPI_GRAPH_H_

#include <memory>

#include "core/graph.h"

// An immutable graph; functions made from it share ownership.
struct gj_graph {
  std::shared_ptr<const guardjit::Graph> graph;
};

#endif  // GUARDJIT_CAPI_GRAPH_H_
