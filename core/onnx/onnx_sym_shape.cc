#include "core/onnx/onnx_sym_shape.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_util.h"
#include "core/onnx/onnx_tensor.h"
#include "core/ops/sym_ops.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

const OnnxValue* ValueOf(OnnxNodeContext& ctx, int i) {
  return ctx.has_input(i) ? ctx.state().Find(ctx.node().input(i)) : nullptr;
}

bool HasSizes(OnnxNodeContext& ctx, int i) {
  return ctx.InputSizes(i) != nullptr;
}

absl::StatusOr<bool> MapShape(OnnxNodeContext& ctx) {
  const OnnxValue* v = ValueOf(ctx, 0);
  if (v == nullptr || v->constant.has_value() || ctx.IsStaticInput(0)) {
    return false;
  }
  const int64_t rank = v->meta.dim();
  ASSIGN_OR_RETURN(int64_t start, ctx.attrs().Int("start", 0));
  ASSIGN_OR_RETURN(int64_t end, ctx.attrs().Int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<Arg> sizes;
  if (v->sizes.has_value()) {
    // The shape of a value of size expressions is known.
    for (int64_t d = start; d < end; ++d) {
      sizes.push_back(Arg::Int(v->meta.sizes[d].hint()));
    }
  } else {
    ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
    for (int64_t d = start; d < end; ++d) {
      ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, x, d));
      sizes.push_back(std::move(s));
    }
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(sizes), /*scalar=*/false));
  return true;
}

absl::StatusOr<bool> MapSize(OnnxNodeContext& ctx) {
  const OnnxValue* v = ValueOf(ctx, 0);
  if (v == nullptr || v->constant.has_value() || v->sizes.has_value() ||
      ctx.IsStaticInput(0)) {
    return false;
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg n, ctx.Emit("aten.sym_numel.default", {x}));
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, {n}, /*scalar=*/true));
  return true;
}

absl::StatusOr<bool> MapGather(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 0)) return false;
  const std::vector<Arg>& data = *ctx.InputSizes(0);
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  if (axis != 0 && axis != -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " of a 1-d value of sizes"));
  }
  std::optional<SizeElements> indices = SizeElementsOf(ctx, 1);
  if (!indices.has_value() || HasSizes(ctx, 1)) {
    return absl::UnimplementedError(
        "gathers from sizes computed at run time with indices not known at "
        "load");
  }
  const int64_t n = static_cast<int64_t>(data.size());
  std::vector<Arg> picked;
  for (const Arg& a : indices->sizes) {
    int64_t i = a.as_int();
    if (i < -n || i >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("index ", i, " is out of range for ", n, " sizes"));
    }
    picked.push_back(data[i < 0 ? i + n : i]);
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(picked), indices->scalar));
  return true;
}

absl::StatusOr<bool> MapSlice(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 0)) return false;
  const std::vector<Arg>& data = *ctx.InputSizes(0);
  ASSIGN_OR_RETURN(SliceArgs args, SliceArgsOf(ctx));
  const std::vector<int64_t>& starts = args.starts;
  const std::vector<int64_t>& ends = args.ends;
  const std::vector<int64_t>& axes = args.axes;
  const std::vector<int64_t>& steps = args.steps;
  if (starts.size() != 1 || ends.size() != 1 || axes.size() > 1 ||
      steps.size() > 1 || (!axes.empty() && axes[0] != 0 && axes[0] != -1)) {
    return absl::InvalidArgumentError(
        "a slice of a 1-d value of sizes takes one start, end and axis 0");
  }
  const int64_t n = static_cast<int64_t>(data.size());
  const int64_t step = steps.empty() ? 1 : steps[0];
  if (step == 0) return absl::InvalidArgumentError("step 0");
  int64_t start = starts[0], end = ends[0];
  if (start < 0) start += n;
  if (end < 0 && end > std::numeric_limits<int64_t>::min() + n) end += n;
  std::vector<Arg> picked;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
    for (int64_t p = start; p < end; p += step) picked.push_back(data[p]);
  } else if (n > 0) {
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
    for (int64_t p = start; p > end; p += step) picked.push_back(data[p]);
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(picked), /*scalar=*/false));
  return true;
}

