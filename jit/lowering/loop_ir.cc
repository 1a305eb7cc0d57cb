#include "jit/lowering/loop_ir.h"

#include <charconv>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace guardjit {

const char* UnaryOpName(UnaryOp op) {
  static constexpr const char* kNames[] = {
      "neg",       "abs",        "exp",   "log",     "log1p",       "sqrt",
      "rsqrt",     "reciprocal", "tanh",  "sigmoid", "relu",        "gelu_erf",
      "gelu_tanh", "silu",       "erf",   "sin",     "cos",         "floor",
      "ceil",      "round",      "sign",  "not",     "bitwise_not", "isnan",
      "expm1",     "log2",       "log10", "trunc",   "tan",         "sinh",
      "cosh",      "asin",       "acos",  "atan",    "asinh",       "acosh",
      "atanh",     "isinf"};
  return kNames[static_cast<int>(op)];
}

const char* BinaryOpName(BinaryOp op) {
  static constexpr const char* kNames[] = {
      "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq",   "ne",
      "lt",  "le",  "gt",  "ge",  "and", "or",      "xor",     "fmod", "atan2"};
  return kNames[static_cast<int>(op)];
}

const char* CombineOpName(CombineOp op) {
  static constexpr const char* kNames[] = {"sum", "prod",   "max",
                                           "min", "argmax", "argmin"};
  return kNames[static_cast<int>(op)];
}

