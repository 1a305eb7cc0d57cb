#ifndef GUARDJIT_CORE_GRAPH_REWRITER_H_
#define GUARDJIT_CORE_GRAPH_REWRITER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/graph_builder.h"

namespace guardjit {

// Copies a graph node by node into a new one, so that a rewrite replaces
// only the nodes it changes (batch norms folded into convolutions, attention
// chains fused) and copies the rest as they were: placeholders with their
// metadata and value specialization, constants, getitems, calls (arguments
// as bound, references remapped) and the output.
class GraphRewriter {
 public:
  explicit GraphRewriter(const Graph& source);

  // Where replacements are added.
  GraphBuilder& builder() { return builder_; }

  // `a` with references to the source's nodes replaced by what they became.
  Arg Remap(const Arg& a) const { return RemapArg(mapped_, a); }

  // `base`, or `base` with "_" appended until no node of the source or the
  // rewrite has the name.
  std::string UniqueName(std::string base);

  // Copies source node `i` (its references remapped).
  absl::Status Copy(int i);

  // Source node `i` becomes `outputs` (one Arg per output) in the new graph.
  // `copy_of_node`: the new node `outputs[0]` refers to stands for node `i`
  // (same values: a folded convolution), for source_node().
  void Map(int i, std::vector<Arg> outputs, bool copy_of_node = false);

  // The new graph (its output copied last, by Copy).
  absl::StatusOr<std::unique_ptr<Graph>> Finish();

  // After Finish: per node of the new graph, the source node it copies, or
  // -1 for a node the rewrite added.
  const std::vector<int>& source_node() const { return source_node_; }

 private:
  void Record(const ValueRef& ref, int i) { copies_.emplace_back(ref.node, i); }

  const Graph& source_;
  GraphBuilder builder_;
  std::vector<std::vector<Arg>> mapped_;
  absl::flat_hash_set<std::string> names_;
  std::vector<std::pair<int, int>> copies_;  // (new node, source node)
  std::vector<int> source_node_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_REWRITER_H_