absl::StatusOr<bool> MapConcat(OnnxNodeContext& ctx) {
  bool any = false;
  for (int i = 0; i < ctx.num_inputs(); ++i) any = any || HasSizes(ctx, i);
  if (!any) return false;
  std::vector<SizeElements> parts;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    std::optional<SizeElements> e = SizeElementsOf(ctx, i);
    if (!e.has_value() || e->scalar) {
      return absl::UnimplementedError(absl::StrCat(
          "concatenates sizes computed at run time with input ", i,
          ", which is not a 1-d integer value known at load or of sizes"));
    }
    parts.push_back(*std::move(e));
  }
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  if (axis != 0 && axis != -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " of 1-d values of sizes"));
  }
  std::vector<Arg> joined;
  for (SizeElements& e : parts) {
    joined.insert(joined.end(), e.sizes.begin(), e.sizes.end());
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(joined), /*scalar=*/false));
  return true;
}

// Unsqueeze of a 0-d value of sizes along axis 0, Squeeze of a 1-d one of
// one element, Reshape between the two: the same element.
absl::StatusOr<bool> MapRegroup(OnnxNodeContext& ctx) {
  const std::vector<Arg>* sizes = ctx.InputSizes(0);
  if (sizes == nullptr) return false;
  const bool scalar = ValueOf(ctx, 0)->meta.dim() == 0;
  const std::string& op = ctx.node().op_type();
  bool out_scalar = scalar;
  if (op == "Unsqueeze" || op == "Squeeze") {
    ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, 13, 1));
    const bool axis0 =
        !axes.has_value() ||
        (axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1));
    if (op == "Unsqueeze" ? !scalar || !axes.has_value() || !axis0
                          : scalar || sizes->size() != 1 || !axis0) {
      return absl::UnimplementedError(absl::StrCat(
          op, " of sizes computed at run time to other than a 1-d value"));
    }
    out_scalar = op == "Squeeze";
  } else {  // Reshape
    ASSIGN_OR_RETURN(int64_t allowzero, ctx.attrs().Int("allowzero", 0));
    (void)allowzero;
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.ConstInts(1, "shape"));
    const bool one = sizes->size() == 1;
    if (shape.empty() && one) {
      out_scalar = true;
    } else if (shape.size() == 1 &&
               (shape[0] == -1 ||
                shape[0] == static_cast<int64_t>(sizes->size()))) {
      out_scalar = false;
    } else {
      return absl::UnimplementedError(
          "reshapes sizes computed at run time to other than a 0-d or 1-d "
          "value");
    }
  }
  RETURN_IF_ERROR(
      ctx.SetOutputSizes(0, *sizes, out_scalar, ValueOf(ctx, 0)->meta.dtype));
  return true;
}

absl::StatusOr<bool> MapCast(OnnxNodeContext& ctx) {
  const std::vector<Arg>* sizes = ctx.InputSizes(0);
  if (sizes == nullptr) return false;
  const OnnxValue* v = ValueOf(ctx, 0);
  DType to = v->meta.dtype;
  if (ctx.node().op_type() == "CastLike") {
    ASSIGN_OR_RETURN(TensorMeta like, ctx.InputMeta(1));
    to = like.dtype;
  } else if (ctx.node().op_type() == "Cast") {
    ASSIGN_OR_RETURN(std::optional<int64_t> attr,
                     ctx.attrs().OptionalInt("to"));
    if (!attr.has_value()) return absl::InvalidArgumentError("'to' missing");
    ASSIGN_OR_RETURN(to, DTypeFromOnnx(*attr));
    if (ctx.opset() >= 19) {
      ASSIGN_OR_RETURN(int64_t saturate, ctx.attrs().Int("saturate", 1));
      (void)saturate;  // only for float8 targets
    }
  }
  if (to != DType::kInt64 && to != DType::kInt32) {
    return absl::UnimplementedError(
        absl::StrCat("converts sizes computed at run time to ", DTypeName(to),
                     " (only int64 and int32 keep them sizes)"));
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, *sizes, v->meta.dim() == 0, to));
  return true;
}

