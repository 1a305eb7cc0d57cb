#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/cuda/cuda_c_expr.h"
#include "jit/cuda/cuda_kernel_writer.h"

namespace guardjit::cuda_c {
namespace {

// Seeds memo_ so that every Local(local) node in `e` renders as `name`.
void SeedLocal(const ValueExpr& e, int local, const std::string& name,
               absl::flat_hash_map<const void*, std::string>& memo) {
  if (e.kind() == ValueExpr::Kind::kLocal && e.local() == local) {
    memo[e.id()] = name;
    return;
  }
  for (int i = 0; i < e.num_operands(); ++i) {
    SeedLocal(e.operand(i), local, name, memo);
  }
}

}  // namespace

void KernelWriter::GroupReduce(int stage, const std::vector<std::string>& vars,
                               const std::vector<std::string>& types,
                               const std::string& combine) {
  if (mapping_ == Mapping::kRowPerThread) return;
  // Butterfly within the warp: every lane ends with the warp's result.
  Line("for (int gj_o = 16; gj_o > 0; gj_o >>= 1) {");
  ++indent_;
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat(types[k], " a", k, " = ", vars[k], ";"));
    Line(absl::StrCat("const ", types[k], " b", k,
                      " = __shfl_xor_sync(0xffffffffu, ", vars[k], ", gj_o);"));
  }
  Line(combine);
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat(vars[k], " = a", k, ";"));
  }
  CloseBlock();
  if (mapping_ == Mapping::kRowPerWarp) return;
  // Across the block's warps through shared memory, in warp order (the
  // same result on every thread, deterministically).
  const int warps = options_.block_threads / 32;
  for (size_t k = 0; k < vars.size(); ++k) {
    absl::StrAppend(&shared_, "  __shared__ ", types[k], " gj_red", stage, "_",
                    k, "[", warps, "];\n");
  }
  Line("if ((threadIdx.x & 31) == 0) {");
  ++indent_;
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat("gj_red", stage, "_", k, "[threadIdx.x >> 5] = ", vars[k],
                      ";"));
  }
  CloseBlock();
  Line("__syncthreads();");
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat(vars[k], " = gj_red", stage, "_", k, "[0];"));
  }
  Line(absl::StrCat("for (int gj_w = 1; gj_w < ", warps, "; ++gj_w) {"));
  ++indent_;
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat(types[k], " a", k, " = ", vars[k], ";"));
    Line(absl::StrCat("const ", types[k], " b", k, " = gj_red", stage, "_", k,
                      "[gj_w];"));
  }
  Line(combine);
  for (size_t k = 0; k < vars.size(); ++k) {
    Line(absl::StrCat(vars[k], " = a", k, ";"));
  }
  CloseBlock();
  // The buffer may be written again by the next row's reduction.
  Line("__syncthreads();");
}

