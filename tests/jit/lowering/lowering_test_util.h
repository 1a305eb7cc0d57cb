#ifndef GUARDJIT_TESTS_JIT_LOWERING_LOWERING_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_LOWERING_LOWERING_TEST_UTIL_H_

// What the tests of the lowering files (tests/jit/lowering/lowering_*_test.cc)
// share: the graph lowered for some inputs, and the compiled program checked
// against the eager interpreter with no eager step in it.

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/compiler.h"
#include "core/graph.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {

// The graph lowered for contiguous inputs like `inputs`, and why nodes were
// left to their eager kernels.
struct LoweredFor {
  GraphMeta metas;
  LoweredGraph lowered;
  std::vector<std::string> reasons;

  // The kind of the lowered value of node `name`'s output `output`.
  LValue::Kind KindOf(const Graph& graph, const std::string& name,
                      int output = 0) const {
    const int v = lowered.ValueOf({graph.FindNode(name), output});
    EXPECT_GE(v, 0) << name;
    return v < 0 ? LValue::Kind::kBuffer : lowered.values[v].kind;
  }
};

inline LoweredFor LowerFor(const Graph& graph,
                           const std::vector<Tensor>& inputs) {
  LoweredFor l;
  std::vector<TensorMeta> metas;
  std::vector<std::vector<IndexExpr>> strides;
  for (const Tensor& t : inputs) {
    metas.push_back(TensorMeta::Of(t));
    strides.push_back(ConstExprs(t.strides()));
  }
  auto graph_metas = InferShapes(graph, metas);
  EXPECT_TRUE(graph_metas.ok()) << graph_metas.status();
  if (!graph_metas.ok()) return l;
  l.metas = *graph_metas;
  auto lowered = Lower(graph, l.metas, strides, &l.reasons);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (lowered.ok()) l.lowered = std::move(*lowered);
  return l;
}

// Compiled with no eager step and run on `inputs`, then on non-contiguous
// copies of them, against the eager interpreter.
inline void ExpectLoweredMatchesEager(const std::shared_ptr<const Graph>& graph,
                                      const std::vector<Tensor>& inputs,
                                      double rtol = -1) {
  EXPECT_EQ(EagerSteps(graph, inputs), 0) << graph->name();
  ExpectJitMatchesEager(graph, inputs, rtol);
  std::vector<Tensor> strided;
  for (const Tensor& t : inputs) {
    strided.push_back(t.dim() > 0 ? NonContiguousCopy(t) : t);
  }
  EXPECT_EQ(EagerSteps(graph, strided), 0) << graph->name();
  ExpectJitMatchesEager(graph, strided, rtol);
}

// The compiled program's outputs for `inputs` (the JIT's, not an eager
// plan).
inline std::vector<Tensor> RunJit(const std::shared_ptr<const Graph>& graph,
                                  const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto executable = SharedJit().Compile(graph, spec);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return {};
  ExpectCompiledByJit(**executable);
  auto outputs = RunOnSharedJit(**executable, inputs);
  EXPECT_TRUE(outputs.ok()) << outputs.status();
  return outputs.ok() ? *outputs : std::vector<Tensor>{};
}

// Why compiling `graph` for `inputs` fails (OK if it does not).
inline absl::Status CompileStatus(const std::shared_ptr<const Graph>& graph,
                                  const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  return SharedJit().Compile(graph, spec).status();
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_JIT_LOWERING_LOWERING_TEST_UTIL_H_
