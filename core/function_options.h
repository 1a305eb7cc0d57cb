#ifndef GUARDJIT_CORE_FUNCTION_OPTIONS_H_
#define GUARDJIT_CORE_FUNCTION_OPTIONS_H_

// What a Function is created with: the one options type behind
// gj_function_options (capi/function.cc reads the C struct into it) and the
// one place its defaults live.

#include <memory>
#include <string>
#include <vector>

#include "core/compile_queue.h"
#include "core/cuda_graph_policy.h"
#include "core/symbolic_inputs.h"

namespace guardjit {

// torch._dynamo.config.recompile_limit's default.
inline constexpr int kDefaultRecompileLimit = 8;

enum class DynamicMode {
  kAuto,     // static first; dims whose size changed become symbolic
  kStatic,   // every size specialized
  kDynamic,  // every size symbolic from the first compile
};

// gj_function_mode: reduce-overhead replays CUDA graphs (issue #15).
enum class FunctionMode {
  kDefault,
  kReduceOverhead,
};

struct FunctionOptions {
  std::string name;  // empty = the graph's name
  int recompile_limit = kDefaultRecompileLimit;
  DynamicMode dynamic = DynamicMode::kAuto;
  // torch._dynamo.mark_dynamic(input, dim, min, max): symbolic from the
  // first compile (ignored with kStatic); sizes outside [min, max] fail the
  // entry's guards.
  std::vector<DynamicDim> mark_dynamic;
  // torch.compile(fullgraph=True): a graph break is an error naming the node
  // and the reason instead of a split into segments.
  bool fullgraph = false;
  // GJ_COMPILE_ASYNC: a miss runs the eager fallback at once and compiles
  // its entry on this queue (the context's); null: the missing call
  // compiles.
  std::shared_ptr<CompileQueue> compile_queue;
  // Reduce-overhead: CUDA calls carry the function's CudaGraphPolicy.
  FunctionMode mode = FunctionMode::kDefault;
  int max_graphs_per_entry = kDefaultMaxGraphsPerEntry;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_FUNCTION_OPTIONS_H_
