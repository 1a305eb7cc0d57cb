// ONNX operators that make or index tensors: Constant, ConstantOfShape,
// Shape, Size, Range, EyeLike, Cast, CastLike, Gather, GatherElements,
// ScatterElements, CumSum, NonZero. Shape and Size of static sizes, and
// Gather/Cast on values known at load, give values known at load: shape
// arithmetic folds before the graph sees it.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_tensor.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// Known values this small stay on the importer's side (shape arithmetic);
// larger ones are graph constants or computed.
constexpr int64_t kMaxFoldedElements = 64;
// Values the importer computes itself (Range, EyeLike) are bounded so a few
// bytes of model cannot ask for gigabytes.
constexpr int64_t kMaxConstantElements = int64_t{1} << 24;

absl::StatusOr<Tensor> Int64Vector(const std::vector<int64_t>& values,
                                   bool scalar = false) {
  Shape sizes;
  if (!scalar) sizes.push_back(static_cast<int64_t>(values.size()));
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, sizes));
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return t;
}

// Element k of an integer or bool tensor as int64.
int64_t IntAt(const Tensor& t, int64_t k) {
  switch (t.dtype()) {
    case DType::kInt64:
      return t.data_as<int64_t>()[k];
    case DType::kInt32:
      return t.data_as<int32_t>()[k];
    case DType::kInt16:
      return t.data_as<int16_t>()[k];
    case DType::kInt8:
      return t.data_as<int8_t>()[k];
    default:
      return t.data_as<uint8_t>()[k];
  }
}

absl::Status MapConstant(OnnxNodeContext& ctx) {
  OnnxAttributes& attrs = ctx.attrs();
  if (const onnx::AttributeProto* v = attrs.Raw("value")) {
    if (!v->has_t()) return absl::InvalidArgumentError("value is not a tensor");
    ASSIGN_OR_RETURN(Tensor t,
                     TensorFromOnnx(v->t(), ctx.state().external_data_dir(),
                                    "attribute 'value'"));
    return ctx.SetOutputConstant(0, t);
  }
  ASSIGN_OR_RETURN(auto ints, attrs.Ints("value_ints"));
  if (ints.has_value()) {
    ASSIGN_OR_RETURN(Tensor t, Int64Vector(*ints));
    return ctx.SetOutputConstant(0, t);
  }
  ASSIGN_OR_RETURN(auto i, attrs.OptionalInt("value_int"));
  if (i.has_value()) {
    ASSIGN_OR_RETURN(Tensor t, Int64Vector({*i}, /*scalar=*/true));
    return ctx.SetOutputConstant(0, t);
  }
  ASSIGN_OR_RETURN(auto floats, attrs.Floats("value_floats"));
  if (floats.has_value() || attrs.Has("value_float")) {
    std::vector<float> values;
    if (floats.has_value()) {
      values = *floats;
    } else {
      ASSIGN_OR_RETURN(float f, attrs.Float("value_float", 0));
      values.push_back(f);
    }
    Shape sizes;
    if (floats.has_value()) sizes.push_back(values.size());
    ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kFloat32, sizes));
    std::copy(values.begin(), values.end(), t.data_as<float>());
    return ctx.SetOutputConstant(0, t);
  }
  return absl::UnimplementedError(
      "only value, value_int(s) and value_float(s) are supported");
}

absl::Status MapConstantOfShape(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstInts(0, "input"));
  ASSIGN_OR_RETURN(Tensor fill, ConstantOfShapeFill(ctx));
  const Shape sizes(shape.begin(), shape.end());
  ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(sizes));
  if (numel <= kMaxFoldedElements) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(fill.dtype(), sizes));
    for (int64_t k = 0; k < numel; ++k) {
      std::memcpy(static_cast<char*>(t.data()) + k * t.item_size(), fill.data(),
                  t.item_size());
    }
    return ctx.SetOutputConstant(0, t);
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.full.default",
                                     {IntList(shape), ScalarArg(fill.Item())},
                                     {{"dtype", Arg::OfDType(fill.dtype())}}));
  return ctx.SetOutput(0, out);
}

