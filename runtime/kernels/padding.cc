// Reference kernels of reflection_pad{1,2,3}d and replication_pad{2,3}d:
// every output element is the input's at PadSourceIndex along each padded
// dim (core/ops/pad_resample_args.h), the leading dims unchanged. Any input
// strides; the output is contiguous. The shape rule checked the arguments.

#include <vector>

#include "core/op_schema.h"
#include "core/ops/pad_resample_args.h"
#include "core/status_macros.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

KernelFn PadKernel(const PadDef& def) {
  return [def](const KernelArgs& args, absl::Span<const TensorMeta> out_meta)
             -> absl::StatusOr<std::vector<Tensor>> {
    const Tensor self = args.tensor(0);
    const std::vector<int64_t> pad = args.int_list(1);
    ASSIGN_OR_RETURN(Tensor out,
                     Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
    const int rank = out.dim();
    if (out.numel() == 0) return std::vector<Tensor>{out};
    std::vector<int64_t> lo(rank, 0);
    for (int k = 0; k < def.dims; ++k) lo[rank - 1 - k] = pad[2 * k];
    const int first_padded = rank - def.dims;
    // Source offset per output index along each dim, precomputed.
    std::vector<std::vector<int64_t>> src_offset(rank);
    for (int d = 0; d < rank; ++d) {
      for (int64_t i = 0; i < out.size(d); ++i) {
        const int64_t j =
            d < first_padded
                ? i
                : PadSourceIndex(def.reflect, i, lo[d], self.size(d));
        src_offset[d].push_back(j * self.stride(d));
      }
    }
    VisitDType(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = self.data_as<T>();
      T* o = out.data_as<T>();
      std::vector<int64_t> idx(rank, 0);
      for (int64_t n = 0; n < out.numel(); ++n) {
        int64_t src = 0;
        for (int d = 0; d < rank; ++d) src += src_offset[d][idx[d]];
        o[n] = in[src];
        for (int d = rank - 1; d >= 0; --d) {
          if (++idx[d] < out.size(d)) break;
          idx[d] = 0;
        }
      }
    });
    return std::vector<Tensor>{out};
  };
}

}  // namespace

absl::Status RegisterPaddingKernels(KernelRegistry& registry) {
  for (const PadDef& def : kPadOps) {
    ASSIGN_OR_RETURN(OpSchema schema, ParseOpSchema(def.schema));
    RETURN_IF_ERROR(registry.Register(schema.QualifiedName(), PadKernel(def)));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
