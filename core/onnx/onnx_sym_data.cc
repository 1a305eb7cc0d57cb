#include "core/onnx/onnx_sym_data.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

bool HasSizes(OnnxNodeContext& ctx, int i) {
  return ctx.InputSizes(i) != nullptr;
}

// Input i is a tensor computed at run time (or a graph input) whose sizes
// are not all static.
bool Symbolic(OnnxNodeContext& ctx, int i) {
  const OnnxValue* v =
      ctx.has_input(i) ? ctx.state().Find(ctx.node().input(i)) : nullptr;
  return v != nullptr && !v->constant.has_value() && !v->sizes.has_value() &&
         !ctx.IsStaticInput(i);
}

// Size d of x is the static number n.
bool StaticSizeIs(OnnxNodeContext& ctx, const Arg& x, int64_t d, int64_t n) {
  return ctx.state().IsStaticDim(x, d) && ctx.Meta(x).sizes[d].hint() == n;
}

// ONNX outputs are distinct tensors: a view of an input is copied.
absl::Status SetCopy(OnnxNodeContext& ctx, int i, const Arg& view) {
  ASSIGN_OR_RETURN(Arg out, ctx.Emit("aten.clone.default", {view}));
  return ctx.SetOutput(i, out);
}

std::vector<Arg> IntArgs(const std::vector<int64_t>& values) {
  std::vector<Arg> out;
  for (int64_t v : values) out.push_back(Arg::Int(v));
  return out;
}

absl::StatusOr<bool> MapSlice(OnnxNodeContext& ctx) {
  if (HasSizes(ctx, 0)) return false;  // shape arithmetic (onnx_sym_shape)
  const bool sym_bounds =
      ctx.opset() >= 10 && (HasSizes(ctx, 1) || HasSizes(ctx, 2));
  if (!sym_bounds && !Symbolic(ctx, 0)) return false;
  std::vector<Arg> starts, ends;
  std::vector<int64_t> axes, steps;
  if (ctx.opset() < 10) {
    ASSIGN_OR_RETURN(SliceArgs args, SliceArgsOf(ctx));
    starts = IntArgs(args.starts), ends = IntArgs(args.ends);
    axes = std::move(args.axes), steps = std::move(args.steps);
  } else {
    std::optional<SizeElements> s = SizeElementsOf(ctx, 1);
    std::optional<SizeElements> e = SizeElementsOf(ctx, 2);
    // Bounds computed from tensor values: the table's mapping refuses them
    // (or value-specializes a graph input).
    if (!s.has_value() || !e.has_value()) return false;
    starts = std::move(s->sizes), ends = std::move(e->sizes);
    if (ctx.has_input(3)) {
      ASSIGN_OR_RETURN(axes, ctx.ConstInts(3, "axes"));
    }
    if (ctx.has_input(4)) {
      ASSIGN_OR_RETURN(steps, ctx.ConstInts(4, "steps"));
    }
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return absl::InvalidArgumentError(
        "starts, ends, axes, steps differ in length");
  }
  ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] == 0) return absl::InvalidArgumentError("step 0");
    if (steps[i] < 0) {
      return absl::UnimplementedError(absl::StrCat(
          "a negative step along axis ", axes[i],
          " of a tensor with symbolic sizes or by symbolic bounds"));
    }
    Arg start = starts[i];
    const Arg& end = ends[i];
    if (start.is_int() && start.as_int() == 0 && end.is_int() &&
        end.as_int() == kMax && steps[i] == 1) {
      continue;  // the whole axis
    }
    // ONNX clamps a start of INT64_MAX to the size; aten.slice reads it as
    // "no start" (a traced x[sys.maxsize:]).
    if (start.is_int() && start.as_int() == kMax) {
      ASSIGN_OR_RETURN(start, SymSizeOf(ctx, x, axes[i]));
    }
    // Otherwise both clamp alike: a negative bound counts from the end,
    // then each is clamped to [0, size] and an end before the start is
    // empty; with symbolic sizes each decision is a guard of the entry.
    ASSIGN_OR_RETURN(
        x, ctx.Emit("aten.slice.Tensor",
                    {x, Arg::Int(axes[i]), start, end, Arg::Int(steps[i])}));
  }
  RETURN_IF_ERROR(SetCopy(ctx, 0, x));
  return true;
}

