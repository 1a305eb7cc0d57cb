#include "runtime/eager_compiler.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "runtime/eager_interpreter.h"

namespace guardjit {
namespace {

// Moves `results` (one per graph output) into `outputs`.
absl::Status MoveOutputs(absl::StatusOr<std::vector<Tensor>> results,
                         absl::Span<Tensor> outputs) {
  if (!results.ok()) return results.status();
  if (results->size() != outputs.size()) {
    return absl::InternalError(absl::StrCat("the eager plan returned ",
                                            results->size(), " outputs for ",
                                            outputs.size(), " slots"));
  }
  std::move(results->begin(), results->end(), outputs.begin());
  return absl::OkStatus();
}

// "text; outputs copied: ..." where `interpreter` copies outputs.
std::string WithCopies(const EagerInterpreter& interpreter, std::string text) {
  const std::string copies = interpreter.DescribeOutputCopies();
  if (!copies.empty()) absl::StrAppend(&text, "; ", copies);
  return text;
}

class EagerPlan : public Executable {
 public:
  EagerPlan(std::unique_ptr<EagerInterpreter> interpreter, GraphMeta planned)
      : interpreter_(std::move(interpreter)), planned_(std::move(planned)) {}

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    return MoveOutputs(interpreter_->Run(inputs, &planned_, ctx), outputs);
  }
  size_t num_outputs() const override {
    return interpreter_->graph().num_outputs();
  }
  std::string Describe() const override {
    return WithCopies(
        *interpreter_,
        absl::StrCat("eager plan, ", interpreter_->graph().num_ops(),
                     " kernels"));
  }

 private:
  std::unique_ptr<EagerInterpreter> interpreter_;
  GraphMeta planned_;
};

// A dynamic entry's plan: the symbolic metadata, made concrete per call from
// the symbols' values (no shape rules run on the hit path).
class DynamicEagerPlan : public Executable {
 public:
  DynamicEagerPlan(std::unique_ptr<EagerInterpreter> interpreter,
                   GraphMeta symbolic, std::vector<SymbolSource> symbols)
      : interpreter_(std::move(interpreter)),
        symbolic_(std::move(symbolic)),
        symbols_(std::move(symbols)) {}

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    std::vector<int64_t> values;
    if (ctx.symbols.size() == symbols_.size()) {
      values.assign(ctx.symbols.begin(), ctx.symbols.end());
    } else {
      values.reserve(symbols_.size());
      for (const SymbolSource& s : symbols_) {
        values.push_back(inputs[s.input].sizes()[s.dim]);
      }
    }
    auto concrete = [&](const SymInt& v) {
      return v.is_symbolic() ? SymInt(v.expr().Evaluate(values)) : v;
    };
    GraphMeta planned(symbolic_.size());
    for (size_t n = 0; n < symbolic_.size(); ++n) {
      for (const TensorMeta& m : symbolic_[n]) {
        TensorMeta c = m;
        for (SymInt& size : c.sizes) size = concrete(size);
        if (c.sym_value) c.sym_value = concrete(*c.sym_value);
        planned[n].push_back(std::move(c));
      }
    }
    return MoveOutputs(interpreter_->Run(inputs, &planned, ctx), outputs);
  }
  size_t num_outputs() const override {
    return interpreter_->graph().num_outputs();
  }
  std::string Describe() const override {
    return WithCopies(
        *interpreter_,
        absl::StrCat("dynamic eager plan over ", symbols_.size(), " symbols, ",
                     interpreter_->graph().num_ops(), " kernels"));
  }

 private:
  std::unique_ptr<EagerInterpreter> interpreter_;
  GraphMeta symbolic_;
  std::vector<SymbolSource> symbols_;
};

class EagerFallback : public Executable {
 public:
  explicit EagerFallback(std::unique_ptr<EagerInterpreter> interpreter)
      : interpreter_(std::move(interpreter)) {}

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    return MoveOutputs(interpreter_->Run(inputs, nullptr, ctx), outputs);
  }
  size_t num_outputs() const override {
    return interpreter_->graph().num_outputs();
  }
  std::string Describe() const override { return "eager interpreter"; }

 private:
  std::unique_ptr<EagerInterpreter> interpreter_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> EagerCompiler::Compile(
    std::shared_ptr<const Graph> graph, const Specialization& spec) {
  GraphMeta planned = spec.meta;
  if (planned.empty()) {
    ASSIGN_OR_RETURN(planned, InferShapes(*graph, spec.inputs));
  }
  ASSIGN_OR_RETURN(auto interpreter,
                   EagerInterpreter::Create(std::move(graph)));
  if (spec.dynamic()) {
    return std::make_unique<DynamicEagerPlan>(std::move(interpreter),
                                              std::move(planned), spec.symbols);
  }
  return std::make_unique<EagerPlan>(std::move(interpreter),
                                     std::move(planned));
}

absl::StatusOr<std::unique_ptr<Executable>> EagerCompiler::Fallback(
    std::shared_ptr<const Graph> graph) {
  ASSIGN_OR_RETURN(auto interpreter,
                   EagerInterpreter::Create(std::move(graph)));
  return std::make_unique<EagerFallback>(std::move(interpreter));
}

}  // namespace guardjit