absl::Status KernelWriter::WriteReduce(const Stage& stage, int index) {
  if (stage.combine == CombineOp::kArgMax ||
      stage.combine == CombineOp::kArgMin) {
    return WriteArgReduce(stage, index);
  }
  memo_.clear();
  const DType d = stage.value.dtype();
  const bool fp = IsFloating(d);
  ASSIGN_OR_RETURN(std::string t, ComputeType(d));
  // Bytes and shorts (and bool) combine as int: shuffles take 32-bit and
  // wider values, and truncating at the end gives the same wrapped result.
  std::string acc_t = t;
  if (!fp && d != DType::kInt32 && d != DType::kInt64) acc_t = "int";
  const bool blocked_sum =
      fp && d != DType::kFloat64 && stage.combine == CombineOp::kSum;
  std::string init;
  switch (stage.combine) {
    case CombineOp::kSum:
      init = "0";
      break;
    case CombineOp::kProd:
      init = "1";
      break;
    case CombineOp::kMax:
      if (fp) {
        init = FloatLiteral(-INFINITY, d);
      } else if (d == DType::kBool || d == DType::kUInt8) {
        init = "0";
      } else {
        init = d == DType::kInt64   ? "(-9223372036854775807LL - 1)"
               : d == DType::kInt32 ? "(-2147483647 - 1)"
               : d == DType::kInt16 ? "-32768"
                                    : "-128";
      }
      break;
    case CombineOp::kMin:
      if (fp) {
        init = FloatLiteral(INFINITY, d);
      } else if (d == DType::kBool) {
        init = "1";
      } else {
        init = d == DType::kInt64   ? "9223372036854775807LL"
               : d == DType::kInt32 ? "2147483647"
               : d == DType::kInt16 ? "32767"
               : d == DType::kUInt8 ? "255"
                                    : "127";
      }
      break;
    default:
      break;
  }
  const std::string acc = absl::StrCat("gj_acc", index);
  Line(absl::StrCat(acc_t, " ", acc, " = (", acc_t, ")", init, ";"));
  const std::string total = absl::StrCat("gj_total", index);
  const std::string count = absl::StrCat("gj_count", index);
  if (blocked_sum) {
    Line(absl::StrCat("double ", total, " = 0;"));
    Line(absl::StrCat("int ", count, " = 0;"));
  }
  OpenStageLoop(stage.loops);
  ASSIGN_OR_RETURN(std::string v, Value(stage.value));
  if (stage.buffer >= 0) {
    RETURN_IF_ERROR(Store(stage.buffer, Idx(stage.index), v));
  }
  const std::string x = absl::StrCat("(", acc_t, ")", v);
  switch (stage.combine) {
    case CombineOp::kSum:
      if (const char* w = WrapType(d)) {
        Line(absl::StrCat(acc, " = (", acc_t, ")((", w, ")", acc, " + (", w,
                          ")", x, ");"));
      } else {
        Line(absl::StrCat(acc, " += ", x, ";"));
      }
      break;
    case CombineOp::kProd:
      if (const char* w = WrapType(d)) {
        Line(absl::StrCat(acc, " = (", acc_t, ")((", w, ")", acc, " * (", w,
                          ")", x, ");"));
      } else {
        Line(absl::StrCat(acc, " *= ", x, ";"));
      }
      break;
    case CombineOp::kMax:
      Line(fp ? absl::StrCat(acc, " = gj_maximum(", acc, ", ", x, ");")
              : absl::StrCat("if (", x, " > ", acc, ") ", acc, " = ", x, ";"));
      break;
    case CombineOp::kMin:
      Line(fp ? absl::StrCat(acc, " = gj_minimum(", acc, ", ", x, ");")
              : absl::StrCat("if (", x, " < ", acc, ") ", acc, " = ", x, ";"));
      break;
    default:
      break;
  }
  if (blocked_sum) {
    Line(absl::StrCat("if (++", count, " == ", kCudaSumBlock, ") { ", total,
                      " += (double)", acc, "; ", acc, " = 0; ", count,
                      " = 0; }"));
  }
  CloseBlock();
  std::string var = acc;
  std::string var_t = acc_t;
  if (blocked_sum) {
    Line(absl::StrCat(total, " += (double)", acc, ";"));
    var = total;
    var_t = "double";
  }
  std::string combine;
  switch (stage.combine) {
    case CombineOp::kSum:
      combine = WrapType(d) != nullptr
                    ? absl::StrCat("a0 = (", var_t, ")((", WrapType(d),
                                   ")a0 + (", WrapType(d), ")b0);")
                    : "a0 += b0;";
      break;
    case CombineOp::kProd:
      combine = WrapType(d) != nullptr
                    ? absl::StrCat("a0 = (", var_t, ")((", WrapType(d),
                                   ")a0 * (", WrapType(d), ")b0);")
                    : "a0 *= b0;";
      break;
    case CombineOp::kMax:
      combine = fp ? "a0 = gj_maximum(a0, b0);" : "if (b0 > a0) a0 = b0;";
      break;
    case CombineOp::kMin:
      combine = fp ? "a0 = gj_minimum(a0, b0);" : "if (b0 < a0) a0 = b0;";
      break;
    default:
      break;
  }
  GroupReduce(index, {var}, {var_t}, combine);
  // Back to the value's dtype: float16/bfloat16 round from float, bool is
  // nonzero, the rest convert.
  std::string local = absl::StrCat("(", t, ")", var);
  if (IsReducedFloat(d) || d == DType::kBool) {
    ASSIGN_OR_RETURN(local,
                     Cast(absl::StrCat("(float)", var), DType::kFloat32, d));
  }
  Line(absl::StrCat("l", stage.local, " = ", local, ";"));
  return absl::OkStatus();
}