absl::StatusOr<bool> MapSplit(OnnxNodeContext& ctx) {
  if (!Symbolic(ctx, 0)) return false;
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, ctx.Meta(x).dim(), "axis"));
  std::vector<Arg> sizes;
  if (ctx.opset() < 13) {
    ASSIGN_OR_RETURN(auto split, ctx.attrs().Ints("split"));
    if (split.has_value()) sizes = IntArgs(*split);
  } else if (ctx.has_input(1)) {
    std::optional<SizeElements> split = SizeElementsOf(ctx, 1);
    if (!split.has_value()) return false;  // refused by the table's mapping
    sizes = std::move(split->sizes);
  }
  const int parts = ctx.num_outputs();
  Arg dim;
  if (sizes.empty()) {
    ASSIGN_OR_RETURN(dim, SymSizeOf(ctx, x, axis));
  }
  // num_outputs: chunks of ceil(dim / n), the last one smaller.
  ASSIGN_OR_RETURN(const int64_t n, SplitNumOutputs(ctx, !sizes.empty()));
  if (n != 0) {
    ASSIGN_OR_RETURN(Arg up, SymArith(ctx, SymOp::kAdd, dim, Arg::Int(n - 1)));
    ASSIGN_OR_RETURN(Arg chunk,
                     SymArith(ctx, SymOp::kFloorDiv, up, Arg::Int(n)));
    ASSIGN_OR_RETURN(Arg head,
                     SymArith(ctx, SymOp::kMul, chunk, Arg::Int(n - 1)));
    ASSIGN_OR_RETURN(Arg last, SymArith(ctx, SymOp::kSub, dim, head));
    if (last.is_int() && last.as_int() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("dim ", dim.as_int(),
                                                     " does not split into ", n,
                                                     " non-empty parts"));
    }
    sizes.assign(n - 1, chunk);
    sizes.push_back(last);
  }
  if (sizes.empty()) {
    if (parts == 0 || (dim.is_int() && dim.as_int() % parts != 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim ", dim.is_int() ? absl::StrCat(dim.as_int()) : "(symbolic)",
          " does not split into ", parts, " equal parts"));
    }
    // A symbolic dim: split_with_sizes guards that the parts sum to it.
    ASSIGN_OR_RETURN(Arg each,
                     SymArith(ctx, SymOp::kFloorDiv, dim, Arg::Int(parts)));
    sizes.assign(parts, each);
  }
  if (static_cast<int>(sizes.size()) != parts) {
    return absl::InvalidArgumentError("split sizes do not match the outputs");
  }
  ASSIGN_OR_RETURN(Arg pieces,
                   ctx.Emit("aten.split_with_sizes.default",
                            {x, SizeList(std::move(sizes)), Arg::Int(axis)}));
  for (int i = 0; i < parts; ++i) {
    if (!ctx.has_output(i)) continue;
    ASSIGN_OR_RETURN(Arg piece, ctx.Item(pieces, i));
    RETURN_IF_ERROR(SetCopy(ctx, i, piece));
  }
  return true;
}