absl::Status MapShape(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  const int64_t rank = in.size();
  ASSIGN_OR_RETURN(int64_t start, ctx.attrs().Int("start", 0));
  ASSIGN_OR_RETURN(int64_t end, ctx.attrs().Int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ASSIGN_OR_RETURN(Tensor t, Int64Vector(std::vector<int64_t>(
                                 in.begin() + start, in.begin() + end)));
  return ctx.SetOutputConstant(0, t);
}

absl::Status MapSize(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  int64_t numel = 1;
  for (int64_t s : in) numel *= s;
  ASSIGN_OR_RETURN(Tensor t, Int64Vector({numel}, /*scalar=*/true));
  return ctx.SetOutputConstant(0, t);
}

absl::Status MapRange(OnnxNodeContext& ctx) {
  const Tensor *start = ctx.NeededConstant(0), *limit = ctx.NeededConstant(1),
               *delta = ctx.NeededConstant(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    return absl::UnimplementedError(
        "start, limit and delta must be known at load");
  }
  const DType dtype = start->dtype();
  const double s = start->Item().to_double(), l = limit->Item().to_double(),
               d = delta->Item().to_double();
  if (d == 0) return absl::InvalidArgumentError("delta is 0");
  const double count = std::ceil((l - s) / d);
  if (!(count <= static_cast<double>(kMaxConstantElements))) {
    return absl::UnimplementedError(
        absl::StrCat("a range of ", count, " elements (folded at load up to ",
                     kMaxConstantElements, ")"));
  }
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, {n}));
  // Each element as start + i * delta in the input's type (ONNX's loop
  // accumulates; for integers the two agree, for floats within rounding).
  for (int64_t i = 0; i < n; ++i) {
    const double v = s + static_cast<double>(i) * d;
    switch (dtype) {
      case DType::kFloat32:
        // Accumulated as ONNX's definition (a loop adding delta) does.
        t.data_as<float>()[i] =
            i == 0 ? start->data_as<float>()[0]
                   : t.data_as<float>()[i - 1] + delta->data_as<float>()[0];
        break;
      case DType::kFloat64:
        t.data_as<double>()[i] = v;
        break;
      case DType::kInt64:
        t.data_as<int64_t>()[i] =
            start->data_as<int64_t>()[0] + i * delta->data_as<int64_t>()[0];
        break;
      case DType::kInt32:
        t.data_as<int32_t>()[i] = static_cast<int32_t>(
            start->data_as<int32_t>()[0] + i * delta->data_as<int32_t>()[0]);
        break;
      case DType::kInt16:
        t.data_as<int16_t>()[i] = static_cast<int16_t>(
            start->data_as<int16_t>()[0] + i * delta->data_as<int16_t>()[0]);
        break;
      default:
        return absl::UnimplementedError(
            absl::StrCat("Range of ", DTypeName(dtype)));
    }
  }
  return ctx.SetOutputConstant(0, t);
}

absl::Status MapEyeLike(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t k, ctx.attrs().Int("k", 0));
  ASSIGN_OR_RETURN(std::optional<int64_t> dtype_attr,
                   ctx.attrs().OptionalInt("dtype"));
  ASSIGN_OR_RETURN(TensorMeta meta, ctx.InputMeta(0));
  ASSIGN_OR_RETURN(Shape in, ctx.StaticShape(0));
  if (in.size() != 2) return absl::InvalidArgumentError("input is not 2-D");
  ASSIGN_OR_RETURN(int64_t numel, CheckedNumel(in));
  if (numel > kMaxConstantElements) {
    return absl::UnimplementedError(absl::StrCat(
        "an EyeLike of ", numel, " elements (folded at load up to ",
        kMaxConstantElements, ")"));
  }
  DType dtype = meta.dtype;
  if (dtype_attr.has_value()) {
    ASSIGN_OR_RETURN(dtype, DTypeFromOnnx(*dtype_attr));
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(DType::kFloat64, in));
  for (int64_t r = 0; r < in[0]; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < in[1]) t.data_as<double>()[r * in[1] + c] = 1;
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(dtype, in));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.data_as<double>()[i] == 0) continue;
    const Tensor one = Tensor::FromScalar(Scalar(int64_t{1}), dtype);
    std::memcpy(static_cast<char*>(out.data()) + i * out.item_size(),
                one.data(), out.item_size());
  }
  return ctx.SetOutputConstant(0, out);
}