ValueExpr ValueExpr::Load(int buffer, DType dtype, IndexExpr index) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kLoad;
  node->dtype = dtype;
  node->id = buffer;
  node->index = std::move(index);
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Gather(int buffer, DType dtype, IndexExpr base,
                            const ValueExpr& index, IndexExpr stride,
                            IndexExpr bound, int check) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kGather;
  node->dtype = dtype;
  node->id = buffer;
  node->op = check;
  node->index = std::move(base);
  node->stride = std::move(stride);
  node->bound = std::move(bound);
  node->operands = {index};
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Const(DType dtype, double value) {
  if (!IsFloating(dtype)) return IntConst(dtype, static_cast<int64_t>(value));
  auto node = std::make_shared<Node>();
  node->kind = Kind::kConst;
  node->dtype = dtype;
  node->fvalue = value;
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::IntConst(DType dtype, int64_t value) {
  if (IsFloating(dtype)) return Const(dtype, static_cast<double>(value));
  auto node = std::make_shared<Node>();
  node->kind = Kind::kConst;
  node->dtype = dtype;
  node->is_int = true;
  node->ivalue = dtype == DType::kBool ? (value != 0) : value;
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Local(int local, DType dtype) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kLocal;
  node->dtype = dtype;
  node->id = local;
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Unary(UnaryOp op, const ValueExpr& x) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kUnary;
  node->dtype = (op == UnaryOp::kIsNan || op == UnaryOp::kIsInf ||
                 op == UnaryOp::kLogicalNot)
                    ? DType::kBool
                    : x.dtype();
  node->op = static_cast<int>(op);
  node->operands = {x};
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Binary(BinaryOp op, const ValueExpr& a,
                            const ValueExpr& b) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kBinary;
  const bool compare = op >= BinaryOp::kEq && op <= BinaryOp::kGe;
  node->dtype = compare ? DType::kBool : a.dtype();
  node->op = static_cast<int>(op);
  node->operands = {a, b};
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Where(const ValueExpr& cond, const ValueExpr& a,
                           const ValueExpr& b) {
  auto node = std::make_shared<Node>();
  node->kind = Kind::kWhere;
  node->dtype = a.dtype();
  node->operands = {cond, a, b};
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Index(IndexExpr index) {
  if (index.is_const()) return IntConst(DType::kInt64, index.value());
  auto node = std::make_shared<Node>();
  node->kind = Kind::kIndex;
  node->dtype = DType::kInt64;
  node->index = std::move(index);
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Cast(const ValueExpr& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  auto node = std::make_shared<Node>();
  node->kind = Kind::kCast;
  node->dtype = dtype;
  node->operands = {x};
  return ValueExpr(std::move(node));
}

ValueExpr ValueExpr::Replace(const ValueExpr& root, const ValueExpr& target,
                             const ValueExpr& with, bool* found) {
  absl::flat_hash_map<const void*, ValueExpr> done;
  std::function<ValueExpr(const ValueExpr&)> rewrite =
      [&](const ValueExpr& e) -> ValueExpr {
    if (e.id() == target.id()) {
      *found = true;
      return with;
    }
    auto it = done.find(e.id());
    if (it != done.end()) return it->second;
    std::vector<ValueExpr> operands;
    bool changed = false;
    for (const ValueExpr& op : e.node_->operands) {
      operands.push_back(rewrite(op));
      changed = changed || operands.back().id() != op.id();
    }
    ValueExpr result = e;
    if (changed) {
      auto node = std::make_shared<Node>(*e.node_);
      node->operands = std::move(operands);
      result = ValueExpr(std::move(node));
    }
    done.emplace(e.id(), result);
    return result;
  };
  return rewrite(root);
}

namespace {

// The shortest text that reads back as exactly `v`: printed IR is the kernel
// cache's key, so constants must not round.
std::string ShortestDouble(double v) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

// Prints one stage's expression DAG: nodes used more than once become
// numbered temporaries, listed before the statement that uses them, so the
// text stays linear in the DAG's size.
class ExprPrinter {
 public:
  explicit ExprPrinter(const Kernel& kernel) : kernel_(kernel) {}

  // Temporaries ("t0 = ...") and the expression text of `root`.
  std::pair<std::vector<std::string>, std::string> Print(
      const ValueExpr& root) {
    uses_.clear();
    names_.clear();
    lets_.clear();
    Count(root);
    std::string text = Text(root);
    return {std::move(lets_), std::move(text)};
  }

 private:
  void Count(const ValueExpr& e) {
    if (uses_[e.id()]++ > 0) return;
    for (int i = 0; i < e.num_operands(); ++i) Count(e.operand(i));
  }

  std::string Text(const ValueExpr& e) {
    auto it = names_.find(e.id());
    if (it != names_.end()) return it->second;
    std::string text = Inline(e);
    const bool leaf = e.kind() == ValueExpr::Kind::kConst ||
                      e.kind() == ValueExpr::Kind::kLocal;
    if (uses_[e.id()] > 1 && !leaf) {
      std::string name = absl::StrCat("t", next_temp_++);
      lets_.push_back(absl::StrCat(name, " = ", text));
      names_[e.id()] = name;
      return name;
    }
    return text;
  }

  std::string Inline(const ValueExpr& e) {
    const std::string dtype(DTypeName(e.dtype()));
    switch (e.kind()) {
      case ValueExpr::Kind::kLoad:
        return absl::StrCat(kernel_.buffers[e.buffer()].name, "[",
                            e.index().ToString(), "]");
      case ValueExpr::Kind::kConst:
        return e.is_int_const()
                   ? absl::StrCat(e.int_value(), ":", dtype)
                   : absl::StrCat(ShortestDouble(e.float_value()), ":", dtype);
      case ValueExpr::Kind::kLocal:
        return absl::StrCat("local", e.local());
      case ValueExpr::Kind::kUnary:
        return absl::StrCat(UnaryOpName(e.unary_op()), "(", Text(e.operand(0)),
                            ")");
      case ValueExpr::Kind::kBinary:
        return absl::StrCat(BinaryOpName(e.binary_op()), "(",
                            Text(e.operand(0)), ", ", Text(e.operand(1)), ")");
      case ValueExpr::Kind::kWhere:
        return absl::StrCat("where(", Text(e.operand(0)), ", ",
                            Text(e.operand(1)), ", ", Text(e.operand(2)), ")");
      case ValueExpr::Kind::kCast:
        return absl::StrCat(dtype, "(", Text(e.operand(0)), ")");
      case ValueExpr::Kind::kIndex:
        return absl::StrCat("index(", e.index().ToString(), ")");
      case ValueExpr::Kind::kGather:
        return absl::StrCat(kernel_.buffers[e.buffer()].name, "[",
                            e.index().ToString(), " + check", e.check(), "(",
                            Text(e.operand(0)), " < ", e.bound().ToString(),
                            ") * ", e.stride().ToString(), "]");
    }
    return "?";
  }

  const Kernel& kernel_;
  absl::flat_hash_map<const void*, int> uses_;
  absl::flat_hash_map<const void*, std::string> names_;
  std::vector<std::string> lets_;
  int next_temp_ = 0;
};

std::string Loops(const std::vector<LoopRange>& loops) {
  std::vector<std::string> parts;
  for (const LoopRange& l : loops) {
    parts.push_back(absl::StrCat("i", l.var, " < ", l.extent.ToString()));
  }
  return absl::StrCat("for ", absl::StrJoin(parts, ", "));
}

}  // namespace

std::string PackedGemm::ToString() const {
  // alpha exactly: the printed IR is the kernel cache's key.
  return absl::StrCat("packed_gemm f32 [", m, "x", k, "] (strides ", lda, ", ",
                      a_col_stride, ") @ packed [", k, "x", n, "], alpha ",
                      absl::StrFormat("%.17g", alpha), ", panels of ",
                      panel_width, " (vectors of ", vector_width,
                      "), tiles of ", tile_rows, " rows, k blocks of ", k_block,
                      ahead_of_time ? ", ahead of time" : "");
}

std::string Kernel::ToString() const {
  std::vector<std::string> params;
  for (const BufferParam& b : buffers) {
    params.push_back(absl::StrCat(b.name, ": ", b.is_output ? "out " : "",
                                  DTypeName(b.dtype), "*"));
  }
  for (int s = 0; s < num_size_params; ++s) {
    params.push_back(absl::StrCat("s", s, ": int64"));
  }
  std::string out = absl::StrCat(
      "kernel(", absl::StrJoin(params, ", "), ")",
      num_checks > 0 ? absl::StrCat(" with ", num_checks, " index checks") : "",
      "\n");
  std::string indent = "  ";
  if (packed_gemm.has_value()) {
    absl::StrAppend(&out, indent, packed_gemm->ToString(), "\n");
  }
  if (!outer.empty()) {
    absl::StrAppend(&out, indent, Loops(outer), ":\n");
    indent += "  ";
  }
  ExprPrinter printer(*this);
  for (const Stage& stage : stages) {
    auto [lets, text] = printer.Print(stage.value);
    std::string head = indent;
    if (!stage.loops.empty()) head += Loops(stage.loops) + ": ";
    if (stage.kind == Stage::Kind::kReduce) {
      absl::StrAppend(&out, indent, "local", stage.local, " = ",
                      CombineOpName(stage.combine), "<",
                      DTypeName(stage.value.dtype()), "> ",
                      stage.loops.empty() ? "" : Loops(stage.loops), "\n");
      for (const std::string& let : lets) {
        absl::StrAppend(&out, indent, "    ", let, "\n");
      }
      absl::StrAppend(&out, indent, "    of ", text, "\n");
      if (stage.buffer >= 0) {
        absl::StrAppend(&out, indent, "    storing ",
                        buffers[stage.buffer].name, "[", stage.index.ToString(),
                        "]\n");
      }
    } else {
      for (const std::string& let : lets) {
        absl::StrAppend(&out, indent, let, "\n");
      }
      absl::StrAppend(&out, head, buffers[stage.buffer].name, "[",
                      stage.index.ToString(), "] = ", text, "\n");
    }
  }
  return out;
}

}  // namespace guardjit
