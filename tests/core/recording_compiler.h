#ifndef GUARDJIT_TESTS_CORE_RECORDING_COMPILER_H_
#define GUARDJIT_TESTS_CORE_RECORDING_COMPILER_H_

// A Compiler test double for core's cache tests: it keeps every graph it is
// asked to compile and counts compiles; its executables write their entry
// number (0 for the first compile, 1 for the next, ...; -1 for the fallback)
// as an int64 scalar into output 0, so a test reads which entry ran.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/compiler.h"
#include "core/executable.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "gtest/gtest.h"

namespace guardjit::testing {

class RecordingCompiler : public Compiler {
 public:
  class Numbered : public Executable {
   public:
    explicit Numbered(int n) : n_(n) {}
    absl::Status Run(const RunContext&, absl::Span<const Tensor>,
                     absl::Span<Tensor> outputs) const override {
      outputs[0] = Tensor::FromScalar(Scalar(int64_t{n_}), DType::kInt64);
      return absl::OkStatus();
    }
    size_t num_outputs() const override { return 1; }
    std::string Describe() const override { return "numbered"; }

   private:
    int n_;
  };

  // Each compile first sleeps `delay` (tests of concurrent calls widen their
  // races with it).
  explicit RecordingCompiler(
      std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : delay_(delay) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization&) override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    std::lock_guard<std::mutex> lock(mu_);
    graphs.push_back(std::move(graph));
    return std::make_unique<Numbered>(compiles++);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph>) override {
    return std::make_unique<Numbered>(-1);
  }
  std::string name() const override { return "recording"; }

  std::atomic<int> compiles{0};
  // The compiled graphs in compile order; read once the calls are done.
  std::vector<std::shared_ptr<const Graph>> graphs;

 private:
  const std::chrono::milliseconds delay_;
  std::mutex mu_;
};

// The entry number a RecordingCompiler's executable wrote; a failed call
// fails the test and gives -100.
inline int64_t EntryOf(const absl::StatusOr<std::vector<Tensor>>& out) {
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].Item().to_int() : -100;
}

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_CORE_RECORDING_COMPILER_H_