// Gather's indices as an int64 graph value counting from the front: ONNX
// counts a negative index from the back, which needs the gathered size.
absl::StatusOr<Arg> FrontIndices(OnnxNodeContext& ctx, const Arg& x,
                                 int64_t axis) {
  const bool static_dim = ctx.state().IsStaticDim(x, axis);
  const int64_t size = static_dim ? ctx.Meta(x).sizes[axis].hint() : -1;
  if (const Tensor* c = ctx.InputConstant(1)) {
    if (c->dtype() != DType::kInt64 && c->dtype() != DType::kInt32) {
      return absl::InvalidArgumentError(
          absl::StrCat("indices are ", DTypeName(c->dtype())));
    }
    ASSIGN_OR_RETURN(
        Tensor t, Tensor::Empty(DType::kInt64,
                                Shape(c->sizes().begin(), c->sizes().end())));
    for (int64_t k = 0; k < c->numel(); ++k) {
      int64_t i = c->dtype() == DType::kInt64 ? c->data_as<int64_t>()[k]
                                              : c->data_as<int32_t>()[k];
      if (i < 0 && !static_dim) {
        return absl::UnimplementedError(
            absl::StrCat("index ", i, " counts from the back of axis ", axis,
                         ", whose size is symbolic"));
      }
      t.data_as<int64_t>()[k] = i < 0 ? i + size : i;
    }
    const std::string name = ctx.InternalName("indices");
    RETURN_IF_ERROR(ctx.state().AddKnownValue(name, std::move(t)));
    return ctx.state().GraphValue(name);
  }
  ASSIGN_OR_RETURN(Arg idx, ctx.Input(1));
  if (!static_dim) {
    return absl::UnimplementedError(absl::StrCat(
        "indices computed at run time into axis ", axis,
        ", whose size is symbolic (a negative index would count from it)"));
  }
  ASSIGN_OR_RETURN(idx, CastTo(ctx, idx, DType::kInt64));
  ASSIGN_OR_RETURN(Arg neg, ctx.Emit("aten.lt.Scalar", {idx, Arg::Int(0)}));
  ASSIGN_OR_RETURN(Arg wrapped, ctx.Emit("aten.add.Scalar",
                                         {idx, Arg::Int(size), Arg::Int(1)}));
  return ctx.Emit("aten.where.self", {neg, wrapped, idx});
}

absl::StatusOr<bool> MapGather(OnnxNodeContext& ctx) {
  if (HasSizes(ctx, 0)) return false;  // shape arithmetic (onnx_sym_shape)
  if (!Symbolic(ctx, 0) && !Symbolic(ctx, 1)) return false;
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().Int("axis", 0));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, rank, "axis"));
  const Tensor* index = ctx.InputConstant(1);
  if (index != nullptr && index->dim() == 0 &&
      (index->dtype() == DType::kInt64 || index->dtype() == DType::kInt32)) {
    // One index: select.int, which counts a negative index from the back as
    // ONNX does (and guards the range on a symbolic size).
    const int64_t i = index->dtype() == DType::kInt64
                          ? index->data_as<int64_t>()[0]
                          : index->data_as<int32_t>()[0];
    ASSIGN_OR_RETURN(Arg picked, ctx.Emit("aten.select.int",
                                          {x, Arg::Int(axis), Arg::Int(i)}));
    RETURN_IF_ERROR(SetCopy(ctx, 0, picked));
    return true;
  }
  ASSIGN_OR_RETURN(Arg idx, FrontIndices(ctx, x, axis));
  ASSIGN_OR_RETURN(Arg flat, ViewAs(ctx, idx, {Arg::Int(-1)}));
  ASSIGN_OR_RETURN(Arg picked, ctx.Emit("aten.index_select.default",
                                        {x, Arg::Int(axis), flat}));
  // [x's dims before axis, the indices' dims, x's dims after axis].
  std::vector<Arg> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      ASSIGN_OR_RETURN(std::vector<Arg> inner, SymSizesOf(ctx, idx));
      sizes.insert(sizes.end(), inner.begin(), inner.end());
      continue;
    }
    ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, x, d));
    sizes.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(Arg out,
                   ViewAs(ctx, picked, std::move(sizes), /*contiguous=*/true));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

