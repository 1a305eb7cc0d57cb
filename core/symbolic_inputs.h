#ifndef GUARDJIT_CORE_SYMBOLIC_INPUTS_H_
#define GUARDJIT_CORE_SYMBOLIC_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/call_signature.h"
#include "core/guard_tree.h"
#include "core/shape_env.h"
#include "core/tensor_meta.h"

namespace guardjit {

// A dim to make symbolic, with the values it may take (mark_dynamic).
struct DynamicDim {
  int input = 0;
  int dim = 0;
  int64_t min = 2;
  int64_t max = kSymMax;
};

// A call's inputs as one cache entry sees them: metas whose dynamic dims are
// symbols of `env`, and the per-input guards on everything else.
struct SymbolicInputs {
  std::vector<TensorMeta> metas;
  std::vector<TensorGuard> tensors;  // TENSOR_MATCH; None where symbolic
  SymbolicGuards symbolic;           // bindings and symbolic strides
};

// Makes the `dynamic` dims of `call` symbols of `env`, as torch's
// ShapeEnv.create_symbol does: sizes 0 and 1 stay specialized, as do sizes
// outside the dim's range; dims with the same size and no user range share
// one symbol (duck sizing). A dynamic input whose strides are the contiguous
// strides of some dim order gets symbolic strides in that order; other
// strides stay static.
SymbolicInputs MakeSymbolicInputs(const std::vector<std::string>& names,
                                  const CallSignature& call,
                                  const std::vector<DynamicDim>& dynamic,
                                  ShapeEnv& env);

// The guard tree of an entry specialized on `inputs`: their guards plus
// every guard `env` recorded.
GuardTree MakeGuardTree(const CallSignature& call, SymbolicInputs inputs,
                        const ShapeEnv& env);

// Guards of a fully static entry specialized on `call` (no dim dynamic).
GuardTree StaticGuardTree(const std::vector<std::string>& names,
                          const CallSignature& call);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SYMBOLIC_INPUTS_H_
