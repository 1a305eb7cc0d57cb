#include "jit/lowering/lowering.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/view_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {

IndexExpr SizeExpr(const TensorMeta& meta, int dim) {
  const SymInt& size = meta.sizes[dim];
  // Never through int64_t: that would specialize the symbol.
  return size.is_symbolic() ? IndexExpr::FromSym(size.expr())
                            : IndexExpr::Const(size.hint());
}

std::optional<Shape> ConcreteShape(const std::vector<IndexExpr>& sizes) {
  Shape shape;
  for (const IndexExpr& s : sizes) {
    if (!s.is_const()) return std::nullopt;
    shape.push_back(s.value());
  }
  return shape;
}

IndexExpr Linearize(const std::vector<IndexExpr>& index,
                    const std::vector<IndexExpr>& sizes) {
  IndexExpr linear = IndexExpr::Const(0);
  IndexExpr stride = IndexExpr::Const(1);
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    linear = index[d] * stride + linear;
    stride = stride * sizes[d];
  }
  return linear;
}

int LoweredGraph::ValueOf(ValueRef v) const {
  auto it = of_graph_value.find((int64_t{v.node} << 16) + v.index);
  return it == of_graph_value.end() ? -1 : it->second;
}

LoweringContext::LoweringContext(const GraphMeta& metas, LoweredGraph* out,
                                 const Graph* graph)
    : metas_(metas), out_(out), graph_(graph) {}

bool LoweringContext::ReadsOutput(const Node& node, int output) const {
  if (graph_ == nullptr) return true;
  const std::vector<Node>& nodes = graph_->nodes();
  const int index = static_cast<int>(&node - nodes.data());
  if (index < 0 || index >= static_cast<int>(nodes.size())) return true;
  for (const Node& n : nodes) {
    if (n.kind == NodeKind::kGetItem && n.args.size() == 2 &&
        n.args[0].is_value() && n.args[0].as_value().node == index &&
        n.args[1].is_int() && n.args[1].as_int() == output) {
      return true;
    }
  }
  return false;
}

int LoweringContext::Add(LValue value) {
  out_->values.push_back(std::move(value));
  return static_cast<int>(out_->values.size()) - 1;
}

std::vector<IndexExpr> LoweringContext::Sizes(const TensorMeta& meta) {
  std::vector<IndexExpr> sizes;
  for (int d = 0; d < meta.dim(); ++d) sizes.push_back(SizeExpr(meta, d));
  return sizes;
}

int LoweringContext::AddBuffer(int slot, const TensorMeta& meta,
                               std::vector<IndexExpr> strides,
                               std::string label) {
  LValue v;
  v.kind = LValue::Kind::kBuffer;
  v.dtype = meta.dtype;
  v.sizes = Sizes(meta);
  v.slot = slot;
  v.strides = std::move(strides);
  v.label = std::move(label);
  return Add(std::move(v));
}

int LoweringContext::Operand(const Arg& arg) {
  if (arg.is_value()) return out_->ValueOf(arg.as_value());
  const Scalar s = arg.as_scalar();
  LValue v;
  v.dtype = s.dtype();
  v.wrapped_number = true;
  v.label = s.ToString();
  v.compute = [s](const std::vector<ValueExpr>&) {
    return ScalarConst(s, s.dtype());
  };
  return Add(std::move(v));
}

TensorMeta LoweringContext::MetaOf(int id) const {
  const LValue& v = value(id);
  TensorMeta meta;
  meta.dtype = v.dtype;
  meta.wrapped_number = v.wrapped_number;
  // Only rank and dtype matter to type promotion.
  meta.sizes = SymShape(v.sizes.size(), SymInt(1));
  return meta;
}

int LoweringContext::Pointwise(DType dtype, std::vector<IndexExpr> sizes,
                               std::vector<int> operands, PointwiseFn compute,
                               std::string label) {
  LValue v;
  v.dtype = dtype;
  v.sizes = std::move(sizes);
  v.operands = std::move(operands);
  v.compute = std::move(compute);
  v.label = std::move(label);
  return Add(std::move(v));
}

int LoweringContext::Pointwise(const TensorMeta& out, std::vector<int> operands,
                               PointwiseFn compute, std::string label) {
  return Pointwise(out.dtype, Sizes(out), std::move(operands),
                   std::move(compute), std::move(label));
}