absl::Status MapCast(OnnxNodeContext& ctx) {
  DType to;
  if (ctx.node().op_type() == "CastLike") {
    ASSIGN_OR_RETURN(TensorMeta like, ctx.InputMeta(1));
    to = like.dtype;
  } else {
    ASSIGN_OR_RETURN(std::optional<int64_t> attr,
                     ctx.attrs().OptionalInt("to"));
    if (!attr.has_value()) return absl::InvalidArgumentError("'to' missing");
    ASSIGN_OR_RETURN(to, DTypeFromOnnx(*attr));
  }
  // Integer values known at load convert at load (shape arithmetic; a
  // window's size made a float for Range).
  if (const Tensor* c = ctx.InputConstant(0)) {
    if (IsIntegral(c->dtype(), false) &&
        (IsIntegral(to, false) || to == DType::kFloat32 ||
         to == DType::kFloat64) &&
        c->numel() <= kMaxFoldedElements) {
      ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(to, c->sizes()));
      for (int64_t k = 0; k < c->numel(); ++k) {
        const Tensor v = Tensor::FromScalar(Scalar(IntAt(*c, k)), to);
        std::memcpy(static_cast<char*>(t.data()) + k * t.item_size(), v.data(),
                    t.item_size());
      }
      return ctx.SetOutputConstant(0, t);
    }
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten._to_copy.default", {x},
                                     {{"dtype", Arg::OfDType(to)}}));
  return ctx.SetOutput(0, out);
}

// Indices with negative entries counted from the end of a dim of `size`.
absl::StatusOr<Arg> NormalizedIndices(OnnxNodeContext& ctx, int input,
                                      int64_t size) {
  if (const Tensor* c = ctx.InputConstant(input)) {
    if (!IsIntegral(c->dtype(), false)) {
      return absl::InvalidArgumentError("indices are not integers");
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kInt64, c->sizes()));
    for (int64_t k = 0; k < c->numel(); ++k) {
      int64_t v = IntAt(*c, k);
      if (v < -size || v >= size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "index ", v, " is out of range for a dim of size ", size));
      }
      t.data_as<int64_t>()[k] = v < 0 ? v + size : v;
    }
    const std::string name = ctx.InternalName(absl::StrCat("indices", input));
    if (ctx.state().Find(name) == nullptr) {
      RETURN_IF_ERROR(ctx.state().AddKnownValue(name, t));
    }
    return ctx.state().GraphValue(name);
  }
  ASSIGN_OR_RETURN(Arg idx, ctx.Input(input));
  ASSIGN_OR_RETURN(Arg neg, ctx.Emit("aten.lt.Scalar", {idx, Arg::Int(0)}));
  ASSIGN_OR_RETURN(Arg wrapped, ctx.Emit("aten.add.Scalar",
                                         {idx, Arg::Int(size), Arg::Int(1)}));
  return ctx.Emit("aten.where.self", {neg, wrapped, idx});
}

absl::Status MapGather(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(Shape data, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, data.size(), "axis"));
  ASSIGN_OR_RETURN(Shape index_shape, ctx.StaticShape(1));
  // Shape arithmetic: a known vector indexed by known indices.
  const Tensor* cdata = ctx.InputConstant(0);
  const Tensor* cindex = ctx.InputConstant(1);
  if (cdata != nullptr && cindex != nullptr && data.size() == 1 &&
      IsIntegral(cdata->dtype(), false) &&
      cindex->numel() <= kMaxFoldedElements) {
    std::vector<int64_t> values;
    for (int64_t k = 0; k < cindex->numel(); ++k) {
      int64_t i = IntAt(*cindex, k);
      if (i < 0) i += data[0];
      if (i < 0 || i >= data[0]) {
        return absl::InvalidArgumentError(
            absl::StrCat("index ", i, " out of range"));
      }
      values.push_back(IntAt(*cdata, i));
    }
    if (cdata->dtype() == DType::kInt64) {
      ASSIGN_OR_RETURN(Tensor t, Int64Vector(values, cindex->dim() == 0));
      if (cindex->dim() <= 1) return ctx.SetOutputConstant(0, t);
    }
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg idx, NormalizedIndices(ctx, 1, data[axis]));
  ASSIGN_OR_RETURN(Arg flat, ReshapeTo(ctx, idx, {-1}));
  ASSIGN_OR_RETURN(Arg picked, ctx.Emit("aten.index_select.default",
                                        {x, Arg::Int(axis), flat}));
  std::vector<int64_t> out_shape(data.begin(), data.begin() + axis);
  out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
  out_shape.insert(out_shape.end(), data.begin() + axis + 1, data.end());
  ASSIGN_OR_RETURN(Arg out, ReshapeTo(ctx, picked, out_shape));
  return ctx.SetOutput(0, out);
}

