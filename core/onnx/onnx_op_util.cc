#include "core/onnx/onnx_op_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace guardjit {

Arg IntList(const std::vector<int64_t>& values) {
  Arg::List items;
  for (int64_t v : values) items.push_back(Arg::Int(v));
  return Arg::OfList(std::move(items));
}

absl::StatusOr<Arg> ReshapeTo(OnnxNodeContext& ctx, const Arg& x,
                              const std::vector<int64_t>& sizes) {
  const TensorMeta& meta = ctx.Meta(x);
  if (ctx.state().IsStatic(meta)) {
    const Shape have = meta.shape();
    if (std::equal(have.begin(), have.end(), sizes.begin(), sizes.end())) {
      return x;
    }
  }
  ASSIGN_OR_RETURN(Arg copy, ctx.Emit("aten.clone.default", {x}));
  return ctx.Emit("aten.view.default", {copy, IntList(sizes)});
}

absl::StatusOr<Arg> CastTo(OnnxNodeContext& ctx, const Arg& x, DType dtype) {
  if (ctx.Meta(x).dtype == dtype) return x;
  return ctx.Emit("aten._to_copy.default", {x},
                  {{"dtype", Arg::OfDType(dtype)}});
}

absl::StatusOr<Arg> ScalarConstant(OnnxNodeContext& ctx, double value,
                                   DType dtype) {
  return ctx.Emit("aten.scalar_tensor.default",
                  {IsFloating(dtype) ? Arg::Float(value)
                                     : Arg::Int(static_cast<int64_t>(value))},
                  {{"dtype", Arg::OfDType(dtype)}});
}

absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(OnnxNodeContext& ctx,
                                                           int input_since,
                                                           int input_index) {
  if (input_since == 0 || ctx.opset() < input_since) {
    return ctx.attrs().Ints("axes");
  }
  if (!ctx.has_input(input_index)) {
    return std::optional<std::vector<int64_t>>();
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                   ctx.ConstInts(input_index, "axes"));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(
    const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, rank, "axis"));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", a, " is given twice"));
    }
    out.push_back(n);
  }
  return out;
}

absl::Status RequireFloat(const TensorMeta& meta, absl::string_view what) {
  if (IsFloating(meta.dtype)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      what, " of dtype ", DTypeName(meta.dtype), " is not supported"));
}

}  // namespace guardjit