int LoweringContext::Reduce(int source, std::vector<bool> mask, bool keepdim,
                            CombineOp combine, std::string label) {
  const LValue& src = value(source);
  LValue v;
  v.kind = LValue::Kind::kReduction;
  v.dtype = combine == CombineOp::kArgMax || combine == CombineOp::kArgMin
                ? DType::kInt64
                : src.dtype;
  for (int d = 0; d < src.rank(); ++d) {
    if (!mask[d]) {
      v.sizes.push_back(src.sizes[d]);
    } else if (keepdim) {
      v.sizes.push_back(IndexExpr::Const(1));
    }
  }
  v.operands = {source};
  v.mask = std::move(mask);
  v.keepdim = keepdim;
  v.combine = combine;
  v.label = std::move(label);
  return Add(std::move(v));
}

int LoweringContext::View(int source, std::vector<IndexExpr> sizes,
                          RemapFn remap, std::string label) {
  LValue v;
  v.kind = LValue::Kind::kView;
  v.dtype = value(source).dtype;
  v.sizes = std::move(sizes);
  v.operands = {source};
  v.remap = std::move(remap);
  v.label = std::move(label);
  return Add(std::move(v));
}

int LoweringContext::Select(const TensorMeta& out, std::vector<int> operands,
                            decltype(LValue::operand_index) operand_index,
                            decltype(LValue::select) select) {
  LValue v;
  v.kind = LValue::Kind::kSelect;
  v.dtype = out.dtype;
  v.sizes = Sizes(out);
  v.operands = std::move(operands);
  v.operand_index = std::move(operand_index);
  v.select = std::move(select);
  return Add(std::move(v));
}

int LoweringContext::Gather(const TensorMeta& out, int source, int index,
                            int gather_dim,
                            decltype(LValue::gather_at) gather_at,
                            std::string what) {
  LValue v;
  v.kind = LValue::Kind::kGather;
  v.dtype = out.dtype;
  v.sizes = Sizes(out);
  v.operands = {source, index};
  v.gather_dim = gather_dim;
  v.gather_at = std::move(gather_at);
  v.gather_what = std::move(what);
  return Add(std::move(v));
}

ValueExpr ScalarConst(const Scalar& s, DType dtype) {
  if (ComputeDType(dtype) != dtype) {
    // Rounded to float16/bfloat16 through float32, as runtime/convert.h.
    return ValueExpr::Cast(
        ValueExpr::Cast(ScalarConst(s, DType::kFloat32), dtype),
        DType::kFloat32);
  }
  if (IsFloating(dtype)) return ValueExpr::Const(dtype, s.to_double());
  if (dtype == DType::kBool) return ValueExpr::IntConst(dtype, s.to_bool());
  if (s.is_float()) {
    // runtime/convert.h: truncation, INT64_MIN when out of range or NaN.
    const double d = s.to_double();
    const int64_t i = (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)
                          ? static_cast<int64_t>(d)
                          : INT64_MIN;
    return ValueExpr::IntConst(dtype, i);
  }
  return ValueExpr::IntConst(dtype, s.to_int());
}