// argmax/argmin: a thread scans its elements in increasing position and
// keeps the first best (a NaN, once seen, stays); threads combine by value,
// NaN first, ties to the smaller position, which gives the eager kernel's
// answer whatever the split.
absl::Status KernelWriter::WriteArgReduce(const Stage& stage, int index) {
  memo_.clear();
  const DType d = stage.value.dtype();
  const bool fp = IsFloating(d);
  const bool max = stage.combine == CombineOp::kArgMax;
  ASSIGN_OR_RETURN(std::string t, ComputeType(d));
  std::string acc_t = t;
  if (!fp && d != DType::kInt32 && d != DType::kInt64) acc_t = "int";
  std::string start;
  if (fp) {
    start = FloatLiteral(max ? -INFINITY : INFINITY, d);
  } else if (d == DType::kBool || d == DType::kUInt8) {
    start = max ? "0" : (d == DType::kBool ? "1" : "255");
  } else if (d == DType::kInt64) {
    start = max ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
  } else if (d == DType::kInt32) {
    start = max ? "(-2147483647 - 1)" : "2147483647";
  } else {
    start = d == DType::kInt16 ? (max ? "-32768" : "32767")
                               : (max ? "-128" : "127");
  }
  const std::string best = absl::StrCat("gj_best", index);
  const std::string pos = absl::StrCat("gj_pos", index);
  Line(absl::StrCat(acc_t, " ", best, " = (", acc_t, ")", start, ";"));
  Line(absl::StrCat("long long ", pos, " = 0;"));
  OpenStageLoop(stage.loops);
  ASSIGN_OR_RETURN(std::string v, Value(stage.value));
  if (stage.buffer >= 0) {
    RETURN_IF_ERROR(Store(stage.buffer, Idx(stage.index), v));
  }
  const std::string x = absl::StrCat("((", acc_t, ")", v, ")");
  const char* gt = max ? " > " : " < ";
  if (fp) {
    Line(absl::StrCat("if (", best, " == ", best, " && (", x, " != ", x, " || ",
                      x, gt, best, ")) { ", best, " = ", x, "; ", pos,
                      " = gj_f; }"));
  } else {
    Line(absl::StrCat("if (", x, gt, best, ") { ", best, " = ", x, "; ", pos,
                      " = gj_f; }"));
  }
  CloseBlock();
  // b (theirs) wins: a NaN over a number, a better value, or the same value
  // (or both NaN) at a smaller position.
  std::string wins;
  if (fp) {
    wins = absl::StrCat("(b0 != b0) ? (a0 == a0 || b1 < a1) : (a0 == a0 && (b0",
                        gt, "a0 || (b0 == a0 && b1 < a1)))");
  } else {
    wins = absl::StrCat("b0", gt, "a0 || (b0 == a0 && b1 < a1)");
  }
  GroupReduce(index, {best, pos}, {acc_t, "long long"},
              absl::StrCat("if (", wins, ") { a0 = b0; a1 = b1; }"));
  Line(absl::StrCat("l", stage.local, " = ", pos, ";"));
  return absl::OkStatus();
}

