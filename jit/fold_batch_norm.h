#ifndef GUARDJIT_JIT_FOLD_BATCH_NORM_H_
#define GUARDJIT_JIT_FOLD_BATCH_NORM_H_

// Constant work at compile time: inference batch norms folded into the
// convolutions before them (what Inductor's freezing and ORT's graph
// optimizer do). A `_native_batch_norm_legit_no_training` whose input is a
// non-transposed convolution it alone reads, whose weight, bias, running
// mean and variance are graph constants (weight and bias may be None), as
// are the convolution's weight and bias (or None), and whose other two
// outputs nothing reads, becomes that convolution with
//   weight'[o, ...] = weight[o, ...] * scale[o],
//   bias'[o] = (bias[o] - mean[o]) * scale[o] + beta[o],
//   scale[o] = gamma[o] / sqrt(var[o] + eps),
// computed in double and stored in the weight's dtype (float32 or float64).
// The result differs from the eager kernels' by rounding only (the batch
// norm no longer rounds the convolution's result before normalizing it).

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "runtime/thread_pool.h"

namespace guardjit {

struct FoldedGraph {
  std::shared_ptr<const Graph> graph;  // the input graph when none folded
  int folded = 0;                      // batch norms folded
  // Per node of `graph`, when folded: the input graph's node it copies, or
  // -1 for a folded weight or bias (a dynamic entry's symbolic metadata,
  // computed for the input graph, carries over through it).
  std::vector<int> source_node;
};

// With a `pool`, the folds are computed on its threads.
absl::StatusOr<FoldedGraph> FoldBatchNorms(std::shared_ptr<const Graph> graph,
                                           ThreadPool* pool = nullptr);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_FOLD_BATCH_NORM_H_
