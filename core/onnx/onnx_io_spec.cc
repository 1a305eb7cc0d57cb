#include "core/onnx/onnx_io_spec.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_tensor.h"
#include "core/status_macros.h"

namespace guardjit {

absl::StatusOr<IoSpec> IoSpecFromOnnx(const onnx::ValueInfoProto& info,
                                      absl::string_view what) {
  IoSpec spec;
  if (!info.has_type() || !info.type().has_tensor_type()) return spec;
  const onnx::TypeProto::Tensor& type = info.type().tensor_type();
  if (type.elem_type() != onnx::TensorProto::UNDEFINED) {
    absl::StatusOr<DType> dtype = DTypeFromOnnx(type.elem_type());
    if (dtype.ok()) spec.dtype = *dtype;
  }
  if (!type.has_shape()) return spec;
  if (type.shape().dim_size() > kMaxIoRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rank ", type.shape().dim_size(),
                     " is past the limit of ", kMaxIoRank));
  }
  std::vector<IoDim> dims;
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const onnx::TensorShapeProto::Dimension& dim = type.shape().dim(d);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": dim ", d, " is ", dim.dim_value()));
      }
      dims.push_back(IoDim::Static(dim.dim_value()));
    } else if (dim.has_dim_param() && IsValidSymbolName(dim.dim_param())) {
      dims.push_back(IoDim::Dynamic(dim.dim_param()));
    } else {
      dims.push_back(IoDim::Dynamic());
    }
  }
  spec.dims = std::move(dims);
  RETURN_IF_ERROR(ValidateIoSpec(spec, what));
  return spec;
}

}  // namespace guardjit