absl::StatusOr<bool> MapRegroup(OnnxNodeContext& ctx) {
  if (HasSizes(ctx, 0) || !Symbolic(ctx, 0)) return false;
  const bool unsqueeze = ctx.node().op_type() == "Unsqueeze";
  ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, 13, 1));
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  if (unsqueeze) {
    if (!axes.has_value()) return absl::InvalidArgumentError("axes missing");
    ASSIGN_OR_RETURN(std::vector<int64_t> n,
                     NormalizeAxes(*axes, rank + axes->size()));
    std::sort(n.begin(), n.end());
    for (int64_t a : n) {
      ASSIGN_OR_RETURN(x, ctx.Emit("aten.unsqueeze.default", {x, Arg::Int(a)}));
    }
    RETURN_IF_ERROR(SetCopy(ctx, 0, x));
    return true;
  }
  std::vector<int64_t> dims;
  if (axes.has_value()) {
    ASSIGN_OR_RETURN(dims, NormalizeAxes(*axes, rank));
    for (int64_t a : dims) {
      if (!ctx.state().IsStaticDim(x, a)) {
        return absl::UnimplementedError(
            absl::StrCat("squeezes axis ", a, ", whose size is symbolic (",
                         ctx.Meta(x).ToString(), ")"));
      }
      if (ctx.Meta(x).sizes[a].hint() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "axis ", a, " has size ", ctx.Meta(x).sizes[a].hint(), ", not 1"));
      }
    }
  } else {
    // Every size-1 dim: which are 1 must be known at load.
    for (int64_t d = 0; d < rank; ++d) {
      if (!ctx.state().IsStaticDim(x, d)) {
        return absl::UnimplementedError(
            absl::StrCat("squeezes every dim of size 1 without axes, and dim ",
                         d, " is symbolic (", ctx.Meta(x).ToString(),
                         "): whether it is 1 is known only at run time"));
      }
      if (ctx.Meta(x).sizes[d].hint() == 1) dims.push_back(d);
    }
  }
  ASSIGN_OR_RETURN(x, ctx.Emit("aten.squeeze.dims", {x, IntList(dims)}));
  RETURN_IF_ERROR(SetCopy(ctx, 0, x));
  return true;
}

// numpy.matmul: 1-D operands gain (and lose) a dim; a batch of matrices
// times a matrix folds the batch into the rows of one mm; batched operands
// broadcast their batch dims through expand and multiply as one bmm over
// the flattened batch. Sizes are size expressions throughout.
absl::StatusOr<bool> MapMatMul(OnnxNodeContext& ctx) {
  if (!Symbolic(ctx, 0) && !Symbolic(ctx, 1)) return false;
  ASSIGN_OR_RETURN(Arg a, ctx.Input(0));
  ASSIGN_OR_RETURN(Arg b, ctx.Input(1));
  int64_t ra = ctx.Meta(a).dim(), rb = ctx.Meta(b).dim();
  if (ra == 0 || rb == 0) {
    return absl::InvalidArgumentError("MatMul of a 0-dim operand");
  }
  const bool a_vector = ra == 1, b_vector = rb == 1;
  if (a_vector) {
    ASSIGN_OR_RETURN(a, ctx.Emit("aten.unsqueeze.default", {a, Arg::Int(0)}));
    ra = 2;
  }
  if (b_vector) {
    ASSIGN_OR_RETURN(b, ctx.Emit("aten.unsqueeze.default", {b, Arg::Int(1)}));
    rb = 2;
  }
  // Two matrices multiply as they are; otherwise the sizes are read for
  // the views.
  if (ra == 2 && rb == 2 && !a_vector && !b_vector) {
    ASSIGN_OR_RETURN(Arg mm, ctx.Emit("aten.mm.default", {a, b}));
    RETURN_IF_ERROR(ctx.SetOutput(0, mm));
    return true;
  }
  ASSIGN_OR_RETURN(Arg m, SymSizeOf(ctx, a, ra - 2));
  ASSIGN_OR_RETURN(Arg k, SymSizeOf(ctx, a, ra - 1));
  ASSIGN_OR_RETURN(Arg n, SymSizeOf(ctx, b, rb - 1));
  std::vector<Arg> out_sizes;
  Arg out;
  if (rb == 2) {
    for (int64_t d = 0; d < ra - 2; ++d) {
      ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, a, d));
      out_sizes.push_back(std::move(s));
    }
    Arg rows = a;
    if (ra > 2) {
      ASSIGN_OR_RETURN(rows, ViewAs(ctx, a, {Arg::Int(-1), k}));
    }
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.mm.default", {rows, b}));
  } else {
    // Batch dims, aligned from the back: a size-1 (or absent) dim takes the
    // other operand's; two others must be equal, which expand checks.
    const int64_t batch_rank = std::max(ra, rb) - 2;
    bool expand_a = false, expand_b = false;
    for (int64_t i = 0; i < batch_rank; ++i) {
      const int64_t da = i - (batch_rank - (ra - 2));
      const int64_t db = i - (batch_rank - (rb - 2));
      const bool a_one = da < 0 || StaticSizeIs(ctx, a, da, 1);
      const bool b_one = db < 0 || StaticSizeIs(ctx, b, db, 1);
      if (!a_one) {
        ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, a, da));
        out_sizes.push_back(std::move(s));
        // b's dim broadcasts, or must equal a's: unless both are the same
        // size expression, expand b to a's and let it check.
        if (b_one ||
            !(ctx.Meta(a).sizes[da].expr() == ctx.Meta(b).sizes[db].expr())) {
          expand_b = true;
        }
      } else if (!b_one) {
        ASSIGN_OR_RETURN(Arg s, SymSizeOf(ctx, b, db));
        out_sizes.push_back(std::move(s));
        expand_a = true;
      } else {
        out_sizes.push_back(Arg::Int(1));
        if (da < 0 || db < 0) expand_a = expand_b = true;
      }
    }
    auto flatten = [&](Arg v, bool expand, const Arg& rows,
                       const Arg& cols) -> absl::StatusOr<Arg> {
      if (expand) {
        std::vector<Arg> full = out_sizes;
        full.push_back(Arg::Int(-1));
        full.push_back(Arg::Int(-1));
        ASSIGN_OR_RETURN(
            v, ctx.Emit("aten.expand.default", {v, SizeList(std::move(full))}));
      }
      return ViewAs(ctx, v, {Arg::Int(-1), rows, cols});
    };
    ASSIGN_OR_RETURN(Arg a3, flatten(a, expand_a, m, k));
    ASSIGN_OR_RETURN(Arg b3, flatten(b, expand_b, k, n));
    ASSIGN_OR_RETURN(out, ctx.Emit("aten.bmm.default", {a3, b3}));
  }
  if (!a_vector) out_sizes.push_back(m);
  if (!b_vector) out_sizes.push_back(n);
  if (a_vector || b_vector || ra > 2 || rb > 2) {
    ASSIGN_OR_RETURN(out, ViewAs(ctx, out, std::move(out_sizes),
                                 /*contiguous=*/true));
  }
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

