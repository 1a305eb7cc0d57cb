// Shape rules of reflection_pad{1,2,3}d and replication_pad{2,3}d. The
// padded dims are the last 1-3; the input has them plus an optional batch
// dim (and a channel dim), the non-batch dims non-empty. Reflection pads
// must be smaller than the padded size; every output size must be >= 1.
// Pads may be negative (crops). Padded dims may have
// symbolic sizes (each check is a guard); bool inputs are rejected as in ATen.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/op_registry.h"
#include "core/ops/pad_resample_args.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

MetaFn PadMeta(const PadDef& def) {
  return [def](
             const MetaArgs& args) -> absl::StatusOr<std::vector<TensorMeta>> {
    const TensorMeta self = args.tensor(0);
    const int rank = self.dim();
    // The channel dim is part of the "non-batch" dims.
    const int min_rank = def.dims + 1;
    bool ok = rank == min_rank || rank == min_rank + 1;
    for (int d = rank - min_rank; ok && d < rank; ++d) {
      if (d >= 0 && self.sizes[d] == 0) ok = false;
    }
    if (!ok) {
      return ArgError(
          "self",
          absl::StrCat("Expected ", min_rank, "D or ", min_rank + 1,
                       "D (batch mode) tensor with possibly 0 batch size and "
                       "other non-zero dimensions for input, but got: ",
                       SymShapeToString(self.sizes)));
    }
    if (self.dtype == DType::kBool) {
      return ArgError(
          "self",
          absl::StrCat(def.reflect ? "reflection" : "replication", "_pad",
                       def.dims, "d is not implemented for bool"));
    }
    const std::vector<SymInt> pad_sym = args.sym_int_list(1);
    if (static_cast<int>(pad_sym.size()) != 2 * def.dims) {
      return ArgError(
          "padding", absl::StrCat("padding size is expected to be ",
                                  2 * def.dims, ", but got: ", pad_sym.size()));
    }
    for (const SymInt& p : pad_sym) {
      if (p.is_symbolic()) return ArgError("padding", "symbolic padding");
    }
    SymShape sizes = self.sizes;
    for (int k = 0; k < def.dims; ++k) {
      const int d = rank - 1 - k;
      const int64_t lo = pad_sym[2 * k].hint(), hi = pad_sym[2 * k + 1].hint();
      // Symbolic sizes stay symbolic; each check is a guard.
      const SymInt n = self.sizes[d];
      if (def.reflect && (n <= SymInt(lo) || n <= SymInt(hi))) {
        return ArgError(
            "padding",
            absl::StrCat("Padding size should be less than the corresponding "
                         "input dimension, but got: padding (",
                         lo, ", ", hi, ") at dimension ", d, " of input ",
                         SymShapeToString(self.sizes)));
      }
      // Replication and constant pads have no bound: their sum, and the
      // output size, must not wrap past int64.
      int64_t pads = 0, total = 0;
      if (__builtin_add_overflow(lo, hi, &pads) ||
          __builtin_add_overflow(n.hint(), pads, &total)) {
        return ArgError(
            "padding",
            absl::StrCat("padding (", lo, ", ", hi, ") at dimension ", d,
                         " of input ", SymShapeToString(self.sizes),
                         " gives an output size past int64"));
      }
      const SymInt out = n + SymInt(pads);
      if (out < 1) {
        return ArgError("padding",
                        absl::StrCat("the input size ", n.ToString(),
                                     " at dimension ", d, " with padding (", lo,
                                     ", ", hi, ") gives the output size ",
                                     out.ToString(), "; it must be >= 1"));
      }
      sizes[d] = out;
    }
    return std::vector<TensorMeta>{
        TensorMeta{self.dtype, std::move(sizes), self.device}};
  };
}

}  // namespace

absl::Status RegisterPaddingOps(OpRegistry& registry) {
  for (const PadDef& def : kPadOps) {
    RETURN_IF_ERROR(registry.Register(def.schema, PadMeta(def)));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
