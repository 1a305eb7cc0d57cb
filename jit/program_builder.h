#ifndef GUARDJIT_JIT_PROGRAM_BUILDER_H_
#define GUARDJIT_JIT_PROGRAM_BUILDER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/shape_inference.h"
#include "jit/kernel_backend.h"
#include "jit/schedule/fusion.h"
#include "runtime/program/program_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// The program of `plan` on `backend` (runtime/program/program.h): the
// plan's kernels compiled into one module (or taken from the backend's
// cache), a runner for every step (the backend's for kernel, GEMM and conv
// steps; the reference kernel's for eager steps), each constant where the
// steps read it (uploaded once for a device program), and a device
// program's CUDA graphs. `metas` are symbolic for a dynamic program, over
// `num_symbols` symbols. `backend` must outlive the program; `plan` need
// not (the program copies what it runs).
absl::StatusOr<std::unique_ptr<ProgramRunner>> BuildProgram(
    std::shared_ptr<const Graph> graph, GraphMeta metas, const Plan& plan,
    KernelBackend& backend, std::shared_ptr<ThreadPool> pool,
    int num_symbols = 0);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_PROGRAM_BUILDER_H_