absl::Status MapGatherElements(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(Shape data, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, data.size(), "axis"));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg idx, NormalizedIndices(ctx, 1, data[axis]));
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit("aten.gather.default", {x, Arg::Int(axis), idx}));
  return ctx.SetOutput(0, out);
}

absl::Status MapScatterElements(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  std::string reduction = "none";
  if (ctx.node().op_type() == "ScatterElements" && ctx.opset() >= 16) {
    ASSIGN_OR_RETURN(reduction, ctx.attrs().String("reduction", "none"));
  }
  ASSIGN_OR_RETURN(Shape data, ctx.StaticShape(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, data.size(), "axis"));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg idx, NormalizedIndices(ctx, 1, data[axis]));
  ASSIGN_OR_RETURN(Arg updates, ctx.Input(2));
  Arg out;
  if (reduction == "none") {
    ASSIGN_OR_RETURN(
        out, ctx.Emit("aten.scatter.src", {x, Arg::Int(axis), idx, updates}));
  } else if (reduction == "add" || reduction == "mul") {
    ASSIGN_OR_RETURN(
        out, ctx.Emit("aten.scatter_reduce.two",
                      {x, Arg::Int(axis), idx, updates,
                       Arg::String(reduction == "add" ? "sum" : "prod")}));
  } else {
    return absl::UnimplementedError(
        absl::StrCat("reduction '", reduction, "'"));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapCumSum(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t exclusive, ctx.attrs().Int("exclusive", 0));
  ASSIGN_OR_RETURN(int64_t reverse, ctx.attrs().Int("reverse", 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> axis_value, ctx.ConstInts(1, "axis"));
  if (axis_value.size() != 1)
    return absl::InvalidArgumentError("axis is not a scalar");
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const DType dtype = ctx.Meta(x).dtype;
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(axis_value[0], ctx.Meta(x).dim(), "axis"));
  Arg in = x;
  if (reverse) {
    ASSIGN_OR_RETURN(in, ctx.Emit("aten.flip.default", {x, IntList({axis})}));
  }
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit("aten.cumsum.default", {in, Arg::Int(axis)},
                            {{"dtype", Arg::OfDType(dtype)}}));
  if (exclusive) {
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.sub.Tensor", {out, in}));
  }
  if (reverse) {
    ASSIGN_OR_RETURN(out,
                     ctx.Emit("aten.flip.default", {out, IntList({axis})}));
  }
  return ctx.SetOutput(0, out);
}

absl::Status MapNonZero(OnnxNodeContext& ctx) {
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg nz, ctx.Emit("aten.nonzero.default", {x}));
  ASSIGN_OR_RETURN(Arg t,
                   ctx.Emit("aten.permute.default", {nz, IntList({1, 0})}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {t}));
  return ctx.SetOutput(0, out);
}

}  // namespace

void AddTensorOnnxOps(OnnxOpTable& table) {
  table.Add("Constant", MapConstant);
  table.Add("ConstantOfShape", MapConstantOfShape);
  table.Add("Shape", MapShape);
  table.Add("Size", MapSize);
  table.Add("Range", MapRange);
  table.Add("EyeLike", MapEyeLike);
  table.Add("Cast", MapCast);
  table.Add("CastLike", MapCast);
  table.Add("Gather", MapGather);
  table.Add("GatherElements", MapGatherElements);
  table.Add("ScatterElements", MapScatterElements);
  table.Add("Scatter", MapScatterElements);
  table.Add("CumSum", MapCumSum);
  table.Add("NonZero", MapNonZero);
}

}  // namespace guardjit
