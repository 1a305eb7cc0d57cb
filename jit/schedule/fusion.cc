#include "jit/schedule/fusion.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "jit/schedule/realize.h"
#include "jit/schedule/reuse_reduced_values.h"
#include "jit/schedule/split_reduction.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"

namespace guardjit {
namespace {

// Whether `strides` lay out `sizes` contiguously (dims of size 1 may have
// any stride).
bool IsContiguous(const std::vector<IndexExpr>& sizes,
                  const std::vector<IndexExpr>& strides) {
  if (strides.size() != sizes.size()) return false;
  const std::vector<IndexExpr> contiguous = ContiguousStrideExprs(sizes);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!sizes[d].is_const(1) && strides[d] != contiguous[d]) return false;
  }
  return true;
}

// One fused group: loops over `full_sizes`, the dims flagged in `mask`
// reduced (inner loops of each stage), the others the outer loops. A
// pointwise group reduces nothing.
struct Group {
  std::vector<IndexExpr> full_sizes;
  std::vector<bool> mask;
  struct Member {
    int value;
    enum class What { kReduce, kStoreFull, kStoreRow } what;
  };
  std::vector<Member> members;
  bool has_reduction = false;

  int num_outer() const {
    return static_cast<int>(std::count(mask.begin(), mask.end(), false));
  }
  // Sizes of a per-row value: kept dims only, or with size-1 reduced dims.
  std::vector<IndexExpr> RowSizes(bool keepdim) const {
    std::vector<IndexExpr> sizes;
    for (size_t d = 0; d < mask.size(); ++d) {
      if (!mask[d]) {
        sizes.push_back(full_sizes[d]);
      } else if (keepdim) {
        sizes.push_back(IndexExpr::Const(1));
      }
    }
    return sizes;
  }
};

bool SameSizes(const std::vector<IndexExpr>& a,
               const std::vector<IndexExpr>& b) {
  return a == b;
}

// A load of memory of `dtype`, as a value of ComputeDType(dtype).
ValueExpr LoadAs(int param, DType dtype, IndexExpr index) {
  return ValueExpr::Cast(ValueExpr::Load(param, dtype, std::move(index)),
                         ComputeDType(dtype));
}

std::string IndexKey(int value, const std::vector<IndexExpr>& idx) {
  std::string key = absl::StrCat(value, ":");
  for (const IndexExpr& e : idx) absl::StrAppend(&key, e.ToString(), ",");
  return key;
}

class Scheduler {
 public:
  Scheduler(const LoweredGraph& graph, const std::vector<bool>& channels_last)
      : g_(graph),
        channels_last_(channels_last),
        group_of_(graph.values.size(), -1),
        mat_slot_(graph.values.size(), -1),
        mat_strides_(graph.values.size()),
        slots_(graph.slots) {}

  absl::StatusOr<Plan> Run();

 private:
  // Where emission happens: a group's kernel (or a dry run deciding whether
  // a value can join it).
  struct EmitCtx {
    int group = -1;
    std::vector<IndexExpr> outer_vars;
    bool dry_run = true;
    std::vector<int> needs_memory;  // reductions of other groups read here
    absl::flat_hash_map<std::string, ValueExpr> memo;
    absl::flat_hash_map<int, int> local_of;  // reduction -> local
    Kernel* kernel = nullptr;
    std::vector<int>* buffer_slots = nullptr;
    absl::flat_hash_map<int, int> param_of_slot;
    absl::flat_hash_map<int, int> check_of;  // gather value -> its check
    std::vector<IndexCheck>* checks = nullptr;
    int next_var = 0;
  };

