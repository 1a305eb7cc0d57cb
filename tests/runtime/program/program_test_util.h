#ifndef GUARDJIT_TESTS_RUNTIME_PROGRAM_PROGRAM_TEST_UTIL_H_
#define GUARDJIT_TESTS_RUNTIME_PROGRAM_PROGRAM_TEST_UTIL_H_

// Hand-built programs for the tests of runtime/program/program.h and
// program_graphs.h: a step that scales one float32 slot into another and
// records what it saw, the graph such programs stand for, and slot helpers.

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/index_expr.h"
#include "runtime/program/program.h"
#include "runtime/program/step_runner.h"

namespace guardjit::testing {

// slots[out] = slots[in] * factor, element by element in row-major order
// of `in` (float32; `out` contiguous). Records each run's view of the slots.
class ScaleStep : public StepRunner {
 public:
  ScaleStep(int in, int out, float factor) : in_(in), out_(out), f_(factor) {}
  absl::Status Run(StepCall& call) const override {
    ++runs;
    const Tensor& in = call.slots[in_];
    const Tensor& out = call.slots[out_];
    in_data = in.data();
    out_data = out.data();
    out_device = out.device();
    if (out.data() == nullptr) return absl::InternalError("no memory");
    std::vector<int64_t> index(in.dim(), 0);
    for (int64_t i = 0; i < in.numel(); ++i) {
      int64_t offset = 0;
      for (int d = 0; d < in.dim(); ++d) offset += index[d] * in.stride(d);
      out.data_as<float>()[i] = in.data_as<float>()[offset] * f_;
      for (int d = in.dim() - 1; d >= 0; --d) {
        if (++index[d] < in.size(d)) break;
        index[d] = 0;
      }
    }
    return absl::OkStatus();
  }
  mutable int runs = 0;
  mutable const void* in_data = nullptr;
  mutable const void* out_data = nullptr;
  mutable Device out_device;

 private:
  int in_, out_;
  float f_;
};

// x -> a0 = relu(x) -> a1 = relu(a0) ... with outputs a0 .. a<n-1>: the
// graph a program of n output slots stands for (names in messages).
inline std::shared_ptr<const Graph> ChainGraph(int n) {
  GraphBuilder b("chain");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::vector<Arg> outputs;
  std::string last = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = "a" + std::to_string(i);
    EXPECT_TRUE(b.AddNode(name, "aten.relu.default", {Arg::Ref(last)}).ok());
    outputs.push_back(Arg::Ref(name));
    last = name;
  }
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

inline Slot InputSlot(int input, std::vector<IndexExpr> sizes) {
  Slot s;
  s.source = Slot::Source::kInput;
  s.input = input;
  s.sizes = std::move(sizes);
  return s;
}

inline Slot KernelSlot(std::vector<IndexExpr> sizes) {
  Slot s;
  s.source = Slot::Source::kKernel;
  s.sizes = std::move(sizes);
  return s;
}

inline TensorRef WholeSlot(int slot, const std::vector<IndexExpr>& sizes) {
  return {slot, sizes, ContiguousStrideExprs(sizes), IndexExpr::Const(0)};
}

inline ProgramStep Step(std::unique_ptr<StepRunner> runner,
                        std::vector<int> allocate, std::string label) {
  ProgramStep step;
  step.runner = std::move(runner);
  step.allocate = std::move(allocate);
  step.label = std::move(label);
  return step;
}

// Host memory through the Allocator interface, counting what is live.
class CountingAllocator : public Allocator {
 public:
  void* Allocate(size_t nbytes) override {
    ++allocations;
    ++live;
    return std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
  }
  void Free(void* block, size_t) override {
    --live;
    std::free(block);
  }
  std::atomic<int> allocations{0};
  std::atomic<int> live{0};
};

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_RUNTIME_PROGRAM_PROGRAM_TEST_UTIL_H_