// Pad whose pads are size expressions (a pad to a length computed from a
// symbolic size): constant mode onto constant_pad_nd's SymInt[] pad.
absl::StatusOr<bool> MapPad(OnnxNodeContext& ctx) {
  if (ctx.opset() < 11 || !HasSizes(ctx, 1)) return false;
  ASSIGN_OR_RETURN(std::string mode, ctx.attrs().String("mode", "constant"));
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    return absl::UnimplementedError("the axes input (opset 18)");
  }
  if (mode != "constant") {
    return absl::UnimplementedError(absl::StrCat(
        "mode '", mode, "' with pads computed from symbolic sizes"));
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const int64_t rank = ctx.Meta(x).dim();
  const DType dtype = ctx.Meta(x).dtype;
  double value = 0;
  if (ctx.has_input(2)) {
    const Tensor* v = ctx.NeededConstant(2);
    if (v == nullptr || v->numel() != 1) {
      return absl::UnimplementedError(
          "constant_value that is not a scalar known at load");
    }
    value = v->Item().to_double();
  }
  const std::vector<Arg>& pads = *ctx.InputSizes(1);
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    return absl::InvalidArgumentError("pads length is not twice the rank");
  }
  // ATen lists (begin, end) pairs from the last dim backwards.
  std::vector<Arg> aten;
  for (int64_t d = rank - 1; d >= 0; --d) {
    aten.push_back(pads[d]);
    aten.push_back(pads[d + rank]);
  }
  ASSIGN_OR_RETURN(
      Arg out,
      ctx.Emit("aten.constant_pad_nd.default",
               {x, SizeList(std::move(aten)),
                IsFloating(dtype) ? Arg::Float(value)
                                  : Arg::Int(static_cast<int64_t>(value))}));
  RETURN_IF_ERROR(ctx.SetOutput(0, out));
  return true;
}

}  // namespace

absl::StatusOr<bool> MapSymbolicData(OnnxNodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  if (op == "Slice") return MapSlice(ctx);
  if (op == "Split") return MapSplit(ctx);
  if (op == "Gather") return MapGather(ctx);
  if (op == "Squeeze" || op == "Unsqueeze") return MapRegroup(ctx);
  if (op == "MatMul") return MapMatMul(ctx);
  if (op == "Pad") return MapPad(ctx);
  return false;
}

}  // namespace guardjit