  absl::StatusOr<ValueExpr> Emit(int v, const std::vector<IndexExpr>& idx,
                                 EmitCtx& ctx);
  int Param(int slot, DType dtype, bool output, EmitCtx& ctx);
  absl::StatusOr<ValueExpr> EmitGather(int v, const std::vector<IndexExpr>& idx,
                                       EmitCtx& ctx);
  // Where `v` is in memory for a kernel of `group` to read, if it is.
  std::optional<TensorRef> MemoryFor(int v, int group) const;
  EmitCtx MakeCtx(int group, bool dry_run);
  std::vector<IndexExpr> FullIndex(const Group& g, EmitCtx& ctx,
                                   std::vector<LoopRange>* loops);
  std::vector<IndexExpr> RowIndex(const Group& g, const EmitCtx& ctx,
                                  bool keepdim);
  // Dry-runs `v` at `idx` in `group`; on success records the reductions it
  // needs in memory.
  bool TryEmit(int group, int v, bool full);
  void NeedMemory(int v);
  absl::Status Require(int v);
  void AddReduction(int v);
  int NewGroup(std::vector<IndexExpr> full_sizes, std::vector<bool> mask);
  // A slot for value `v`, laid out channels last where channels_last_ says.
  int AddSlot(int v);
  // The offset of element `idx` of value `v` in the memory it was given.
  IndexExpr MatIndex(int v, const std::vector<IndexExpr>& idx) const;
  int LastGroup() const {
    return !items_.empty() && items_.back().first ? items_.back().second : -1;
  }
  absl::StatusOr<KernelStep> BuildKernel(int group);
  TensorRef RefOf(int v) const;

  // A view resolved to memory: its source got memory from `group`.
  struct ViewRef {
    TensorRef ref;
    int group;
  };

  const LoweredGraph& g_;
  absl::flat_hash_map<int, ViewRef> view_ref_;
  const std::vector<bool>& channels_last_;  // per value
  std::vector<int> group_of_;
  std::vector<int> mat_slot_;
  // Per materialized value: its strides when not contiguous (channels last).
  std::vector<std::vector<IndexExpr>> mat_strides_;
  std::vector<Slot> slots_;
  std::vector<Group> groups_;
  // Execution order: (is_group, group index or extern index).
  std::vector<std::pair<bool, int>> items_;
};

int Scheduler::AddSlot(int v) {
  const LValue& value = g_.values[v];
  Slot slot;
  slot.source = Slot::Source::kKernel;
  slot.dtype = value.dtype;
  slot.sizes = value.sizes;
  slots_.push_back(slot);
  if (v < static_cast<int>(channels_last_.size()) && channels_last_[v]) {
    mat_strides_[v] = ChannelsLastStrideExprs(value.sizes);
  }
  return static_cast<int>(slots_.size()) - 1;
}

IndexExpr Scheduler::MatIndex(int v, const std::vector<IndexExpr>& idx) const {
  const std::vector<IndexExpr>& strides = mat_strides_[v];
  if (strides.empty()) return Linearize(idx, g_.values[v].sizes);
  IndexExpr offset = IndexExpr::Const(0);
  for (size_t d = 0; d < idx.size(); ++d) offset = offset + idx[d] * strides[d];
  return offset;
}

int Scheduler::NewGroup(std::vector<IndexExpr> full_sizes,
                        std::vector<bool> mask) {
  Group g;
  g.full_sizes = std::move(full_sizes);
  g.mask = std::move(mask);
  groups_.push_back(std::move(g));
  items_.push_back({true, static_cast<int>(groups_.size()) - 1});
  return static_cast<int>(groups_.size()) - 1;
}

Scheduler::EmitCtx Scheduler::MakeCtx(int group, bool dry_run) {
  EmitCtx ctx;
  ctx.group = group;
  ctx.dry_run = dry_run;
  const Group& g = groups_[group];
  // A loop of one iteration indexes with 0, as a broadcast operand of size 1
  // is read at 0: the same point then has one index everywhere (a reduction
  // of a batch of one is read back on its row, and fuses).
  int j = 0;
  for (size_t d = 0; d < g.mask.size(); ++d) {
    if (g.mask[d]) continue;
    ctx.outer_vars.push_back(g.full_sizes[d].is_const(1)
                                 ? IndexExpr::Const(0)
                                 : IndexExpr::Var(j));
    ++j;
  }
  ctx.next_var = g.num_outer();
  return ctx;
}

