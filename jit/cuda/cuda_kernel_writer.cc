#include "jit/cuda/cuda_kernel_writer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status_macros.h"
#include "jit/cuda/cuda_c_expr.h"
#include "jit/cuda/cuda_index_range.h"
#include "jit/cuda/cuda_online_softmax.h"

namespace guardjit::cuda_c {
namespace {

void CollectLoads(const ValueExpr& e, absl::flat_hash_set<const void*>& seen,
                  std::vector<ValueExpr>& loads) {
  if (!seen.insert(e.id()).second) return;
  if (e.kind() == ValueExpr::Kind::kLoad) loads.push_back(e);
  for (int i = 0; i < e.num_operands(); ++i) {
    CollectLoads(e.operand(i), seen, loads);
  }
}

}  // namespace

absl::StatusOr<std::string> KernelWriter::Load(int buffer, DType d,
                                               const std::string& at) {
  std::string ref = absl::StrCat("b", buffer, "[", at, "]");
  if (auto it = vector_refs_.find(ref); it != vector_refs_.end()) {
    ref = it->second;
  }
  switch (d) {
    case DType::kBool:
      return absl::StrCat("(", ref, " != 0)");
    case DType::kFloat16:
      return absl::StrCat("__half2float(", ref, ")");
    case DType::kBFloat16:
      return absl::StrCat("__bfloat162float(", ref, ")");
    default:
      return ref;
  }
}

absl::Status KernelWriter::Store(int buffer, const std::string& at,
                                 const std::string& v) {
  const DType d = k_.buffers[buffer].dtype;
  std::string value = v;
  if (d == DType::kBool) value = absl::StrCat("(unsigned char)(", v, ")");
  if (d == DType::kFloat16) value = absl::StrCat("__float2half_rn(", v, ")");
  if (d == DType::kBFloat16) {
    value = absl::StrCat("__float2bfloat16_rn(", v, ")");
  }
  std::string ref = absl::StrCat("b", buffer, "[", at, "]");
  if (auto it = vector_refs_.find(ref); it != vector_refs_.end()) {
    ref = it->second;
  }
  Line(absl::StrCat(ref, " = ", value, ";"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> KernelWriter::Value(const ValueExpr& e) {
  auto it = memo_.find(e.id());
  if (it != memo_.end()) return it->second;
  std::string expr;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad: {
      ASSIGN_OR_RETURN(expr, Load(e.buffer(), e.dtype(), Idx(e.index())));
      break;
    }
    case ValueExpr::Kind::kConst:
      if (e.is_int_const()) {
        if (e.dtype() == DType::kBool) {
          expr = e.int_value() != 0 ? "true" : "false";
        } else {
          ASSIGN_OR_RETURN(std::string t, ComputeType(e.dtype()));
          expr = absl::StrCat("(", t, ")", IntLiteral(e.int_value()));
        }
      } else {
        expr = FloatLiteral(e.float_value(), e.dtype());
      }
      // Constants are inlined, not given a temporary.
      memo_[e.id()] = expr;
      return expr;
    case ValueExpr::Kind::kLocal:
      if (e.local() < 0 || e.local() >= static_cast<int>(local_ready_.size()) ||
          !local_ready_[e.local()]) {
        return absl::InternalError("local read before its reduction");
      }
      return absl::StrCat("l", e.local());
    case ValueExpr::Kind::kUnary: {
      ASSIGN_OR_RETURN(std::string x, Value(e.operand(0)));
      ASSIGN_OR_RETURN(expr, Unary(e.unary_op(), e.operand(0).dtype(), x));
      break;
    }
    case ValueExpr::Kind::kBinary: {
      ASSIGN_OR_RETURN(std::string a, Value(e.operand(0)));
      ASSIGN_OR_RETURN(std::string b, Value(e.operand(1)));
      ASSIGN_OR_RETURN(expr, Binary(e.binary_op(), e.operand(0).dtype(), a, b));
      break;
    }
    case ValueExpr::Kind::kWhere: {
      ASSIGN_OR_RETURN(std::string c, Value(e.operand(0)));
      ASSIGN_OR_RETURN(std::string a, Value(e.operand(1)));
      ASSIGN_OR_RETURN(std::string b, Value(e.operand(2)));
      expr = absl::StrCat("(", c, " ? ", a, " : ", b, ")");
      break;
    }
    case ValueExpr::Kind::kCast: {
      ASSIGN_OR_RETURN(std::string x, Value(e.operand(0)));
      ASSIGN_OR_RETURN(expr, Cast(x, e.operand(0).dtype(), e.dtype()));
      break;
    }
    case ValueExpr::Kind::kIndex:
      expr = absl::StrCat("(long long)", Idx(e.index()));
      break;
    case ValueExpr::Kind::kGather: {
      // An index outside [0, bound) (negative ones are huge unsigned) sets
      // the check's bit and reads zero, touching nothing out of bounds.
      if (k_.num_checks == 0 || e.operand(0).dtype() != DType::kInt64) {
        return absl::InternalError(
            "gather in a kernel without index checks, or of a non-int64 "
            "index");
      }
      ASSIGN_OR_RETURN(std::string index, Value(e.operand(0)));
      const std::string ok = Temp();
      Line(absl::StrCat("const bool ", ok, " = (unsigned long long)", index,
                        " < (unsigned long long)", Idx(e.bound()), ";"));
      Line(absl::StrCat("if (!", ok, ") gj_fault |= 1ull << ",
                        std::min(e.check(), 63), ";"));
      // The 64-bit index is checked before it narrows: once in [0, bound),
      // the offset fits the kernel's index type.
      const std::string narrowed =
          narrow_ ? absl::StrCat("(int)", index) : index;
      ASSIGN_OR_RETURN(std::string load,
                       Load(e.buffer(), e.dtype(),
                            absl::StrCat(Idx(e.index()), " + ", narrowed, " * ",
                                         Idx(e.stride()))));
      ASSIGN_OR_RETURN(std::string t, ComputeType(e.dtype()));
      expr = absl::StrCat(ok, " ? ", load, " : (", t, ")0");
      break;
    }
  }
  ASSIGN_OR_RETURN(std::string t, ComputeType(e.dtype()));
  const std::string name = Temp();
  Line(absl::StrCat("const ", t, " ", name, " = ", expr, ";"));
  memo_[e.id()] = name;
  return name;
}

void KernelWriter::Decompose(const std::vector<LoopRange>& loops,
                             const std::string& flat,
                             const std::string& last_name) {
  if (loops.empty()) return;
  auto name = [&](size_t j) {
    return j + 1 == loops.size() && !last_name.empty()
               ? last_name
               : absl::StrCat("i", loops[j].var);
  };
  if (loops.size() == 1) {
    Line(absl::StrCat("const ", idx_t_, " ", name(0), " = ", flat, ";"));
    return;
  }
  // gj_row_q or gj_f_q.
  const std::string q = absl::StrCat(
      flat.find("gj_row") != std::string::npos ? "gj_row" : flat, "_q");
  Line(absl::StrCat(idx_t_, " ", q, " = ", flat, ";"));
  for (size_t j = loops.size(); j-- > 1;) {
    const std::string e = Idx(loops[j].extent);
    Line(absl::StrCat("const ", idx_t_, " ", name(j), " = ", q, " % ", e, "; ",
                      q, " /= ", e, ";"));
  }
  Line(absl::StrCat("const ", idx_t_, " ", name(0), " = ", q, ";"));
}

void KernelWriter::OpenStageLoop(const std::vector<LoopRange>& loops) {
  const int g = group_threads();
  const std::string n = Idx(Extent(loops));
  if (g == 1) {
    Line(absl::StrCat("for (", idx_t_, " gj_f = 0; gj_f < ", n, "; ++gj_f) {"));
  } else {
    Line(absl::StrCat("for (", idx_t_, " gj_f = gj_lane; gj_f < ", n,
                      "; gj_f += ", g, ") {"));
  }
  ++indent_;
  Decompose(loops, "gj_f");
}

absl::Status KernelWriter::WriteStore(const Stage& stage) {
  memo_.clear();
  if (stage.loops.empty()) {
    Line(group_threads() == 1 ? "{" : "if (gj_lane == 0) {");
    ++indent_;
  } else {
    OpenStageLoop(stage.loops);
  }
  ASSIGN_OR_RETURN(std::string v, Value(stage.value));
  RETURN_IF_ERROR(Store(stage.buffer, Idx(stage.index), v));
  CloseBlock();
  return absl::OkStatus();
}

// Each thread: the vectors its loads read at the vector's first point,
// then the stages at each of its points (lanes gj_j, unrolled) reading and
// writing vector lanes, then the stores' vectors. No stage reads an output
// (PlanVectorAccess), so the stores may move after the computation.
absl::Status KernelWriter::WriteVectorStages(const CudaVectorPlan& vec) {
  const std::string i = absl::StrCat("i", vec.var);
  Line(absl::StrCat("const ", idx_t_, " ", i, " = gj_vi * ", vec.width, ";"));
  std::vector<ValueExpr> loads;
  absl::flat_hash_set<const void*> seen;
  for (const Stage& s : k_.stages) CollectLoads(s.value, seen, loads);
  vector_refs_.clear();
  int next = 0;
  auto vector_type = [&](int buffer) -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(std::string t, StorageType(k_.buffers[buffer].dtype));
    return absl::StrCat("gj_vec<", t, ", ", vec.width, ">");
  };
  for (const ValueExpr& l : loads) {
    if (!IsVectorIndex(l.index(), vec.var, vec.width)) continue;
    const std::string at = Idx(l.index());
    const std::string ref = absl::StrCat("b", l.buffer(), "[", at, "]");
    if (vector_refs_.contains(ref)) continue;
    const std::string name = absl::StrCat("gj_x", next++);
    ASSIGN_OR_RETURN(std::string vt, vector_type(l.buffer()));
    Line(absl::StrCat("const ", vt, " ", name, " = gj_vload<", vec.width, ">(b",
                      l.buffer(), " + ", at, ");"));
    vector_refs_[ref] = absl::StrCat(name, ".v[gj_j]");
  }
  std::vector<std::string> stores;
  for (const Stage& s : k_.stages) {
    const std::string at = Idx(s.index);
    const std::string ref = absl::StrCat("b", s.buffer, "[", at, "]");
    if (vector_refs_.contains(ref)) continue;
    const std::string name = absl::StrCat("gj_y", stores.size());
    ASSIGN_OR_RETURN(std::string vt, vector_type(s.buffer));
    Line(absl::StrCat(vt, " ", name, ";"));
    vector_refs_[ref] = absl::StrCat(name, ".v[gj_j]");
    stores.push_back(
        absl::StrCat("gj_vstore(b", s.buffer, " + ", at, ", ", name, ");"));
  }
  Line("#pragma unroll");
  Line(absl::StrCat("for (int gj_j = 0; gj_j < ", vec.width, "; ++gj_j) {"));
  ++indent_;
  Line(absl::StrCat("const ", idx_t_, " ", i, " = gj_vi * ", vec.width,
                    " + gj_j;"));
  for (const Stage& s : k_.stages) {
    memo_.clear();
    ASSIGN_OR_RETURN(std::string v, Value(s.value));
    RETURN_IF_ERROR(Store(s.buffer, Idx(s.index), v));
  }
  CloseBlock();
  for (const std::string& st : stores) Line(st);
  vector_refs_.clear();
  return absl::OkStatus();
}

absl::Status KernelWriter::WriteRowLoop(
    const std::vector<LoopRange>& outer, const std::string& last_name,
    const std::function<absl::Status()>& body) {
  const int bt = options_.block_threads;
  // A group's first row and the grid's row stride.
  std::string first;
  std::string step;
  switch (mapping_) {
    case Mapping::kRowPerThread:
      first = absl::StrCat("(long long)blockIdx.x * ", bt, " + threadIdx.x");
      step = absl::StrCat("(long long)gridDim.x * ", bt);
      break;
    case Mapping::kRowPerWarp:
      first = absl::StrCat("(long long)blockIdx.x * ", bt / 32,
                           " + (threadIdx.x >> 5)");
      step = absl::StrCat("(long long)gridDim.x * ", bt / 32);
      break;
    case Mapping::kRowPerBlock:
      first = "blockIdx.x";
      step = "gridDim.x";
      break;
  }
  if (narrow_) {
    // Rows count in unsigned whatever the launch: a group past the rows
    // starts at gj_rows (no iteration, as before) and the stride is clamped
    // to gj_rows, so gj_row + gj_row_step < 2 * kIndex32Limit never wraps.
    Line(absl::StrCat("const unsigned gj_rows = ", Idx(Extent(outer)), ";"));
    Line(absl::StrCat("const long long gj_first = ", first, ";"));
    Line(
        "unsigned gj_row = gj_first < gj_rows ? (unsigned)gj_first : "
        "gj_rows;");
    Line(absl::StrCat("const unsigned gj_row_step = (unsigned)gj_imin(", step,
                      ", (long long)gj_rows);"));
  } else {
    Line(absl::StrCat("const long long gj_rows = ", Idx(Extent(outer)), ";"));
    Line(absl::StrCat("long long gj_row = ", first, ";"));
    Line(absl::StrCat("const long long gj_row_step = ", step, ";"));
  }
  Line("for (; gj_row < gj_rows; gj_row += gj_row_step) {");
  ++indent_;
  Decompose(outer, narrow_ ? "(int)gj_row" : "gj_row", last_name);
  RETURN_IF_ERROR(body());
  CloseBlock();
  return absl::OkStatus();
}

absl::Status KernelWriter::WriteStages() {
  const OnlineSoftmaxPlan plan = PlanOnlineSoftmax(k_);
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const Stage& stage = plan.stages[i];
    if (i > 0) Sync();
    if (stage.kind == Stage::Kind::kStore) {
      RETURN_IF_ERROR(WriteStore(stage));
      continue;
    }
    if (plan.fused[i]) {
      const Stage& sum = plan.stages[i + 1];
      if (stage.local < 0 || stage.local >= k_.num_locals || sum.local < 0 ||
          sum.local >= k_.num_locals) {
        return absl::InternalError("reduction into an undeclared local");
      }
      ASSIGN_OR_RETURN(std::string t, ComputeType(stage.value.dtype()));
      Line(absl::StrCat(t, " l", stage.local, ";"));
      Line(absl::StrCat(t, " l", sum.local, ";"));
      Line("{");
      ++indent_;
      RETURN_IF_ERROR(WriteOnlineMaxSum(stage, sum, static_cast<int>(i)));
      CloseBlock();
      local_ready_[stage.local] = true;
      local_ready_[sum.local] = true;
      ++info_->online_softmax_passes;
      ++i;
      continue;
    }
    if (stage.local < 0 || stage.local >= k_.num_locals) {
      return absl::InternalError("reduction into an undeclared local");
    }
    const bool arg = stage.combine == CombineOp::kArgMax ||
                     stage.combine == CombineOp::kArgMin;
    std::string t = "long long";
    if (!arg) {
      ASSIGN_OR_RETURN(t, ComputeType(stage.value.dtype()));
    }
    Line(absl::StrCat(t, " l", stage.local, ";"));
    Line("{");
    ++indent_;
    RETURN_IF_ERROR(WriteReduce(stage, static_cast<int>(i)));
    CloseBlock();
    local_ready_[stage.local] = true;
  }
  return absl::OkStatus();
}

absl::Status KernelWriter::Write(std::string* out) {
  // The mapping: by the longest stage's element count.
  int64_t row = 1;
  bool symbolic_row = false;
  for (const Stage& s : k_.stages) {
    const IndexExpr n = Extent(s.loops);
    if (n.is_const()) {
      row = std::max(row, n.value());
    } else {
      symbolic_row = true;
    }
  }
  if (!symbolic_row && row <= kSerialRowLimit) {
    mapping_ = Mapping::kRowPerThread;
  } else if (!symbolic_row && row <= kWarpRowLimit) {
    mapping_ = Mapping::kRowPerWarp;
  } else {
    mapping_ = Mapping::kRowPerBlock;
  }
  const int bt = options_.block_threads;
  info_->mapping = mapping_;
  info_->block_threads = bt;
  info_->rows_per_block = bt / group_threads();
  info_->rows = Extent(k_.outer);
  info_->num_buffers = static_cast<int>(k_.buffers.size());
  info_->num_size_params = k_.num_size_params;
  info_->has_fault_flag = k_.num_checks > 0;
  narrow_ = IndexMathFits32Bits(k_, options_.size_bounds);
  idx_t_ = narrow_ ? "int" : "long long";
  info_->index32 = narrow_;

  std::vector<std::string> params;
  for (size_t i = 0; i < k_.buffers.size(); ++i) {
    const BufferParam& p = k_.buffers[i];
    ASSIGN_OR_RETURN(std::string t, StorageType(p.dtype));
    params.push_back(
        absl::StrCat(p.is_output ? "" : "const ", t, "* __restrict__ b", i));
  }
  for (int s = 0; s < k_.num_size_params; ++s) {
    params.push_back(absl::StrCat("long long s", s));
  }
  if (k_.num_checks > 0) {
    params.push_back("unsigned long long* __restrict__ gj_faults");
  }

  local_ready_.assign(k_.num_locals, false);
  Line(narrow_ ? "// Index math in 32 bits: every index fits an int."
               : "// Index math in 64 bits.");
  if (narrow_) {
    for (int s = 0; s < k_.num_size_params; ++s) {
      Line(absl::StrCat("const int s", s, "i = (int)s", s, ";"));
    }
  }
  switch (mapping_) {
    case Mapping::kRowPerThread:
      break;
    case Mapping::kRowPerWarp:
      Line("const int gj_lane = threadIdx.x & 31;");
      break;
    case Mapping::kRowPerBlock:
      Line("const int gj_lane = threadIdx.x;");
      break;
  }
  if (k_.num_checks > 0) Line("unsigned long long gj_fault = 0;");
  const CudaVectorPlan vec = PlanVectorAccess(k_);
  if (vec.width > 1) {
    // One uniform test: every buffer moved as vectors is aligned to its
    // vector (the offsets are multiples of the width), else the scalar
    // loop runs.
    std::vector<std::string> aligned;
    for (const int b : vec.buffers) {
      aligned.push_back(absl::StrCat(
          "((unsigned long long)b", b, " & ",
          ItemSize(k_.buffers[b].dtype) * vec.width - 1, ") == 0"));
    }
    std::vector<LoopRange> vector_outer = k_.outer;
    vector_outer.back().extent =
        IndexExpr::Const(vector_outer.back().extent.value() / vec.width);
    info_->vector_width = vec.width;
    info_->rows = Extent(vector_outer);
    Line(absl::StrCat("// ", vec.width,
                      "-wide vectors when every buffer is aligned to its "
                      "vector, else one element at a time."));
    Line(absl::StrCat("if (", absl::StrJoin(aligned, " && "), ") {"));
    ++indent_;
    RETURN_IF_ERROR(WriteRowLoop(vector_outer, "gj_vi",
                                 [&] { return WriteVectorStages(vec); }));
    --indent_;
    Line("} else {");
    ++indent_;
    RETURN_IF_ERROR(WriteRowLoop(k_.outer, "", [&] { return WriteStages(); }));
    CloseBlock();
  } else {
    RETURN_IF_ERROR(WriteRowLoop(k_.outer, "", [&] { return WriteStages(); }));
  }
  if (k_.num_checks > 0) {
    Line("if (gj_fault != 0) atomicOr(gj_faults, gj_fault);");
  }
  absl::StrAppend(out, "extern \"C\" __global__ void __launch_bounds__(", bt,
                  ") ", info_->name, "(", absl::StrJoin(params, ", "), ") {\n",
                  shared_, body_, "}\n");
  return absl::OkStatus();
}

}  // namespace guardjit::cuda_c
