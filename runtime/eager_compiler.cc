#include "runtime/eager_compiler.h"

#include "absl/strings/str_cat.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "runtime/eager_interpreter.h"

namespace guardjit {
namespace {

class EagerPlan : public Executable {
 public:
  EagerPlan(std::unique_ptr<EagerInterpreter> interpreter, GraphMeta planned)
      : interpreter_(std::move(interpreter)), planned_(std::move(planned)) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const override {
    return interpreter_->Run(inputs, &planned_);
  }
  std::string Describe() const override {
    return absl::StrCat("eager plan, ", interpreter_->graph().num_ops(),
                        " kernels");
  }

 private:
  std::unique_ptr<EagerInterpreter> interpreter_;
  GraphMeta planned_;
};

class EagerFallback : public Executable {
 public:
  explicit EagerFallback(std::unique_ptr<EagerInterpreter> interpreter)
      : interpreter_(std::move(interpreter)) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const override {
    return interpreter_->Run(inputs);
  }
  std::string Describe() const override { return "eager interpreter"; }

 private:
  std::unique_ptr<EagerInterpreter> interpreter_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> EagerCompiler::Compile(
    std::shared_ptr<const Graph> graph, const Specialization& spec) {
  ASSIGN_OR_RETURN(GraphMeta planned, InferShapes(*graph, spec.inputs));
  ASSIGN_OR_RETURN(auto interpreter,
                   EagerInterpreter::Create(std::move(graph)));
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
