#include "jit/schedule/reuse_reduced_values.h"

#include <cstddef>

namespace guardjit {

void ReuseReducedValues(Kernel& k) {
  for (size_t s = 0; s < k.stages.size(); ++s) {
    Stage& store = k.stages[s];
    if (store.kind != Stage::Kind::kStore || store.loops.empty()) continue;
    const DType dtype = k.buffers[store.buffer].dtype;
    for (size_t r = s; r-- > 0;) {
      Stage& reduce = k.stages[r];
      if (reduce.kind != Stage::Kind::kReduce || reduce.buffer >= 0 ||
          reduce.value.kind() == ValueExpr::Kind::kLoad ||
          reduce.value.dtype() != dtype ||
          reduce.loops.size() != store.loops.size()) {
        continue;
      }
      bool same_loops = true;
      for (size_t l = 0; l < store.loops.size(); ++l) {
        same_loops = same_loops && reduce.loops[l].var == store.loops[l].var &&
                     reduce.loops[l].extent == store.loops[l].extent;
      }
      if (!same_loops) continue;
      bool found = false;
      ValueExpr replaced = ValueExpr::Replace(
          store.value, reduce.value,
          ValueExpr::Load(store.buffer, dtype, store.index), &found);
      if (!found) continue;
      reduce.buffer = store.buffer;
      reduce.index = store.index;
      store.value = replaced;
      break;
    }
  }
}

}  // namespace guardjit