std::vector<IndexExpr> Scheduler::FullIndex(const Group& g, EmitCtx& ctx,
                                            std::vector<LoopRange>* loops) {
  std::vector<IndexExpr> idx;
  int outer = 0;
  int inner = 0;
  for (size_t d = 0; d < g.mask.size(); ++d) {
    if (g.mask[d]) {
      // Every stage loops over the reduced dims with the same variables, so
      // equal values of different stages are one node (see BuildKernel).
      const int var = ctx.next_var + inner++;
      if (loops != nullptr) loops->push_back({var, g.full_sizes[d]});
      idx.push_back(IndexExpr::Var(var));
    } else {
      idx.push_back(ctx.outer_vars[outer++]);
    }
  }
  return idx;
}

std::vector<IndexExpr> Scheduler::RowIndex(const Group& g, const EmitCtx& ctx,
                                           bool keepdim) {
  std::vector<IndexExpr> idx;
  int outer = 0;
  for (size_t d = 0; d < g.mask.size(); ++d) {
    if (!g.mask[d]) {
      idx.push_back(ctx.outer_vars[outer++]);
    } else if (keepdim) {
      idx.push_back(IndexExpr::Const(0));
    }
  }
  return idx;
}

int Scheduler::Param(int slot, DType dtype, bool output, EmitCtx& ctx) {
  auto it = ctx.param_of_slot.find(slot);
  if (it != ctx.param_of_slot.end()) return it->second;
  if (ctx.kernel == nullptr) return 0;
  const int index = static_cast<int>(ctx.kernel->buffers.size());
  ctx.kernel->buffers.push_back({"", dtype, output});
  ctx.buffer_slots->push_back(slot);
  ctx.param_of_slot[slot] = index;
  return index;
}

absl::StatusOr<ValueExpr> Scheduler::Emit(int v,
                                          const std::vector<IndexExpr>& idx,
                                          EmitCtx& ctx) {
  const std::string key = IndexKey(v, idx);
  auto memo = ctx.memo.find(key);
  if (memo != ctx.memo.end()) return memo->second;
  const LValue& value = g_.values[v];
  std::optional<ValueExpr> result;
  if (value.kind == LValue::Kind::kBuffer) {
    IndexExpr offset = value.offset;
    for (int d = 0; d < value.rank(); ++d) {
      offset = offset + idx[d] * value.strides[d];
    }
    result =
        LoadAs(Param(value.slot, value.dtype, false, ctx), value.dtype, offset);
  } else if (mat_slot_[v] >= 0 && group_of_[v] < ctx.group) {
    // In memory written by an earlier kernel. (A value a later kernel
    // materializes is recomputed here: that memory does not exist yet.)
    result = LoadAs(Param(mat_slot_[v], value.dtype, false, ctx), value.dtype,
                    MatIndex(v, idx));
  } else if (value.kind == LValue::Kind::kReduction) {
    if (group_of_[v] != ctx.group) {
      if (!ctx.dry_run) {
        return absl::InternalError(
            absl::StrCat("reduction ", value.label, " has no memory"));
      }
      ctx.needs_memory.push_back(v);
      result = ValueExpr::Local(-1, ComputeDType(value.dtype));
    } else {
      // Only the row being reduced is at hand: the index must be the outer
      // point (size-1 reduced dims at 0).
      const Group& g = groups_[ctx.group];
      if (idx != RowIndex(g, ctx, value.keepdim)) {
        return absl::FailedPreconditionError("reduction read off its row");
      }
      auto local = ctx.local_of.find(v);
      result =
          ValueExpr::Local(local == ctx.local_of.end() ? -1 : local->second,
                           ComputeDType(value.dtype));
    }
  } else if (auto view = view_ref_.find(v);
             view != view_ref_.end() && view->second.group < ctx.group) {
    const TensorRef& ref = view->second.ref;
    IndexExpr offset = ref.offset;
    for (int d = 0; d < value.rank(); ++d) {
      offset = offset + idx[d] * ref.strides[d];
    }
    result =
        LoadAs(Param(ref.slot, value.dtype, false, ctx), value.dtype, offset);
  } else if (value.kind == LValue::Kind::kView) {
    ASSIGN_OR_RETURN(result, Emit(value.operands[0], value.remap(idx), ctx));
  } else if (value.kind == LValue::Kind::kGather) {
    ASSIGN_OR_RETURN(result, EmitGather(v, idx, ctx));
  } else if (value.kind == LValue::Kind::kSelect) {
    const std::vector<std::vector<IndexExpr>> op_idx = value.operand_index(idx);
    std::vector<ValueExpr> operands;
    for (size_t k = 0; k < value.operands.size(); ++k) {
      ASSIGN_OR_RETURN(ValueExpr e, Emit(value.operands[k], op_idx[k], ctx));
      operands.push_back(std::move(e));
    }
    result = value.select(idx, operands);
  } else {
    std::vector<ValueExpr> operands;
    for (int o : value.operands) {
      const LValue& op = g_.values[o];
      std::vector<IndexExpr> op_idx(op.rank());
      const int offset = value.rank() - op.rank();
      for (int d = 0; d < op.rank(); ++d) {
        op_idx[d] =
            op.sizes[d].is_const(1) ? IndexExpr::Const(0) : idx[d + offset];
      }
      ASSIGN_OR_RETURN(ValueExpr e, Emit(o, op_idx, ctx));
      operands.push_back(std::move(e));
    }
    result = value.compute(operands);
  }
  ctx.memo[key] = *result;
  return *result;
}

