#include "tests/jit/jit_test_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/compiler.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/test_util.h"

namespace guardjit::testing {

JitCompiler& SharedJit() {
  static JitCompiler* jit = JitCompiler::Create().value().release();
  return *jit;
}

double JitTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 2e-5;
    case DType::kFloat64:
      return 1e-11;
    default:
      return 0;
  }
}

void ExpectJitMatchesEager(std::shared_ptr<const Graph> graph,
                           const std::vector<Tensor>& inputs, double rtol,
                           const std::vector<Tensor>* compile_for) {
  Specialization spec;
  for (const Tensor& t : compile_for ? *compile_for : inputs) {
    spec.inputs.push_back(TensorMeta::Of(t));
  }
  auto executable = SharedJit().Compile(graph, spec);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto actual = (*executable)->Run(inputs);
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run(inputs);
  if (!expected.ok()) {
    // What eager mode rejects (a view of memory it cannot view) the compiled
    // program rejects too.
    EXPECT_EQ(actual.status().code(), expected.status().code())
        << actual.status() << " vs " << expected.status();
    return;
  }
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& a = (*actual)[i];
    const Tensor& e = (*expected)[i];
    SCOPED_TRACE(absl::StrCat("output ", i, " of graph ", graph->name()));
    const double tol = rtol >= 0 ? rtol : JitTolerance(e.dtype());
    ExpectTensor(a, e.dtype(), e.sizes(), ToDoubles(e), tol, tol);
  }
}

std::shared_ptr<const Graph> OpGraph(const std::string& target,
                                     const std::vector<Arg>& args,
                                     int num_inputs, Kwargs kwargs,
                                     int num_outputs) {
  GraphBuilder b(target);
  for (int i = 0; i < num_inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  auto node = b.AddNode("op", target, args, std::move(kwargs));
  EXPECT_TRUE(node.ok()) << node.status();
  std::vector<Arg> outputs;
  if (num_outputs == 1) {
    outputs.push_back(Arg::Ref("op"));
  } else {
    for (int k = 0; k < num_outputs; ++k) {
      const std::string name = absl::StrCat("item", k);
      EXPECT_TRUE(
          b.AddNode(name, "getitem", {Arg::Ref("op"), Arg::Int(k)}).ok());
      outputs.push_back(Arg::Ref(name));
    }
  }
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

}  // namespace guardjit::testing