// The row's max m and sum s of exp(x - m) in one pass: a thread keeps its
// running max and a sum relative to it, rescaled by exp(m_old - m_new) when
// the max grows (a NaN becomes the max and poisons the sum); partials
// combine by the same rule, a partial at the combined max unscaled, so two
// -inf (empty) partials never compute exp(-inf - -inf). Elements equal to a
// -inf running max add nothing; a row whose max ends -inf (every element
// -inf) gets the sum NaN, as the two-pass sum of exp(-inf - -inf) gives.
// Float sums block as WriteReduce's do (the blocks and the threads'
// partials in double).
absl::Status KernelWriter::WriteOnlineMaxSum(const Stage& max, const Stage& sum,
                                             int index) {
  memo_.clear();
  const DType d = max.value.dtype();
  const bool f64 = d == DType::kFloat64;
  ASSIGN_OR_RETURN(std::string t, ComputeType(d));
  const std::string ninf = FloatLiteral(-INFINITY, d);
  const std::string exp = f64 ? "exp" : "expf";
  const std::string m = absl::StrCat("gj_max", index);
  const std::string acc = absl::StrCat("gj_acc", index);
  const std::string total = absl::StrCat("gj_total", index);
  const std::string count = absl::StrCat("gj_count", index);
  Line(absl::StrCat(t, " ", m, " = ", ninf, ";"));
  Line(absl::StrCat(t, " ", acc, " = 0;"));
  if (!f64) {
    Line(absl::StrCat("double ", total, " = 0;"));
    Line(absl::StrCat("int ", count, " = 0;"));
  }
  OpenStageLoop(max.loops);
  ASSIGN_OR_RETURN(std::string x, Value(max.value));
  Line(absl::StrCat("if (", x, " > ", m, " || ", x, " != ", x, ") {"));
  ++indent_;
  const std::string r = Temp();
  Line(absl::StrCat("const ", t, " ", r, " = ", exp, "(", m, " - ", x, ");"));
  Line(absl::StrCat(acc, " *= ", r, ";"));
  if (!f64) Line(absl::StrCat(total, " *= (double)", r, ";"));
  Line(absl::StrCat(m, " = ", x, ";"));
  CloseBlock();
  // exp(W - local) with W the value just maximized and the local the
  // running max.
  memo_[sum.value.operand(0).operand(0).id()] = x;
  SeedLocal(sum.value, max.local, m, memo_);
  ASSIGN_OR_RETURN(std::string e, Value(sum.value));
  Line(absl::StrCat("if (", m, " != ", ninf, ") ", acc, " += ", e, ";"));
  if (!f64) {
    Line(absl::StrCat("if (++", count, " == ", kCudaSumBlock, ") { ", total,
                      " += (double)", acc, "; ", acc, " = 0; ", count,
                      " = 0; }"));
  }
  CloseBlock();
  std::string s = acc;
  if (!f64) {
    Line(absl::StrCat(total, " += (double)", acc, ";"));
    s = total;
  }
  GroupReduce(index, {m, s}, {t, "double"},
              absl::StrCat("{ const ", t, " gj_mm = gj_maximum(a0, b0); a1 = ",
                           "(a0 == gj_mm ? a1 : a1 * ", exp,
                           "(a0 - gj_mm)) + (b0 == gj_mm ? b1 : b1 * ", exp,
                           "(b0 - gj_mm)); a0 = gj_mm; }"));
  const std::string n = Idx(Extent(max.loops));
  Line(absl::StrCat("l", max.local, " = ", m, ";"));
  Line(absl::StrCat("l", sum.local, " = ", m, " == ", ninf, " && ", n,
                    " > 0 ? ", FloatLiteral(NAN, d), " : (", t, ")", s, ";"));
  return absl::OkStatus();
}

}  // namespace guardjit::cuda_c