std::optional<TensorRef> Scheduler::MemoryFor(int v, int group) const {
  const LValue& value = g_.values[v];
  if (value.kind == LValue::Kind::kBuffer ||
      (mat_slot_[v] >= 0 && group_of_[v] < group)) {
    return RefOf(v);
  }
  if (auto view = view_ref_.find(v);
      view != view_ref_.end() && view->second.group < group) {
    return view->second.ref;
  }
  return std::nullopt;
}

absl::StatusOr<ValueExpr> Scheduler::EmitGather(
    int v, const std::vector<IndexExpr>& idx, EmitCtx& ctx) {
  const LValue& value = g_.values[v];
  const std::optional<TensorRef> source =
      MemoryFor(value.operands[0], ctx.group);
  if (!source.has_value()) {
    // Run() gives every gathered source memory before the gather's readers
    // are scheduled; only a kernel after that memory's can read it.
    return absl::FailedPreconditionError(
        absl::StrCat("source of ", value.label, " not in memory here"));
  }
  const auto [index_idx, source_idx] = value.gather_at(idx);
  ASSIGN_OR_RETURN(ValueExpr index, Emit(value.operands[1], index_idx, ctx));
  index = ValueExpr::Cast(index, DType::kInt64);
  IndexExpr base = source->offset;
  for (size_t d = 0; d < source_idx.size(); ++d) {
    if (static_cast<int>(d) != value.gather_dim) {
      base = base + source_idx[d] * source->strides[d];
    }
  }
  const bool scalar = value.gather_dim < 0;
  const IndexExpr stride =
      scalar ? IndexExpr::Const(0) : source->strides[value.gather_dim];
  const IndexExpr bound =
      scalar ? IndexExpr::Const(1) : source->sizes[value.gather_dim];
  int check = 0;
  if (ctx.checks != nullptr) {
    auto [it, fresh] =
        ctx.check_of.try_emplace(v, static_cast<int>(ctx.checks->size()));
    if (fresh) {
      ctx.checks->push_back(
          {value.gather_what, std::max(value.gather_dim, 0), bound});
      ctx.kernel->num_checks = static_cast<int>(ctx.checks->size());
    }
    check = it->second;
  }
  return ValueExpr::Cast(
      ValueExpr::Gather(Param(source->slot, value.dtype, false, ctx),
                        value.dtype, base, index, stride, bound, check),
      ComputeDType(value.dtype));
}

