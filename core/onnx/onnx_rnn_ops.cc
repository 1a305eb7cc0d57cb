// ONNX's recurrent operators RNN, GRU and LSTM, unrolled over the sequence
// (its length is the input's static size): the input projection of every
// step as one product, then per step the recurrent product (aten.addmm),
// the gates (slices, sigmoid, tanh) and the state update, with the steps'
// hidden states concatenated into Y. Forward direction, the default
// activations, both layouts, initial states, biases and LSTM's peepholes;
// sequence_lens must be known at load and equal the sequence length.
// Reverse and bidirectional directions, other activations (and their
// alpha/beta), clip and input_forget are refused naming them.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/onnx/onnx_op_table.h"
#include "core/onnx/onnx_op_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

// The most steps one node unrolls to.
constexpr int64_t kMaxUnrolledSteps = 1024;

enum class Cell { kRnn, kGru, kLstm };

struct RnnShapes {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int gates = 1;
};

absl::StatusOr<Arg> Slice(OnnxNodeContext& ctx, const Arg& x, int64_t dim,
                          int64_t start, int64_t end) {
  return ctx.Emit("aten.slice.Tensor", {x, Arg::Int(dim), Arg::Int(start),
                                        Arg::Int(end), Arg::Int(1)});
}

// Input i's only direction, its dim `dim` of size 1 dropped.
absl::StatusOr<Arg> OneDirection(OnnxNodeContext& ctx, int i,
                                 absl::string_view what, int64_t dim = 0) {
  ASSIGN_OR_RETURN(Arg v, ctx.Input(i));
  ASSIGN_OR_RETURN(Shape shape, ctx.StaticShapeOf(v));
  if (static_cast<int64_t>(shape.size()) <= dim || shape[dim] != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has sizes [", absl::StrJoin(shape, ", "),
                     "], not one direction in dim ", dim));
  }
  return ctx.Emit("aten.select.int", {v, Arg::Int(dim), Arg::Int(0)});
}

absl::StatusOr<Arg> Transposed(OnnxNodeContext& ctx, const Arg& m) {
  return ctx.Emit("aten.permute.default", {m, IntList({1, 0})});
}

absl::StatusOr<Arg> Zeros(OnnxNodeContext& ctx, DType dtype, int64_t batch,
                          int64_t hidden, absl::string_view what) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(dtype, {batch, hidden}));
  const std::string name = ctx.InternalName(what);
  RETURN_IF_ERROR(ctx.state().AddKnownValue(name, std::move(t)));
  return ctx.state().GraphValue(name);
}

absl::Status CheckActivations(OnnxNodeContext& ctx,
                              const std::vector<std::string>& defaults) {
  const onnx::AttributeProto* a = ctx.attrs().Raw("activations");
  if (a == nullptr) return absl::OkStatus();
  std::vector<std::string> given(a->strings().begin(), a->strings().end());
  if (given != defaults) {
    return absl::UnimplementedError(absl::StrCat(
        "activations [", absl::StrJoin(given, ", "), "] (only the defaults [",
        absl::StrJoin(defaults, ", "), "] are supported)"));
  }
  return absl::OkStatus();
}

