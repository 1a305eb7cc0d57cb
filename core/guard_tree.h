#ifndef GUARDJIT_CORE_GUARD_TREE_H_
#define GUARDJIT_CORE_GUARD_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/ambient_state.h"
#include "core/call_signature.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/shape_env.h"
#include "core/sym_expr.h"

namespace guardjit {

// TENSOR_MATCH for one input: everything but the symbolic dims must match.
struct TensorGuard {
  std::string name;  // the placeholder, as Dynamo names the source
  DType dtype = DType::kFloat32;
  Device device;
  bool requires_grad = false;
  // nullopt: the dim is symbolic (dynamic) and only shape guards constrain it.
  std::vector<std::optional<int64_t>> sizes;
  std::vector<std::optional<int64_t>> strides;
  // Set for a value-specialized input (core/value_inputs.h): the values its
  // entry was compiled with (VALUE_MATCH; sizes and strides are static).
  std::optional<std::vector<int64_t>> values;

  int rank() const { return static_cast<int>(sizes.size()); }
};

// What a dynamic entry checks beyond TENSOR_MATCH's static fields: each
// symbol is read from the first input dim bound to it (later dims bound to
// the same symbol must equal it: duck sizing), symbolic strides must equal
// their expressions, and every shape guard must hold.
struct SymbolicGuards {
  struct DimBinding {
    int32_t input;
    int16_t dim;
    int32_t symbol;
  };
  struct StrideCheck {
    int32_t input;
    int16_t dim;
    SymExpr expr;
  };
  // A bound the entry's compiled code relies on (Executable::chosen_bounds):
  // symbol <= max, checked after every other guard.
  struct ChosenBound {
    int32_t symbol;
    int64_t max;
  };
  std::vector<std::string> symbol_names;  // sources: "x.size()[0]"
  std::vector<DimBinding> dims;
  std::vector<StrideCheck> strides;
  std::vector<ShapeGuard> shape_guards;
  std::vector<ChosenBound> chosen_bounds;
  // What the chosen bounds buy ("the entry's CUDA kernels index in 32
  // bits"), for failure reasons and dumps.
  std::string chosen_bounds_purpose;

  int num_symbols() const { return static_cast<int>(symbol_names.size()); }
  bool empty() const { return dims.empty(); }
};

// The guards of one cache entry, as TorchDynamo builds them: root -> ambient
// guards -> one manager per input (TENSOR_MATCH, NO_TENSOR_ALIASING) -> shape
// guards. Check() is the hot path and allocates nothing; FailureReason() and
// Dump() are for misses and logs.
class GuardTree {
 public:
  GuardTree(AmbientState ambient, std::vector<TensorGuard> tensors,
            std::vector<int> alias_of, SymbolicGuards symbolic = {});

  // With `bound` of at least symbolic().num_symbols() elements, a passing
  // check leaves the symbol values it bound there (a failing one leaves
  // anything): the entry's executable runs with them instead of reading
  // them from the inputs again (RunContext::symbols).
  bool Check(const CallSignature& call,
             absl::Span<int64_t> bound = absl::Span<int64_t>()) const;
  // Check() with the call's aliasing already computed (ComputeAliasing), so a
  // lookup trying several entries computes it once.
  bool CheckWithAliasing(
      const CallSignature& call, absl::Span<const int> alias_of,
      absl::Span<int64_t> bound = absl::Span<int64_t>()) const;

  // The first failing guard in Dynamo's words ("tensor 'x' size mismatch at
  // index 0. expected 3, actual 2"), or nullopt if every guard passes. With
  // `chosen_bound`, sets it to whether that guard is a chosen bound (every
  // other guard passed: "x.size()[0] = 3000000 exceeds 1048576, the bound
  // under which the entry's CUDA kernels index in 32 bits").
  std::optional<std::string> FailureReason(const CallSignature& call,
                                           bool* chosen_bound = nullptr) const;

  // TREE_GUARD_MANAGER-style dump.
  std::string Dump() const;

  // Hash of what every entry of a function guards exactly (ambient state, and
  // per input dtype, device, requires_grad, rank, aliasing): entries that
  // could accept a call share it, so lookup only looks at those.
  uint64_t StaticKey() const { return static_key_; }
  static uint64_t StaticKeyOf(const CallSignature& call,
                              absl::Span<const int> alias_of);

  const AmbientState& ambient() const { return ambient_; }
  const std::vector<TensorGuard>& tensors() const { return tensors_; }
  const std::vector<int>& alias_of() const { return alias_of_; }
  const SymbolicGuards& symbolic() const { return symbolic_; }
  int num_guards() const;

 private:
  // The tree flattened for Check(): per input one packed word of what
  // TENSOR_MATCH compares exactly, then every static size and stride.
  struct DimCheck {
    int32_t input;
    int16_t dim;
    bool stride;
    int64_t value;
  };

  AmbientState ambient_;
  std::vector<TensorGuard> tensors_;
  std::vector<int> alias_of_;
  uint64_t static_key_;
  // Binds the symbols from `call` into `values` and checks duck-sized dims,
  // symbolic strides and shape guards; the first failure's text if
  // `reason`, else just false.
  bool CheckSymbolic(const CallSignature& call, absl::Span<int64_t> values,
                     std::string* reason, bool* chosen_bound = nullptr) const;
  std::string Expr(const SymExpr& e) const;

  std::vector<uint64_t> input_keys_;
  std::vector<DimCheck> dim_checks_;
  // Inputs with a VALUE_MATCH, checked after every static field.
  std::vector<int32_t> value_checks_;
  SymbolicGuards symbolic_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GUARD_TREE_H_