bool Scheduler::TryEmit(int group, int v, bool full) {
  EmitCtx ctx = MakeCtx(group, /*dry_run=*/true);
  const Group& g = groups_[group];
  const LValue& value = g_.values[v];
  absl::StatusOr<ValueExpr> e;
  if (value.kind == LValue::Kind::kReduction) {
    e = Emit(value.operands[0], FullIndex(g, ctx, nullptr), ctx);
  } else if (full) {
    e = Emit(v, FullIndex(g, ctx, nullptr), ctx);
  } else {
    e = Emit(v,
             RowIndex(g, ctx,
                      value.rank() == static_cast<int>(g.mask.size()) &&
                          !g.mask.empty()),
             ctx);
  }
  if (!e.ok()) return false;
  for (int r : ctx.needs_memory) NeedMemory(r);
  return true;
}

void Scheduler::NeedMemory(int v) {
  if (mat_slot_[v] >= 0) return;
  mat_slot_[v] = AddSlot(v);
  groups_[group_of_[v]].members.push_back({v, Group::Member::What::kStoreRow});
}

void Scheduler::AddReduction(int v) {
  const LValue& value = g_.values[v];
  const LValue& source = g_.values[value.operands[0]];
  const int last = LastGroup();
  int group = -1;
  if (last >= 0 && groups_[last].has_reduction &&
      SameSizes(groups_[last].full_sizes, source.sizes) &&
      groups_[last].mask == value.mask && TryEmit(last, v, true)) {
    group = last;
  } else {
    group = NewGroup(source.sizes, value.mask);
    groups_[group].has_reduction = true;
    // A fresh group holds no other reduction, so this cannot fail.
    TryEmit(group, v, true);
  }
  group_of_[v] = group;
  groups_[group].members.push_back({v, Group::Member::What::kReduce});
}

absl::Status Scheduler::Require(int v) {
  const LValue& value = g_.values[v];
  if (value.kind == LValue::Kind::kBuffer || mat_slot_[v] >= 0) {
    return absl::OkStatus();
  }
  if (value.kind == LValue::Kind::kReduction) {
    NeedMemory(v);
    return absl::OkStatus();
  }
  if (view_ref_.contains(v)) return absl::OkStatus();
  // A view of a computed value: give the source memory and view that.
  if (value.kind == LValue::Kind::kView && (value.geometry || value.reshape)) {
    const int source = value.operands[0];
    RETURN_IF_ERROR(Require(source));
    const TensorRef src = RefOf(source);
    const std::optional<Shape> sizes = ConcreteShape(src.sizes);
    const std::optional<Shape> strides = ConcreteShape(src.strides);
    absl::StatusOr<ViewGeometry> geometry =
        value.geometry && sizes && strides && src.offset.is_const()
            ? value.geometry(*sizes, *strides)
            : absl::UnimplementedError("symbolic layout");
    const auto it = view_ref_.find(source);
    const int group =
        it != view_ref_.end() ? it->second.group : group_of_[source];
    if (geometry.ok()) {
      view_ref_[v] = {
          {src.slot, ConstExprs(geometry->sizes), ConstExprs(geometry->strides),
           src.offset + IndexExpr::Const(geometry->offset)},
          group};
      return absl::OkStatus();
    }
    // A reshape of contiguous memory over symbolic sizes (a dynamic entry's
    // [s0, T, D] -> [s0*T, D] before a GEMM step): that memory, contiguous
    // (not a copy kernel).
    if (value.reshape && IsContiguous(src.sizes, src.strides)) {
      view_ref_[v] = {{src.slot, value.sizes,
                       ContiguousStrideExprs(value.sizes), src.offset},
                      group};
      return absl::OkStatus();
    }
  }
  const int last = LastGroup();
  int group = -1;
  Group::Member::What what = Group::Member::What::kStoreFull;
  if (last >= 0) {
    const Group& g = groups_[last];
    if (SameSizes(value.sizes, g.full_sizes) && TryEmit(last, v, true)) {
      group = last;
    } else if (g.has_reduction &&
               (SameSizes(value.sizes, g.RowSizes(true)) ||
                SameSizes(value.sizes, g.RowSizes(false))) &&
               TryEmit(last, v, false)) {
      group = last;
      what = Group::Member::What::kStoreRow;
    }
  }
  if (group < 0) {
    group = NewGroup(value.sizes, std::vector<bool>(value.rank(), false));
    if (!TryEmit(group, v, true)) {
      return absl::InternalError(absl::StrCat("cannot schedule ", value.label));
    }
  }
  group_of_[v] = group;
  mat_slot_[v] = AddSlot(v);
  groups_[group].members.push_back({v, what});
  return absl::OkStatus();
}

