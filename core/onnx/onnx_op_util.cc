#include "core/onnx/onnx_op_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_tensor.h"
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
  if (ctx.state().IsStaticValue(x)) {
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

absl::StatusOr<SliceArgs> SliceArgsOf(OnnxNodeContext& ctx) {
  SliceArgs a;
  if (ctx.opset() < 10) {
    ASSIGN_OR_RETURN(auto s, ctx.attrs().Ints("starts"));
    ASSIGN_OR_RETURN(auto e, ctx.attrs().Ints("ends"));
    ASSIGN_OR_RETURN(auto axes, ctx.attrs().Ints("axes"));
    if (!s.has_value() || !e.has_value()) {
      return absl::InvalidArgumentError("starts or ends missing");
    }
    a.starts = *s, a.ends = *e;
    if (axes.has_value()) a.axes = *axes;
    return a;
  }
  ASSIGN_OR_RETURN(a.starts, ctx.ConstInts(1, "starts"));
  ASSIGN_OR_RETURN(a.ends, ctx.ConstInts(2, "ends"));
  if (ctx.has_input(3)) {
    ASSIGN_OR_RETURN(a.axes, ctx.ConstInts(3, "axes"));
  }
  if (ctx.has_input(4)) {
    ASSIGN_OR_RETURN(a.steps, ctx.ConstInts(4, "steps"));
  }
  return a;
}

absl::StatusOr<int64_t> SplitNumOutputs(OnnxNodeContext& ctx, bool has_sizes) {
  if (ctx.opset() < 18) return 0;
  ASSIGN_OR_RETURN(int64_t n, ctx.attrs().Int("num_outputs", 0));
  if (n != 0 && has_sizes) {
    return absl::InvalidArgumentError("both split and num_outputs are given");
  }
  if (n != 0 && n != ctx.num_outputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_outputs ", n, " but the node has ", ctx.num_outputs(),
                     " outputs"));
  }
  return n;
}

absl::StatusOr<Tensor> ConstantOfShapeFill(OnnxNodeContext& ctx) {
  const onnx::AttributeProto* v = ctx.attrs().Raw("value");
  if (v == nullptr) return Tensor::Zeros(DType::kFloat32, {1});
  ASSIGN_OR_RETURN(Tensor fill,
                   TensorFromOnnx(v->t(), ctx.state().external_data_dir(),
                                  "attribute 'value'"));
  if (fill.numel() != 1) {
    return absl::InvalidArgumentError("value has more than one element");
  }
  return fill;
}

Arg ScalarArg(const Scalar& value) {
  return value.is_float()  ? Arg::Float(value.to_double())
         : value.is_bool() ? Arg::Bool(value.to_bool())
                           : Arg::Int(value.to_int());
}

namespace {

// Known vectors longer than this are data, not shapes.
constexpr int64_t kMaxShapeElements = 64;

const char* TargetOf(SymOp op) {
  for (const SymOpDef& def : kSymOps) {
    if (def.op == op) return def.target;
  }
  return "";
}

}  // namespace

std::optional<SizeElements> SizeElementsOf(OnnxNodeContext& ctx, int i) {
  const OnnxValue* v =
      ctx.has_input(i) ? ctx.state().Find(ctx.node().input(i)) : nullptr;
  if (v == nullptr) return std::nullopt;
  if (v->sizes.has_value()) {
    return SizeElements{*v->sizes, v->meta.dim() == 0};
  }
  if (!v->constant.has_value()) return std::nullopt;
  const Tensor& t = *v->constant;
  if ((t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32) ||
      t.dim() > 1 || t.numel() > kMaxShapeElements) {
    return std::nullopt;
  }
  SizeElements e{{}, t.dim() == 0};
  for (int64_t k = 0; k < t.numel(); ++k) {
    e.sizes.push_back(Arg::Int(t.dtype() == DType::kInt64
                                   ? t.data_as<int64_t>()[k]
                                   : t.data_as<int32_t>()[k]));
  }
  return e;
}

absl::StatusOr<Arg> SymSizeOf(OnnxNodeContext& ctx, const Arg& x, int64_t d) {
  if (ctx.state().IsStaticDim(x, d)) {
    return Arg::Int(ctx.Meta(x).sizes[d].hint());
  }
  return ctx.Emit("aten.sym_size.int", {x, Arg::Int(d)});
}

absl::StatusOr<std::vector<Arg>> SymSizesOf(OnnxNodeContext& ctx,
                                            const Arg& x) {
  std::vector<Arg> sizes;
  for (int64_t d = 0; d < ctx.Meta(x).dim(); ++d) {
    ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, x, d));
    sizes.push_back(std::move(s));
  }
  return sizes;
}

absl::StatusOr<Arg> SymArith(OnnxNodeContext& ctx, SymOp op, const Arg& a,
                             const Arg& b) {
  if (a.is_int() && b.is_int()) {
    if (op == SymOp::kFloorDiv && b.as_int() == 0) {
      return absl::InvalidArgumentError("division of sizes by zero");
    }
    return Arg::Int(
        ApplySymOp<SymInt>(op, SymInt(a.as_int()), SymInt(b.as_int())).hint());
  }
  if (op == SymOp::kMul) {
    if (a.is_int() && a.as_int() == 1) return b;
    if (b.is_int() && b.as_int() == 1) return a;
  }
  return ctx.Emit(TargetOf(op), {a, b});
}

absl::StatusOr<Arg> ViewAs(OnnxNodeContext& ctx, const Arg& x,
                           std::vector<Arg> sizes, bool contiguous) {
  int inferred = 0;
  for (const Arg& s : sizes) inferred += s.is_int() && s.as_int() == -1;
  if (inferred > 1) return absl::InvalidArgumentError("two -1 in shape");
  Arg in = x;
  if (!contiguous) {
    ASSIGN_OR_RETURN(in, ctx.Emit("aten.clone.default", {x}));
  }
  return ctx.Emit("aten.view.default", {in, SizeList(std::move(sizes))});
}

}  // namespace guardjit