absl::Status MapRecurrent(OnnxNodeContext& ctx, Cell cell) {
  RnnShapes s;
  s.gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  ASSIGN_OR_RETURN(std::optional<int64_t> hidden,
                   ctx.attrs().OptionalInt("hidden_size"));
  ASSIGN_OR_RETURN(std::string direction,
                   ctx.attrs().String("direction", "forward"));
  ASSIGN_OR_RETURN(int64_t layout, ctx.attrs().Int("layout", 0));
  int64_t linear_before_reset = 0;
  if (cell == Cell::kGru) {
    ASSIGN_OR_RETURN(linear_before_reset,
                     ctx.attrs().Int("linear_before_reset", 0));
    RETURN_IF_ERROR(CheckActivations(ctx, {"Sigmoid", "Tanh"}));
  } else if (cell == Cell::kLstm) {
    ASSIGN_OR_RETURN(int64_t input_forget, ctx.attrs().Int("input_forget", 0));
    if (input_forget != 0) {
      return absl::UnimplementedError("input_forget=1");
    }
    RETURN_IF_ERROR(CheckActivations(ctx, {"Sigmoid", "Tanh", "Tanh"}));
  } else {
    RETURN_IF_ERROR(CheckActivations(ctx, {"Tanh"}));
  }
  if (direction != "forward") {
    return absl::UnimplementedError(
        absl::StrCat("direction '", direction, "' (forward is supported)"));
  }
  if (layout != 0 && layout != 1) {
    return absl::InvalidArgumentError(absl::StrCat("layout ", layout));
  }
  ASSIGN_OR_RETURN(Shape x_shape, ctx.StaticShape(0));
  if (x_shape.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("X has rank ", x_shape.size(), ", not 3"));
  }
  s.seq = layout == 0 ? x_shape[0] : x_shape[1];
  s.batch = layout == 0 ? x_shape[1] : x_shape[0];
  s.input = x_shape[2];
  ASSIGN_OR_RETURN(Shape w_shape, ctx.StaticShape(1));
  if (w_shape.size() != 3 || w_shape[0] != 1 || w_shape[2] != s.input ||
      w_shape[1] % s.gates != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("W has sizes [", absl::StrJoin(w_shape, ", "), "]"));
  }
  s.hidden = w_shape[1] / s.gates;
  if (hidden.has_value() && *hidden != s.hidden) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hidden_size ", *hidden, " but W has ", w_shape[1], " rows"));
  }
  if (s.seq < 1 || s.seq > kMaxUnrolledSteps) {
    return absl::UnimplementedError(
        absl::StrCat("a sequence of ", s.seq, " steps (1 to ",
                     kMaxUnrolledSteps, " are unrolled)"));
  }
  // sequence_lens: known at load, every one the full length.
  if (ctx.has_input(4)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> lens,
                     ctx.ConstInts(4, "sequence_lens"));
    for (int64_t len : lens) {
      if (len != s.seq) {
        return absl::UnimplementedError(
            absl::StrCat("sequence_lens [", absl::StrJoin(lens, ", "),
                         "] shorter than the sequence (", s.seq, " steps)"));
      }
    }
  }
  ASSIGN_OR_RETURN(Arg x, ctx.Input(0));
  const DType dtype = ctx.Meta(x).dtype;
  RETURN_IF_ERROR(RequireFloat(ctx.Meta(x), "X"));
  if (layout == 1) {
    ASSIGN_OR_RETURN(x,
                     ctx.Emit("aten.permute.default", {x, IntList({1, 0, 2})}));
  }
  const int64_t gh = s.gates * s.hidden;
  ASSIGN_OR_RETURN(Arg w, OneDirection(ctx, 1, "W"));
  ASSIGN_OR_RETURN(Arg r, OneDirection(ctx, 2, "R"));
  ASSIGN_OR_RETURN(Arg wt, Transposed(ctx, w));  // [input, gh]
  ASSIGN_OR_RETURN(Arg rt, Transposed(ctx, r));  // [hidden, gh]
  std::optional<Arg> wb, rb;
  if (ctx.has_input(3)) {
    ASSIGN_OR_RETURN(Arg b, OneDirection(ctx, 3, "B"));
    ASSIGN_OR_RETURN(wb, Slice(ctx, b, 0, 0, gh));
    ASSIGN_OR_RETURN(rb, Slice(ctx, b, 0, gh, 2 * gh));
  }
  // Every step's input projection at once: [seq * batch, gh].
  ASSIGN_OR_RETURN(Arg x2, ReshapeTo(ctx, x, {s.seq * s.batch, s.input}));
  Arg xw;
  if (wb.has_value()) {
    ASSIGN_OR_RETURN(xw, ctx.Emit("aten.addmm.default", {*wb, x2, wt}));
  } else {
    ASSIGN_OR_RETURN(xw, ctx.Emit("aten.mm.default", {x2, wt}));
  }
  ASSIGN_OR_RETURN(
      xw, ctx.Emit("aten.view.default", {xw, IntList({s.seq, s.batch, gh})}));
  Arg h, c;
  if (ctx.has_input(5)) {
    ASSIGN_OR_RETURN(h, OneDirection(ctx, 5, "initial_h", layout));
  } else {
    ASSIGN_OR_RETURN(h, Zeros(ctx, dtype, s.batch, s.hidden, "h0"));
  }
  std::optional<Arg> p_i, p_o, p_f;
  if (cell == Cell::kLstm) {
    if (ctx.has_input(6)) {
      ASSIGN_OR_RETURN(c, OneDirection(ctx, 6, "initial_c", layout));
    } else {
      ASSIGN_OR_RETURN(c, Zeros(ctx, dtype, s.batch, s.hidden, "c0"));
    }
    if (ctx.has_input(7)) {
      ASSIGN_OR_RETURN(Arg p, OneDirection(ctx, 7, "P"));
      ASSIGN_OR_RETURN(p_i, Slice(ctx, p, 0, 0, s.hidden));
      ASSIGN_OR_RETURN(p_o, Slice(ctx, p, 0, s.hidden, 2 * s.hidden));
      ASSIGN_OR_RETURN(p_f, Slice(ctx, p, 0, 2 * s.hidden, 3 * s.hidden));
    }
  }
  std::optional<Arg> rh_t, rb_h;  // GRU's hidden gate, apart
  if (cell == Cell::kGru && linear_before_reset == 0) {
    ASSIGN_OR_RETURN(rh_t, Slice(ctx, rt, 1, 2 * s.hidden, 3 * s.hidden));
    if (rb.has_value()) {
      ASSIGN_OR_RETURN(rb_h, Slice(ctx, *rb, 0, 2 * s.hidden, 3 * s.hidden));
    }
  }
  auto gate = [&](const Arg& all, int k) {
    return Slice(ctx, all, 1, k * s.hidden, (k + 1) * s.hidden);
  };
  auto emit = [&](const char* target, std::vector<Arg> args) {
    return ctx.Emit(target, std::move(args));
  };
  Arg::List steps;
  for (int64_t t = 0; t < s.seq; ++t) {
    ASSIGN_OR_RETURN(Arg xw_t,
                     emit("aten.select.int", {xw, Arg::Int(0), Arg::Int(t)}));
    Arg hr;  // h R^T + Rb: [batch, gh]
    if (rb.has_value()) {
      ASSIGN_OR_RETURN(hr, emit("aten.addmm.default", {*rb, h, rt}));
    } else {
      ASSIGN_OR_RETURN(hr, emit("aten.mm.default", {h, rt}));
    }
    if (cell == Cell::kRnn) {
      ASSIGN_OR_RETURN(Arg sum, emit("aten.add.Tensor", {xw_t, hr}));
      ASSIGN_OR_RETURN(h, emit("aten.tanh.default", {sum}));
    } else if (cell == Cell::kGru) {
      // Gates z, r, h.
      ASSIGN_OR_RETURN(Arg xz, gate(xw_t, 0));
      ASSIGN_OR_RETURN(Arg hz, gate(hr, 0));
      ASSIGN_OR_RETURN(Arg xr, gate(xw_t, 1));
      ASSIGN_OR_RETURN(Arg hrr, gate(hr, 1));
      ASSIGN_OR_RETURN(Arg xh, gate(xw_t, 2));
      ASSIGN_OR_RETURN(Arg z, emit("aten.add.Tensor", {xz, hz}));
      ASSIGN_OR_RETURN(z, emit("aten.sigmoid.default", {z}));
      ASSIGN_OR_RETURN(Arg rg, emit("aten.add.Tensor", {xr, hrr}));
      ASSIGN_OR_RETURN(rg, emit("aten.sigmoid.default", {rg}));
      Arg recurrent;
      if (linear_before_reset != 0) {
        ASSIGN_OR_RETURN(Arg hh, gate(hr, 2));
        ASSIGN_OR_RETURN(recurrent, emit("aten.mul.Tensor", {rg, hh}));
      } else {
        ASSIGN_OR_RETURN(Arg reset, emit("aten.mul.Tensor", {rg, h}));
        if (rb_h.has_value()) {
          ASSIGN_OR_RETURN(recurrent,
                           emit("aten.addmm.default", {*rb_h, reset, *rh_t}));
        } else {
          ASSIGN_OR_RETURN(recurrent, emit("aten.mm.default", {reset, *rh_t}));
        }
      }
      ASSIGN_OR_RETURN(Arg cand, emit("aten.add.Tensor", {xh, recurrent}));
      ASSIGN_OR_RETURN(cand, emit("aten.tanh.default", {cand}));
      // h = (1 - z) * cand + z * h = cand + z * (h - cand).
      ASSIGN_OR_RETURN(Arg diff, emit("aten.sub.Tensor", {h, cand}));
      ASSIGN_OR_RETURN(Arg keep, emit("aten.mul.Tensor", {z, diff}));
      ASSIGN_OR_RETURN(h, emit("aten.add.Tensor", {cand, keep}));
    } else {
      // Gates i, o, f, c.
      ASSIGN_OR_RETURN(Arg all, emit("aten.add.Tensor", {xw_t, hr}));
      ASSIGN_OR_RETURN(Arg i, gate(all, 0));
      ASSIGN_OR_RETURN(Arg o, gate(all, 1));
      ASSIGN_OR_RETURN(Arg f, gate(all, 2));
      ASSIGN_OR_RETURN(Arg g, gate(all, 3));
      if (p_i.has_value()) {
        ASSIGN_OR_RETURN(Arg pi, emit("aten.mul.Tensor", {*p_i, c}));
        ASSIGN_OR_RETURN(i, emit("aten.add.Tensor", {i, pi}));
        ASSIGN_OR_RETURN(Arg pf, emit("aten.mul.Tensor", {*p_f, c}));
        ASSIGN_OR_RETURN(f, emit("aten.add.Tensor", {f, pf}));
      }
      ASSIGN_OR_RETURN(i, emit("aten.sigmoid.default", {i}));
      ASSIGN_OR_RETURN(f, emit("aten.sigmoid.default", {f}));
      ASSIGN_OR_RETURN(g, emit("aten.tanh.default", {g}));
      ASSIGN_OR_RETURN(Arg fc, emit("aten.mul.Tensor", {f, c}));
      ASSIGN_OR_RETURN(Arg ig, emit("aten.mul.Tensor", {i, g}));
      ASSIGN_OR_RETURN(c, emit("aten.add.Tensor", {fc, ig}));
      if (p_o.has_value()) {
        ASSIGN_OR_RETURN(Arg po, emit("aten.mul.Tensor", {*p_o, c}));
        ASSIGN_OR_RETURN(o, emit("aten.add.Tensor", {o, po}));
      }
      ASSIGN_OR_RETURN(o, emit("aten.sigmoid.default", {o}));
      ASSIGN_OR_RETURN(Arg tc, emit("aten.tanh.default", {c}));
      ASSIGN_OR_RETURN(h, emit("aten.mul.Tensor", {o, tc}));
    }
    if (ctx.has_output(0)) {
      ASSIGN_OR_RETURN(Arg step, emit("aten.unsqueeze.default",
                                      {h, Arg::Int(0)}));  // [1, batch, hid]
      steps.push_back(step);
    }
  }
  if (ctx.has_output(0)) {
    // Y: [seq, 1, batch, hidden] (layout 1: [batch, seq, 1, hidden]).
    ASSIGN_OR_RETURN(Arg y, emit("aten.cat.default",
                                 {Arg::OfList(std::move(steps)), Arg::Int(0)}));
    ASSIGN_OR_RETURN(y, emit("aten.unsqueeze.default", {y, Arg::Int(1)}));
    if (layout == 1) {
      ASSIGN_OR_RETURN(
          y, ctx.Emit("aten.permute.default", {y, IntList({2, 0, 1, 3})}));
    }
    RETURN_IF_ERROR(ctx.SetOutput(0, y));
  }
  // Y_h, Y_c: [1, batch, hidden] (layout 1: [batch, 1, hidden]).
  auto last = [&](const Arg& v) -> absl::StatusOr<Arg> {
    return emit("aten.unsqueeze.default", {v, Arg::Int(layout == 1 ? 1 : 0)});
  };
  if (ctx.has_output(1)) {
    ASSIGN_OR_RETURN(Arg y_h, last(h));
    RETURN_IF_ERROR(ctx.SetOutput(1, y_h));
  }
  if (cell == Cell::kLstm && ctx.has_output(2)) {
    ASSIGN_OR_RETURN(Arg y_c, last(c));
    RETURN_IF_ERROR(ctx.SetOutput(2, y_c));
  }
  return absl::OkStatus();
}

}  // namespace

void AddRnnOnnxOps(OnnxOpTable& table) {
  table.Add("RNN",
            [](OnnxNodeContext& ctx) { return MapRecurrent(ctx, Cell::kRnn); });
  table.Add("GRU",
            [](OnnxNodeContext& ctx) { return MapRecurrent(ctx, Cell::kGru); });
  table.Add("LSTM", [](OnnxNodeContext& ctx) {
    return MapRecurrent(ctx, Cell::kLstm);
  });
}

}  // namespace guardjit