absl::StatusOr<KernelStep> Scheduler::BuildKernel(int group) {
  const Group& g = groups_[group];
  KernelStep step;
  Kernel& k = step.kernel;
  EmitCtx ctx = MakeCtx(group, /*dry_run=*/false);
  ctx.kernel = &k;
  ctx.buffer_slots = &step.buffer_slots;
  ctx.checks = &step.checks;
  int outer = 0;
  for (size_t d = 0; d < g.mask.size(); ++d) {
    if (!g.mask[d]) k.outer.push_back({outer++, g.full_sizes[d]});
  }
  for (const Group::Member& m : g.members) {
    const LValue& value = g_.values[m.value];
    Stage stage;
    if (m.what == Group::Member::What::kReduce) {
      stage.kind = Stage::Kind::kReduce;
      std::vector<IndexExpr> idx = FullIndex(g, ctx, &stage.loops);
      ASSIGN_OR_RETURN(stage.value, Emit(value.operands[0], idx, ctx));
      stage.local = k.num_locals++;
      stage.combine = value.combine;
      ctx.local_of[m.value] = stage.local;
    } else {
      stage.kind = Stage::Kind::kStore;
      std::vector<IndexExpr> idx;
      if (m.what == Group::Member::What::kStoreFull) {
        idx = FullIndex(g, ctx, &stage.loops);
      } else {
        idx = RowIndex(
            g, ctx,
            value.rank() == static_cast<int>(g.mask.size()) && !g.mask.empty());
      }
      if (value.kind == LValue::Kind::kReduction) {
        stage.value = ValueExpr::Local(ctx.local_of.at(m.value),
                                       ComputeDType(value.dtype));
      } else {
        ASSIGN_OR_RETURN(stage.value, Emit(m.value, idx, ctx));
      }
      // float16/bfloat16 round once, here.
      stage.value = ValueExpr::Cast(stage.value, value.dtype);
      stage.buffer = Param(mat_slot_[m.value], value.dtype, true, ctx);
      stage.index = MatIndex(m.value, idx);
      step.allocate.push_back(mat_slot_[m.value]);
      step.computes.push_back(value.label);
    }
    k.stages.push_back(std::move(stage));
  }
  ReuseReducedValues(k);
  int inputs = 0, outputs = 0;
  for (BufferParam& b : k.buffers) {
    b.name = b.is_output ? absl::StrCat("out", outputs++)
                         : absl::StrCat("in", inputs++);
  }
  return step;
}

TensorRef Scheduler::RefOf(int v) const {
  if (auto it = view_ref_.find(v); it != view_ref_.end()) return it->second.ref;
  const LValue& value = g_.values[v];
  TensorRef ref;
  ref.sizes = value.sizes;
  if (value.kind == LValue::Kind::kBuffer) {
    ref.slot = value.slot;
    ref.strides = value.strides;
    ref.offset = value.offset;
  } else {
    ref.slot = mat_slot_[v];
    ref.strides = mat_strides_[v].empty() ? ContiguousStrideExprs(ref.sizes)
                                          : mat_strides_[v];
  }
  return ref;
}

