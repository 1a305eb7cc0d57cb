#include "runtime/program/eager_step.h"

#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/step_runner.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

class EagerStep : public StepRunner {
 public:
  EagerStep(const Program& program, int node, const KernelFn* fn,
            std::vector<std::pair<int64_t, TensorRef>> args,
            std::vector<int> produces)
      : node_(node),
        fn_(fn),
        args_(std::move(args)),
        produces_(std::move(produces)) {
    if (program.num_symbols == 0) {
      static_args_.resize(args_.size());
      for (size_t a = 0; a < args_.size(); ++a) {
        EvaluateRef(args_[a].second, {}, static_args_[a]);
      }
    }
  }

  absl::Status Run(StepCall& call) const override {
    const Program& program = call.program;
    const Node& node = program.graph->node(node_);
    const DeviceTransfer* transfer = program.transfer;
    // A dynamic program's argument views and metadata at the call's sizes.
    absl::InlinedVector<ConcreteRef, 4> dynamic_args;
    std::vector<TensorMeta> metas;
    const bool dynamic = program.num_symbols > 0;
    if (dynamic) {
      dynamic_args.resize(args_.size());
      for (size_t a = 0; a < args_.size(); ++a) {
        EvaluateRef(args_[a].second, call.symbols, dynamic_args[a]);
      }
      auto concrete = [&](const SymInt& v) {
        return v.is_symbolic() ? SymInt(v.expr().Evaluate(call.symbols)) : v;
      };
      for (TensorMeta m : program.metas[node_]) {
        for (SymInt& size : m.sizes) size = concrete(size);
        if (m.sym_value) m.sym_value = concrete(*m.sym_value);
        metas.push_back(std::move(m));
      }
    }
    absl::Status moved;
    KernelArgs args(
        node,
        [&](ValueRef v) {
          const int64_t key = (int64_t{v.node} << 16) + v.index;
          for (size_t a = 0; a < args_.size(); ++a) {
            if (args_[a].first != key) continue;
            Tensor view =
                ViewOf(call.slots, dynamic ? dynamic_args[a] : static_args_[a]);
            if (transfer == nullptr || view.device().is_cpu()) return view;
            absl::StatusOr<Tensor> host = transfer->ToHost(view, call.ctx);
            if (host.ok()) return *std::move(host);
            moved.Update(host.status());
            return Tensor();
          }
          return Tensor();
        },
        [](const Scalar& s) { return Tensor::WrappedNumber(s); });
    RETURN_IF_ERROR(moved);
    // Outputs of the graph the kernel writes in place (OutputPlacement:
    // nothing that can fail runs after this step).
    absl::InlinedVector<const Tensor*, 4> dests(produces_.size(), nullptr);
    bool any_dest = false;
    for (size_t k = 0; k < produces_.size(); ++k) {
      dests[k] = produces_[k] >= 0 ? call.destination(produces_[k]) : nullptr;
      any_dest |= dests[k] != nullptr;
    }
    if (any_dest) args.set_destinations(dests);
    auto result = (*fn_)(args, dynamic ? absl::Span<const TensorMeta>(metas)
                                       : program.metas[node_]);
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat("node '", node.name, "' (", node.target,
                                       "): ", result.status().message()));
    }
    if (result->size() < produces_.size()) {
      return absl::InternalError(absl::StrCat(
          "node '", node.name, "': kernel returned ", result->size(),
          " outputs, expected at least ", produces_.size()));
    }
    for (size_t k = 0; k < produces_.size(); ++k) {
      if (produces_[k] < 0) continue;  // an output nothing reads
      // Later kernels read eager results as contiguous memory.
      Tensor t = (*result)[k];
      if (!t.is_contiguous()) {
        ASSIGN_OR_RETURN(t, Contiguous(t));
      }
      if (transfer != nullptr) {
        ASSIGN_OR_RETURN(t, transfer->ToDevice(t, call.ctx));
      }
      call.slots[produces_[k]] = std::move(t);
    }
    return absl::OkStatus();
  }

 private:
  const int node_;
  const KernelFn* const fn_;
  const std::vector<std::pair<int64_t, TensorRef>> args_;
  // A static program's argument views, evaluated once.
  std::vector<ConcreteRef> static_args_;
  // Per output of the node: the slot it fills, or -1.
  const std::vector<int> produces_;
};

}  // namespace

absl::StatusOr<ProgramStep> MakeEagerStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args) {
  const Node& n = program.graph->node(node);
  const KernelRegistry& registry = KernelRegistry::Global();
  const KernelFn* fn = registry.Find(n.target);
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "node '", n.name, "' (", n.target, "): no reference kernel"));
  }
  std::vector<int> produces;
  for (size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == node) {
      produces.resize(std::max<size_t>(produces.size(), slot.output + 1), -1);
      produces[slot.output] = static_cast<int>(s);
    }
  }
  ProgramStep step;
  step.kind = StepKind::kEager;
  step.node = node;
  step.can_fail = true;
  step.writes_destinations = registry.writes_destinations(n.target);
  step.label = absl::StrCat("node '", n.name, "'");
  step.runner = std::make_unique<EagerStep>(program, node, fn, std::move(args),
                                            std::move(produces));
  return step;
}

}  // namespace guardjit