absl::StatusOr<bool> MapArith(OnnxNodeContext& ctx) {
  if (ctx.num_inputs() != 2 || (!HasSizes(ctx, 0) && !HasSizes(ctx, 1))) {
    return false;
  }
  std::optional<SizeElements> a = SizeElementsOf(ctx, 0),
                              b = SizeElementsOf(ctx, 1);
  if (!a.has_value() || !b.has_value()) {
    return absl::UnimplementedError(
        "computes with sizes computed at run time and a tensor that is not "
        "an integer value known at load");
  }
  const std::string& op_type = ctx.node().op_type();
  const SymOp op = op_type == "Add"   ? SymOp::kAdd
                   : op_type == "Sub" ? SymOp::kSub
                   : op_type == "Mul" ? SymOp::kMul
                                      : SymOp::kFloorDiv;
  const size_t na = a->sizes.size(), nb = b->sizes.size();
  if (na != nb && na != 1 && nb != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sizes of ", na, " and ", nb, " elements do not broadcast"));
  }
  if (op == SymOp::kFloorDiv) {
    // ONNX's integer Div truncates; on sizes (non-negative) by a positive
    // divisor that is floor division.
    for (const Arg& d : b->sizes) {
      if (d.is_int() && d.as_int() <= 0) {
        return absl::UnimplementedError(
            absl::StrCat("divides sizes by ", d.as_int()));
      }
    }
    for (const Arg& d : a->sizes) {
      if (d.is_int() && d.as_int() < 0) {
        return absl::UnimplementedError(
            absl::StrCat("divides ", d.as_int(), " by sizes"));
      }
    }
  }
  std::vector<Arg> out;
  for (size_t k = 0; k < std::max(na, nb); ++k) {
    ASSIGN_OR_RETURN(Arg r, SymArith(ctx, op, a->sizes[na == 1 ? 0 : k],
                                     b->sizes[nb == 1 ? 0 : k]));
    out.push_back(std::move(r));
  }
  const OnnxValue* v = ValueOf(ctx, HasSizes(ctx, 0) ? 0 : 1);
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(out), a->scalar && b->scalar,
                                     v->meta.dtype));
  return true;
}

// Comparisons and logic on sizes (an If's condition over them, as exporters
// of torch.cond write `x.shape[0] > 4`): operator.eq/lt/gt/le/ge per element
// (numpy broadcasting of a single element), bool values of size expressions
// that ImportIf takes as a cond's predicate. Not is a comparison with 0, And
// a product, Or a sum compared with 0.
absl::StatusOr<bool> MapCompare(OnnxNodeContext& ctx) {
  const std::string& op_type = ctx.node().op_type();
  if (op_type == "Not") {
    if (ctx.num_inputs() != 1 || !HasSizes(ctx, 0)) return false;
    std::vector<Arg> out;
    for (const Arg& a : *ctx.InputSizes(0)) {
      ASSIGN_OR_RETURN(Arg r, SymArith(ctx, SymOp::kEq, a, Arg::Int(0)));
      out.push_back(std::move(r));
    }
    RETURN_IF_ERROR(ctx.SetOutputSizes(
        0, std::move(out), ValueOf(ctx, 0)->meta.dim() == 0, DType::kBool));
    return true;
  }
  if (ctx.num_inputs() != 2) return false;
  std::optional<SizeElements> a = SizeElementsOf(ctx, 0),
                              b = SizeElementsOf(ctx, 1);
  if (!HasSizes(ctx, 0) && !HasSizes(ctx, 1)) {
    // Integers known at load (static sizes) fold to a bool known at load;
    // anything else is a tensor comparison.
    if (!a.has_value() || !b.has_value()) return false;
  } else if (!a.has_value() || !b.has_value()) {
    return absl::UnimplementedError(
        "compares sizes computed at run time with a tensor that is not an "
        "integer value known at load");
  }
  const size_t na = a->sizes.size(), nb = b->sizes.size();
  if (na != nb && na != 1 && nb != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sizes of ", na, " and ", nb, " elements do not broadcast"));
  }
  std::vector<Arg> out;
  for (size_t k = 0; k < std::max(na, nb); ++k) {
    const Arg& x = a->sizes[na == 1 ? 0 : k];
    const Arg& y = b->sizes[nb == 1 ? 0 : k];
    Arg r;
    if (op_type == "And") {
      ASSIGN_OR_RETURN(r, SymArith(ctx, SymOp::kMul, x, y));
    } else if (op_type == "Or") {
      ASSIGN_OR_RETURN(Arg sum, SymArith(ctx, SymOp::kAdd, x, y));
      ASSIGN_OR_RETURN(r, SymArith(ctx, SymOp::kGt, sum, Arg::Int(0)));
    } else {
      const SymOp op = op_type == "Equal"         ? SymOp::kEq
                       : op_type == "Less"        ? SymOp::kLt
                       : op_type == "Greater"     ? SymOp::kGt
                       : op_type == "LessOrEqual" ? SymOp::kLe
                                                  : SymOp::kGe;
      ASSIGN_OR_RETURN(r, SymArith(ctx, op, x, y));
    }
    out.push_back(std::move(r));
  }
  RETURN_IF_ERROR(ctx.SetOutputSizes(0, std::move(out), a->scalar && b->scalar,
                                     DType::kBool));
  return true;
}