namespace {

bool IsTensorArgOk(const LoweredGraph& lowered, const Arg& a) {
  if (a.is_list()) {
    for (const Arg& item : a.as_list()) {
      if (!IsTensorArgOk(lowered, item)) return false;
    }
    return true;
  }
  return !a.is_value() || lowered.ValueOf(a.as_value()) >= 0;
}

void CollectValueRefs(const Arg& arg, std::vector<ValueRef>* refs) {
  if (arg.is_value()) refs->push_back(arg.as_value());
  if (arg.is_list()) {
    for (const Arg& item : arg.as_list()) CollectValueRefs(item, refs);
  }
}

// Whether `arg` refers to a node computing a size that is symbolic.
bool ReadsSymbolicSize(const Graph& graph, const GraphMeta& metas,
                       const Arg& arg) {
  if (arg.is_list()) {
    for (const Arg& item : arg.as_list()) {
      if (ReadsSymbolicSize(graph, metas, item)) return true;
    }
    return false;
  }
  if (!arg.is_value()) return false;
  const Node& producer = graph.node(arg.as_value().node);
  if (producer.op == nullptr || !producer.op->schema.returns_int) return false;
  const std::vector<TensorMeta>& m = metas[arg.as_value().node];
  return m.empty() || !m[0].sym_value.has_value() ||
         m[0].sym_value->is_symbolic();
}

// Why `node` cannot be lowered: an argument it reads as a literal is a
// symbolic size (converting it would bake the entry's first size into the
// kernel). Tensor arguments, and the Scalar operand of the arithmetic
// lowerings, are read as values (ctx.Operand); the view and fill lowerings
// read the sizes their size lists give from the node's output metadata.
std::optional<std::string> SymbolicLiteralArg(const Graph& graph,
                                              const GraphMeta& metas,
                                              const Node& node) {
  // native_group_norm's N, C and HxW restate its input's sizes, which the
  // lowering reads from the input itself.
  static const auto* const kValueArgs =
      new absl::flat_hash_map<std::string, std::vector<int>>{
          {"aten.view.default", {1}},
          {"aten._unsafe_view.default", {1}},
          {"aten.reshape.default", {1}},
          {"aten.expand.default", {1}},
          {"aten.full.default", {0}},
          {"aten.add.Scalar", {1}},
          {"aten.sub.Scalar", {1}},
          {"aten.mul.Scalar", {1}},
          {"aten.div.Scalar", {1}},
          {"aten.native_group_norm.default", {3, 4, 5}}};
  const auto it = kValueArgs->find(node.target);
  for (size_t a = 0; a < node.args.size(); ++a) {
    const bool tensor = node.op != nullptr && a < node.op->schema.args.size() &&
                        node.op->schema.args[a].type == ArgType::kTensor;
    if (tensor || (it != kValueArgs->end() &&
                   absl::c_linear_search(it->second, static_cast<int>(a)))) {
      continue;
    }
    if (ReadsSymbolicSize(graph, metas, node.args[a])) {
      return absl::StrCat("argument '",
                          node.op != nullptr && a < node.op->schema.args.size()
                              ? node.op->schema.args[a].name
                              : absl::StrCat(a),
                          "' is a symbolic size");
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<LoweredGraph> Lower(
    const Graph& graph, const GraphMeta& metas,
    const std::vector<std::vector<IndexExpr>>& input_strides,
    std::vector<std::string>* fallback_reasons, Device device,
    const absl::flat_hash_set<int>& library_steps) {
  LoweredGraph lowered;
  LoweringContext ctx(metas, &lowered, &graph);
  auto key = [](int node, int output) {
    return (int64_t{node} << 16) + output;
  };
  int next_input = 0;
  for (int i = 0; i < static_cast<int>(graph.nodes().size()); ++i) {
    const Node& node = graph.node(i);
    switch (node.kind) {
      case NodeKind::kPlaceholder: {
        const int input = next_input++;
        Slot slot;
        slot.source = Slot::Source::kInput;
        slot.input = input;
        slot.dtype = metas[i][0].dtype;
        lowered.slots.push_back(slot);
        if (input >= static_cast<int>(input_strides.size()) ||
            static_cast<int>(input_strides[input].size()) !=
                metas[i][0].dim()) {
          return absl::InternalError(
              absl::StrCat("no layout for input '", node.name, "'"));
        }
        lowered.of_graph_value[key(i, 0)] =
            ctx.AddBuffer(static_cast<int>(lowered.slots.size()) - 1,
                          metas[i][0], input_strides[input], node.name);
        break;
      }
      case NodeKind::kConstant: {
        Slot slot;
        slot.source = Slot::Source::kConstant;
        slot.node = i;
        slot.dtype = node.constant.dtype();
        lowered.slots.push_back(slot);
        lowered.of_graph_value[key(i, 0)] = ctx.AddBuffer(
            static_cast<int>(lowered.slots.size()) - 1, metas[i][0],
            ConstExprs(node.constant.strides()), node.name);
        break;
      }
      case NodeKind::kGetItem: {
        const ValueRef source = node.args[0].as_value();
        const int value = lowered.ValueOf(
            {source.node, static_cast<int>(node.args[1].as_int())});
        if (value < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("node '", node.name, "': getitem out of range"));
        }
        lowered.of_graph_value[key(i, 0)] = value;
        break;
      }
      case NodeKind::kOutput:
        for (const Arg& a : node.args) {
          lowered.outputs.push_back(lowered.ValueOf(a.as_value()));
        }
        break;
      case NodeKind::kCallFunction: {
        if (node.op != nullptr && node.op->schema.returns_int &&
            metas[i].size() == 1 && metas[i][0].sym_value.has_value()) {
          // A size a dynamic entry computes (sym_size, integer arithmetic):
          // its value is an expression over the entry's symbols, which its
          // users read from the metadata; a kernel that reads it as a tensor
          // computes it from the size parameters.
          const TensorMeta& meta = metas[i][0];
          const IndexExpr value = IndexExpr::FromSym(meta.sym_value->expr());
          lowered.of_graph_value[key(i, 0)] = ctx.Pointwise(
              meta.dtype, {}, {},
              [value, dtype = meta.dtype](const std::vector<ValueExpr>&) {
                return ValueExpr::Cast(ValueExpr::Index(value), dtype);
              },
              node.name);
          break;
        }
        absl::StatusOr<std::vector<int>> outputs =
            absl::UnimplementedError("no JIT lowering");
        const LowerFn* lower = FindLowering(node.target);
        bool args_ok = true;
        for (const Arg& a : node.args) {
          args_ok = args_ok && IsTensorArgOk(lowered, a);
        }
        // A device program uploads its CPU inputs (0-dim scalars beside
        // device tensors), so values on the CPU are computed there too.
        for (const TensorMeta& m : metas[i]) {
          args_ok = args_ok && (m.device == device || m.device.is_cpu());
        }
        std::optional<std::string> symbolic_literal;
        if (args_ok && lower != nullptr) {
          symbolic_literal = SymbolicLiteralArg(graph, metas, node);
        }
        if (!args_ok) {
          outputs = absl::UnimplementedError(
              absl::StrCat("not a computation on ", device.ToString()));
        } else if (library_steps.contains(i)) {
          outputs = absl::UnimplementedError("runs as the library's own step");
        } else if (symbolic_literal.has_value()) {
          outputs = absl::UnimplementedError(*symbolic_literal);
        } else if (lower != nullptr) {
          const size_t mark = lowered.values.size();
          outputs = (*lower)(ctx, node, metas[i]);
          // A lowering that gave up leaves no half-built values behind.
          if (!outputs.ok()) lowered.values.resize(mark);
        }
        if (outputs.ok()) {
          for (size_t v = 0; v < lowered.values.size(); ++v) {
            if (lowered.values[v].label.empty()) {
              lowered.values[v].label = node.name;
            }
          }
          for (size_t k = 0; k < outputs->size(); ++k) {
            lowered.values[(*outputs)[k]].label = node.name;
            lowered.of_graph_value[key(i, static_cast<int>(k))] = (*outputs)[k];
          }
          break;
        }
        if (outputs.status().code() != absl::StatusCode::kUnimplemented) {
          return outputs.status();
        }
        if (fallback_reasons != nullptr) {
          fallback_reasons->push_back(absl::StrCat(
              node.name, " (", node.target, "): ", outputs.status().message()));
        }
        ExternNode ext;
        ext.node = i;
        std::vector<ValueRef> refs;
        for (const Arg& a : node.args) CollectValueRefs(a, &refs);
        std::vector<std::pair<int64_t, int>> inputs;
        for (ValueRef r : refs) {
          inputs.push_back({key(r.node, r.index), lowered.ValueOf(r)});
        }
        lowered.extern_inputs[i] = std::move(inputs);
        ext.position = static_cast<int>(lowered.values.size());
        for (size_t k = 0; k < metas[i].size(); ++k) {
          Slot slot;
          slot.source = Slot::Source::kExtern;
          slot.node = i;
          slot.output = static_cast<int>(k);
          slot.dtype = metas[i][k].dtype;
          slot.sizes = ctx.Sizes(metas[i][k]);
          lowered.slots.push_back(slot);
          const int v = ctx.AddBuffer(
              static_cast<int>(lowered.slots.size()) - 1, metas[i][k],
              ContiguousStrideExprs(slot.sizes), node.name);
          ext.outputs.push_back(v);
          lowered.of_graph_value[key(i, static_cast<int>(k))] = v;
        }
        lowered.externs.push_back(std::move(ext));
        break;
      }
    }
  }
  return lowered;
}

}  // namespace guardjit