absl::StatusOr<Plan> Scheduler::Run() {
  size_t next_extern = 0;
  const int n = static_cast<int>(g_.values.size());
  const std::vector<bool> realize = SharedValuesToRealize(g_);
  for (int v = 0; v <= n; ++v) {
    while (next_extern < g_.externs.size() &&
           g_.externs[next_extern].position == v) {
      const ExternNode& ext = g_.externs[next_extern];
      for (const auto& [key, input] : g_.extern_inputs.at(ext.node)) {
        RETURN_IF_ERROR(Require(input));
      }
      items_.push_back({false, static_cast<int>(next_extern)});
      ++next_extern;
    }
    if (v < n && g_.values[v].kind == LValue::Kind::kReduction) {
      AddReduction(v);
    }
    if (v < n && g_.values[v].kind == LValue::Kind::kGather) {
      RETURN_IF_ERROR(Require(g_.values[v].operands[0]));
    }
    if (v < n && realize[v]) RETURN_IF_ERROR(Require(v));
  }
  for (int v : g_.outputs) RETURN_IF_ERROR(Require(v));

  Plan plan;
  for (const auto& [is_group, index] : items_) {
    PlanStep step;
    step.is_kernel = is_group;
    if (is_group) {
      ASSIGN_OR_RETURN(step.kernel, BuildKernel(index));
      std::vector<std::string> reductions;
      for (const Group::Member& m : groups_[index].members) {
        if (m.what == Group::Member::What::kReduce) {
          reductions.push_back(g_.values[m.value].label);
        }
      }
      std::optional<SplitKernels> split;
      if (!reductions.empty() && SplitReductionsEnabled()) {
        split = SplitReduction(step.kernel, reductions, slots_);
      }
      if (split.has_value()) {
        PlanStep partials;
        partials.kernel = std::move(split->partials);
        partials.kernel.split = std::move(split->description);
        plan.steps.push_back(std::move(partials));
        step.kernel = std::move(split->combine);
      }
    } else {
      const ExternNode& ext = g_.externs[index];
      step.node = ext.node;
      for (const auto& [key, input] : g_.extern_inputs.at(ext.node)) {
        step.extern_args.push_back({key, RefOf(input)});
      }
    }
    plan.steps.push_back(std::move(step));
  }
  for (int v : g_.outputs) plan.outputs.push_back(RefOf(v));
  plan.slots = slots_;

  // Liveness: free intermediate memory after its last reader.
  std::vector<int> last_use(plan.slots.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    if (step.is_kernel) {
      for (int slot : step.kernel.buffer_slots) last_use[slot] = s;
    } else {
      for (const auto& arg : step.extern_args) last_use[arg.second.slot] = s;
    }
  }
  for (const TensorRef& out : plan.outputs) last_use[out.slot] = -1;
  for (size_t slot = 0; slot < plan.slots.size(); ++slot) {
    const Slot::Source source = plan.slots[slot].source;
    if (last_use[slot] >= 0 &&
        (source == Slot::Source::kKernel || source == Slot::Source::kExtern)) {
      plan.steps[last_use[slot]].release.push_back(static_cast<int>(slot));
    }
  }
  PlanBuffers(plan);
  return plan;
}

}  // namespace

