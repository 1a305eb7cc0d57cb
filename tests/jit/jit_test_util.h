#ifndef GUARDJIT_TESTS_JIT_JIT_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_JIT_TEST_UTIL_H_

// The conformance harness of the JIT tests: compile a graph with the
// JitCompiler, run it and the eager interpreter on the same inputs, compare.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/compiler.h"
#include "core/graph.h"
#include "core/graph_builder.h"
#include "core/symbolic_inputs.h"
#include "core/tensor.h"
#include "jit/jit_compiler.h"

namespace guardjit::testing {

// One JitCompiler shared by a test binary (its kernel cache too), strict: a
// graph the JIT fails on is an error, not an eager plan.
JitCompiler& SharedJit();

// The kernel backend the shared JIT runs kernels on: "" for the CPU,
// "cuda-simt" in jit_cuda_simt_tests, the device's target ("cuda:sm_90")
// in jit_cuda_device_tests.
const char* SharedJitBackend();
// Whether the shared JIT's kernels run on a real GPU (jit_cuda_device_tests
// with GJ_CUDA_REAL_DEVICE=1), where NVRTC's code contracts a * b + c into one
// fused multiply-add (its default, as nvcc's and PyTorch's CUDA kernels): one
// rounding fewer than the eager kernels and the host-compiled emulators, so
// results exact elsewhere can differ there in the last bits.
bool SharedJitOnGpu();
// A copy of `t` in the shared JIT's device memory, with t's strides, in
// jit_cuda_device_tests (the emulated device's, or the GPU's with
// GJ_CUDA_REAL_DEVICE=1); `t` itself elsewhere.
Tensor OnSharedJitDevice(const Tensor& t);
// cublasLtMatmul calls and kernel launches made so far through the shared
// JIT's device (counted in front of the emulated device or libcuda in
// jit_cuda_device_tests; 0 elsewhere).
int64_t CublasLtMatmuls();
int64_t DeviceLaunches();

// Inputs where the shared JIT's kernels read them: in jit_cuda_device_tests
// copies in device memory (inputs whose bytes overlap share one buffer, so
// views of one another stay views; 0-dim tensors stay CPU scalars), kept
// alive as long as this object; elsewhere the host tensors themselves.
class DeviceInputs {
 public:
  explicit DeviceInputs(const std::vector<Tensor>& host);
  std::vector<Tensor> tensors;