absl::Status SetView(OnnxNodeContext& ctx, const Arg& x,
                     std::vector<Arg> sizes) {
  ASSIGN_OR_RETURN(Arg out, ViewAs(ctx, x, std::move(sizes)));
  return ctx.SetOutput(0, out);
}

bool IsSymbolicTensor(OnnxNodeContext& ctx, int i) {
  const OnnxValue* v = ValueOf(ctx, i);
  return v != nullptr && !v->constant.has_value() && !v->sizes.has_value() &&
         !ctx.IsStaticInput(i);
}

absl::StatusOr<bool> MapReshape(OnnxNodeContext& ctx) {
  if (HasSizes(ctx, 0)) return MapRegroup(ctx);
  if (!HasSizes(ctx, 1) && !IsSymbolicTensor(ctx, 0)) return false;
  std::optional<SizeElements> shape = SizeElementsOf(ctx, 1);
  if (!shape.has_value()) return false;  // refused by the table's mapping
  ASSIGN_OR_RETURN(int64_t allowzero, ctx.attrs().Int("allowzero", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  std::vector<Arg> sizes;
  for (size_t d = 0; d < shape->sizes.size(); ++d) {
    const Arg& s = shape->sizes[d];
    if (s.is_int() && s.as_int() == 0 && !allowzero) {
      if (static_cast<int>(d) >= ctx.Meta(x).dim()) {
        return absl::InvalidArgumentError("shape copies a dim the input lacks");
      }
      ASSIGN_OR_RETURN(Arg copied, SymSizeOf(ctx, x, d));
      sizes.push_back(std::move(copied));
    } else if (s.is_int() && s.as_int() < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape has the size ", s.as_int()));
    } else {
      sizes.push_back(s);
    }
  }
  RETURN_IF_ERROR(SetView(ctx, x, std::move(sizes)));
  return true;
}

absl::StatusOr<bool> MapFlatten(OnnxNodeContext& ctx) {
  if (!IsSymbolicTensor(ctx, 0)) return false;
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 1));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) {
    return absl::InvalidArgumentError("axis out of range");
  }
  Arg outer = Arg::Int(1), inner = Arg::Int(1);
  for (int64_t d = 0; d < rank; ++d) {
    ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, x, d));
    Arg& side = d < axis ? outer : inner;
    ASSIGN_OR_RETURN(side, SymArith(ctx, SymOp::kMul, side, s));
  }
  RETURN_IF_ERROR(SetView(ctx, x, {outer, inner}));
  return true;
}