// Greedy interval assignment over the steps: a kernel-written slot that no
// eager step reads (eager kernels may return views of their inputs) and that
// is not an output gets the first buffer whose last reader ran before the
// slot's writer. GEMM and conv steps read their operands as slots too.
void PlanBuffers(Plan& plan) {
  std::vector<int> last_use(plan.slots.size(), -1);
  std::vector<bool> eligible(plan.slots.size(), false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    const int at = static_cast<int>(s);
    if (!step.is_kernel) {
      for (const auto& arg : step.extern_args) last_use[arg.second.slot] = at;
      continue;
    }
    for (int slot : step.kernel.buffer_slots) last_use[slot] = at;
    if (step.gemm != nullptr) {
      const GemmStep& g = *step.gemm;
      last_use[g.symbolic ? g.symbolic->a.slot : g.a.slot] = at;
      last_use[g.symbolic ? g.symbolic->b.slot : g.b.slot] = at;
    }
    if (step.conv != nullptr) {
      const ConvStep& c = *step.conv;
      last_use[c.symbolic ? c.symbolic->input.slot : c.input.slot] = at;
      last_use[c.weight.slot] = at;
      if (c.device.has_value() && c.device->cols_slot >= 0) {
        last_use[c.device->cols_slot] = at;  // the im2col kernel's columns
      }
    }
  }
  for (const TensorRef& out : plan.outputs) last_use[out.slot] = -1;
  for (const PlanStep& step : plan.steps) {
    for (int slot : step.kernel.allocate) eligible[slot] = last_use[slot] >= 0;
  }
  for (const PlanStep& step : plan.steps) {
    for (const auto& arg : step.extern_args) eligible[arg.second.slot] = false;
  }
  plan.slot_buffer.assign(plan.slots.size(), -1);
  plan.buffer_bytes.clear();
  std::vector<int> buffer_free_after;  // last reader's step per buffer
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int slot : plan.steps[s].kernel.allocate) {
      if (!eligible[slot]) continue;
      const Slot& info = plan.slots[slot];
      IndexExpr bytes = IndexExpr::Const(ItemSize(info.dtype));
      for (const IndexExpr& d : info.sizes) bytes = bytes * d;
      int buffer = -1;
      for (size_t b = 0; b < buffer_free_after.size(); ++b) {
        if (buffer_free_after[b] < static_cast<int>(s)) {
          buffer = static_cast<int>(b);
          break;
        }
      }
      if (buffer < 0) {
        buffer = static_cast<int>(plan.buffer_bytes.size());
        plan.buffer_bytes.push_back(bytes);
        buffer_free_after.push_back(-1);
      }
      plan.slot_buffer[slot] = buffer;
      plan.buffer_bytes[buffer] =
          IndexExpr::Max(plan.buffer_bytes[buffer], bytes);
      buffer_free_after[buffer] = last_use[slot];
    }
  }
}

absl::Status IndexCheck::Error(absl::Span<const int64_t> symbols) const {
  // A symbolic size shows its expression too ("with size s0 = 5"), which
  // the function's call path explains ("(s0 = x.size()[0], 5 in this
  // call)").
  const int64_t size = bound.Evaluate(symbols);
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": an index is out of range for dimension ", dim, " with size ",
      bound.is_const() ? absl::StrCat(size)
                       : absl::StrCat(bound.ToString(), " = ", size)));
}

int Plan::num_kernels() const {
  int n = 0;
  for (const PlanStep& s : steps) n += s.is_kernel;
  return n;
}

std::string Plan::ToString() const {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& s = steps[i];
    if (s.gemm != nullptr || s.conv != nullptr) {
      absl::StrAppend(
          &out, "step ", i, ": ",
          s.gemm != nullptr ? s.gemm->ToString() : s.conv->ToString(),
          " with epilogue computing ", absl::StrJoin(s.kernel.computes, ", "),
          "\n", s.kernel.kernel.ToString());
    } else if (s.is_kernel) {
      absl::StrAppend(&out, "step ", i, ": kernel computing ",
                      absl::StrJoin(s.kernel.computes, ", "), "\n",
                      s.kernel.kernel.ToString());
    } else {
      absl::StrAppend(&out, "step ", i, ": eager node ", s.node, "\n");
    }
  }
  return out;
}

absl::StatusOr<Plan> Schedule(const LoweredGraph& graph,
                              const std::vector<bool>& channels_last) {
  return Scheduler(graph, channels_last).Run();
}

}  // namespace guardjit