 private:
  std::vector<Tensor> buffers_;
};
// Host copies of a run's device outputs (CPU outputs as they are).
absl::StatusOr<std::vector<Tensor>> ToHost(std::vector<Tensor> outputs);
// Runs `executable` (the shared JIT's) on DeviceInputs(inputs) and returns
// its outputs in host memory: what tests that read results call, so the
// device suites run on a real GPU, whose memory the host cannot read.
absl::StatusOr<std::vector<Tensor>> RunOnSharedJit(
    const Executable& executable, const std::vector<Tensor>& inputs);
// An executable's Describe() without ", kernels on <backend>".
std::string WithoutBackend(const std::string& description);
// Why `executable` is not the shared JIT's compiled program with its kernels
// on SharedJitBackend() (an eager plan standing in for it), or nullopt.
std::optional<std::string> NotCompiledByJitReason(const Executable& executable);
// Expects NotCompiledByJitReason to be nullopt.
void ExpectCompiledByJit(const Executable& executable);
// No call of `executable` ran on the reference kernels because its input
// layout was not the one the program was planned for (JitExecutable).
void ExpectNoUnplannedCalls(const Executable& executable);

// Compares `actual` with tests/jit/golden/`file`, reporting the first line
// that differs, or rewrites the file under GJ_UPDATE_GOLDEN=1.
void ExpectGoldenFile(const std::string& file, const std::string& actual);

// Per-dtype tolerance for values computed by a fused kernel vs the eager
// kernels (different but equally valid rounding orders and math functions;
// float16/bfloat16 within two units in the last place).
double JitTolerance(DType dtype);

// Compiles `graph` for the metas of `compile_for` (default: `inputs`), runs
// it on `inputs`, runs the eager interpreter on `inputs` and expects equal
// dtypes, shapes and values within `rtol` (default JitTolerance), or the
// same error code when eager mode fails. Fails when the executable is not
// the JIT's (an eager plan standing in for it).
void ExpectJitMatchesEager(std::shared_ptr<const Graph> graph,
                           const std::vector<Tensor>& inputs, double rtol = -1,
                           const std::vector<Tensor>* compile_for = nullptr);

// A dynamic cache entry as Function builds one on a miss: `example`'s dims
// in `dynamic` become symbols (MakeSymbolicInputs), the graph is specialized
// over them, and `guards` are the entry's guards.
struct DynamicEntry {
  std::shared_ptr<const Graph> graph;
  Specialization spec;
  std::shared_ptr<const GuardTree> guards;
};
DynamicEntry MakeDynamicEntry(std::shared_ptr<const Graph> graph,
                              const std::vector<Tensor>& example,
                              const std::vector<DynamicDim>& dynamic);

// Compiles the dynamic entry of `graph` for `calls[0]` ONCE, then runs every
// call (which the entry's guards must accept) through it and the eager
// interpreter, expecting equal results within `rtol` (default
// JitTolerance). Returns the executable.
std::unique_ptr<Executable> ExpectDynamicJitMatchesEager(
    std::shared_ptr<const Graph> graph, const std::vector<DynamicDim>& dynamic,
    const std::vector<std::vector<Tensor>>& calls, double rtol = -1);

// A graph of one op applied to placeholders x0, x1, ... (one per tensor in
// `tensor_args`; other args literal), output = the op's outputs.
std::shared_ptr<const Graph> OpGraph(const std::string& target,
                                     const std::vector<Arg>& args,
                                     int num_inputs, Kwargs kwargs = {},
                                     int num_outputs = 1);

// Graph-building shorthands for tests: an int list arg, a node that must be
// accepted (a failed ASSERT names it), a graph that must finish.
Arg Ints(const std::vector<int64_t>& v);
void AddNode(GraphBuilder& b, const std::string& name,
             const std::string& target, std::vector<Arg> args,
             Kwargs kwargs = {});
std::shared_ptr<const Graph> Finish(GraphBuilder& b);

// x [M, in] -> linear(in, hidden) -> relu -> linear(hidden, out): torch's
// Linear layers, the weights graph constants [out, in] read transposed.
std::shared_ptr<const Graph> LinearMlp(int64_t in, int64_t hidden, int64_t out,
                                       DType dtype = DType::kFloat32);

// The SharedJit's static plan of `graph` for contiguous inputs of `shapes`
// and `dtype`, or of the metas of `inputs`; an empty plan (and a test
// failure) if planning fails.
Plan PlanOf(const Graph& graph, const std::vector<Shape>& shapes,
            DType dtype = DType::kFloat32);
Plan PlanOfInputs(const Graph& graph, const std::vector<Tensor>& inputs);

// The Describe() of `graph` compiled by a fresh JitCompiler for `inputs`'
// metadata (a compile error fails the test and returns "").
std::string DescribeCompiled(std::shared_ptr<const Graph> graph,
                             const std::vector<Tensor>& inputs);

// The eager steps of PlanOfInputs(graph, inputs).
int EagerSteps(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs);

// Runs `executable` on `inputs` from `threads` threads at once, `calls`
// times each, and counts the calls that failed or whose output 0 differs
// from `want` by more than 1e-4 relative (each call its own scratch; what
// the executable shares, read only or made once under a lock).
int ConcurrentMismatches(const Executable& executable,
                         const std::vector<Tensor>& inputs,
                         const std::vector<double>& want, int threads = 4,
                         int calls = 10);

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_JIT_JIT_TEST_UTIL_H_