absl::StatusOr<bool> MapExpand(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 1)) return false;
  const std::vector<Arg>& shape = *ctx.InputSizes(1);
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const size_t rank = ctx.Meta(x).dim();
  const size_t out_rank = std::max(rank, shape.size());
  std::vector<Arg> sizes;
  for (size_t i = 0; i < out_rank; ++i) {
    const bool has_dim = i >= out_rank - rank;
    if (i < out_rank - shape.size()) {
      sizes.push_back(Arg::Int(-1));  // x's own dim
      continue;
    }
    const Arg& s = shape[i - (out_rank - shape.size())];
    if (s.is_int() && s.as_int() < 0) {
      return absl::InvalidArgumentError("shape has a negative size");
    }
    // ONNX broadcasts a 1 in the shape to x's size; expand keeps it as -1.
    sizes.push_back(has_dim && s.is_int() && s.as_int() == 1 ? Arg::Int(-1)
                                                             : s);
  }
  ASSIGN_OR_RETURN(
      Arg e, ctx.Emit("aten.expand.default", {x, SizeList(std::move(sizes))}));
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {e}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

absl::StatusOr<bool> MapConstantOfShape(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 0)) return false;
  ASSIGN_OR_RETURN(Tensor fill, ConstantOfShapeFill(ctx));
  ASSIGN_OR_RETURN(
      Arg out, ctx.Emit("aten.full.default",
                        {SizeList(*ctx.InputSizes(0)), ScalarArg(fill.Item())},
                        {{"dtype", Arg::OfDType(fill.dtype())}}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

absl::StatusOr<bool> MapTile(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 1)) return false;
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const std::vector<Arg>& repeats = *ctx.InputSizes(1);
  if (static_cast<int>(repeats.size()) != ctx.Meta(x).dim()) {
    return absl::InvalidArgumentError("repeats length differs from the rank");
  }
  ASSIGN_OR_RETURN(Arg out,
                   ctx.Emit("aten.repeat.default", {x, SizeList(repeats)}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

absl::StatusOr<bool> MapRange(OnnxNodeContext& ctx) {
  if (!HasSizes(ctx, 0) && !HasSizes(ctx, 1) && !HasSizes(ctx, 2)) {
    return false;
  }
  std::vector<Arg> bounds;
  DType dtype = DType::kInt64;
  for (int i = 0; i < 3; ++i) {
    std::optional<SizeElements> e = SizeElementsOf(ctx, i);
    if (!e.has_value() || !e->scalar) {
      return absl::UnimplementedError(absl::StrCat(
          "a range over sizes computed at run time whose input ", i,
          " is not an integer scalar known at load or of sizes"));
    }
    dtype = ValueOf(ctx, i)->meta.dtype;
    bounds.push_back(e->sizes[0]);
  }
  if (bounds[2].is_int() && bounds[2].as_int() == 0) {
    return absl::InvalidArgumentError("delta is 0");
  }
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.arange.start_step", bounds,
                                     {{"dtype", Arg::OfDType(dtype)}}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

}  // namespace

absl::StatusOr<bool> MapOnSymbolicSizes(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  if (op == "Shape") return MapShape(ctx);
  if (op == "Size") return MapSize(ctx);
  if (op == "Gather") return MapGather(ctx);
  if (op == "Slice") return MapSlice(ctx);
  if (op == "Concat") return MapConcat(ctx);
  if (op == "Unsqueeze" || op == "Squeeze") return MapRegroup(ctx);
  if (op == "Cast" || op == "CastLike" || op == "Identity") return MapCast(ctx);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    return MapArith(ctx);
  }
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual" || op == "Not" || op == "And" || op == "Or") {
    return MapCompare(ctx);
  }
  if (op == "Reshape") return MapReshape(ctx);
  if (op == "Flatten") return MapFlatten(ctx);
  if (op == "Expand") return MapExpand(ctx);
  if (op == "ConstantOfShape") return MapConstantOfShape(ctx);
  if (op == "Tile") return MapTile(ctx);
  if (op == "Range") return MapRange(ctx);
  return false;
}

}  // namespace guardjit
