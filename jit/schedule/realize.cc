#include "jit/schedule/realize.h"

#include <algorithm>

namespace guardjit {

std::vector<bool> SharedValuesToRealize(const LoweredGraph& graph) {
  const int n = static_cast<int>(graph.values.size());
  std::vector<int> readers(n, 0);
  for (const LValue& value : graph.values) {
    for (int o : value.operands) ++readers[o];
  }
  for (const auto& [node, inputs] : graph.extern_inputs) {
    for (const auto& [key, v] : inputs) ++readers[v];
  }
  for (int v : graph.outputs) ++readers[v];

  // Tensors an inlined value reads (operands precede their readers). A
  // shared subexpression counts once per path: an upper bound.
  std::vector<int> reads(n, 0);
  std::vector<bool> realize(n, false);
  for (int v = 0; v < n; ++v) {
    const LValue& value = graph.values[v];
    switch (value.kind) {
      case LValue::Kind::kBuffer:
      case LValue::Kind::kReduction:
        reads[v] = 1;
        break;
      case LValue::Kind::kGather:
        reads[v] = 1 + reads[value.operands[1]];
        break;
      case LValue::Kind::kView:
        reads[v] = reads[value.operands[0]];
        break;
      case LValue::Kind::kPointwise:
      case LValue::Kind::kSelect: {
        int sum = 0;
        for (int o : value.operands) sum += reads[o];
        reads[v] = sum;
        if (readers[v] >= 2 && sum >= kRealizeReads) {
          realize[v] = true;
          reads[v] = 1;
        }
        break;
      }
    }
  }
  return realize;
}

}  // namespace guardjit
