// GJ_COMPILE_ASYNC in the guard cache: a miss answers with the eager
// fallback at once while its entry compiles on the compile queue; later calls
// use the entry once it is published. A compiler that blocks until the test
// releases it makes the order deterministic.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/compile_queue.h"
#include "core/function.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_compiler.h"
#include "runtime/eager_interpreter.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::RandomTensor;
using testing::ToDoubles;

// The eager compiler behind a gate: Compile waits until Open().
class GatedCompiler : public Compiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
    }
    if (fail_) return absl::InvalidArgumentError("the test compiler refuses");
    if (fail_code_ != absl::StatusCode::kOk) {
      return absl::Status(fail_code_, "the test compiler refuses");
    }
    return inner_.Compile(std::move(graph), spec);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override {
    return inner_.Fallback(std::move(graph));
  }
  std::string name() const override { return "gated"; }

  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void WaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  bool fail_ = false;
  absl::StatusCode fail_code_ = absl::StatusCode::kOk;

 private:
  EagerCompiler inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int started_ = 0;
};

// f(x, y) = relu(x * y) + 1
std::shared_ptr<const Graph> MulReluAdd() {
  GraphBuilder b("mul_relu_add");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(
      b.AddNode("m", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("m")}).ok());
  EXPECT_TRUE(
      b.AddNode("a", "aten.add.Tensor", {Arg::Ref("r"), Arg::Int(1)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("a")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

class AsyncCompileThreadsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Function> Make(std::shared_ptr<Compiler> compiler) {
    FunctionOptions options;
    options.name = "async";
    options.compile_queue = queue_;
    return *Function::Create(graph_, std::move(compiler), options);
  }

  // Calls f on fresh random inputs of `n` elements and checks the values.
  void CallAndCheck(Function& f, int64_t n, uint64_t seed) {
    std::vector<Tensor> in = {RandomTensor(DType::kFloat32, {n}, seed),
                              RandomTensor(DType::kFloat32, {n}, seed + 1)};
    std::vector<InputView> views;
    for (const Tensor& t : in) views.push_back(InputView::Of(t));
    auto got = f.Call(in, CallSignature{views, AmbientState()});
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = (*EagerInterpreter::Create(graph_))->Run(in);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(ToDoubles((*got)[0]), ToDoubles((*want)[0]));
  }

  static void WaitForEntries(const Function& f, int64_t n) {
    for (int i = 0; i < 2000 && f.stats().cache_entries < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(f.stats().cache_entries, n);
  }

  std::shared_ptr<const Graph> graph_ = MulReluAdd();
  std::shared_ptr<CompileQueue> queue_ = std::make_shared<CompileQueue>(1);
};

TEST_F(AsyncCompileThreadsTest, MissAnswersEagerlyThenTheEntryServes) {
  auto compiler = std::make_shared<GatedCompiler>();
  auto f = Make(compiler);
  CallAndCheck(*f, 8, 1);
  compiler->WaitStarted(1);
  // The compile is blocked: 16 threads on the same key all answer eagerly.
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) CallAndCheck(*f, 8, 100 + t * 10 + i);
    });
  }
  for (std::thread& t : threads) t.join();
  FunctionStats s = f->stats();
  EXPECT_EQ(s.cache_entries, 0);
  EXPECT_EQ(s.eager_while_compiling, 81);
  EXPECT_EQ(s.hits, 0);
  EXPECT_THAT(f->Explain(), HasSubstr("Compile: async, 1 compiling now, 81 "
                                      "calls answered eagerly"));
  compiler->Open();
  WaitForEntries(*f, 1);
  CallAndCheck(*f, 8, 7);
  CallAndCheck(*f, 8, 9);
  s = f->stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.eager_while_compiling, 81);
  // A new size misses again: eager first, then its own (dynamic) entry.
  CallAndCheck(*f, 12, 11);
  WaitForEntries(*f, 2);
  CallAndCheck(*f, 13, 13);
  EXPECT_EQ(f->stats().eager_while_compiling, 82);
  EXPECT_EQ(f->stats().hits, 3);
}

TEST_F(AsyncCompileThreadsTest, FailedBackgroundCompileLeavesTheKeyEager) {
  auto compiler = std::make_shared<GatedCompiler>();
  compiler->fail_ = true;
  compiler->Open();
  auto f = Make(compiler);
  CallAndCheck(*f, 4, 1);
  // The failed compile is logged; the key then runs eagerly, uncompiled.
  for (int i = 0; i < 2000 && f->stats().misses < 2; ++i) {
    CallAndCheck(*f, 4, 2 + i);
    if (f->stats().fallback_calls > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(f->stats().fallback_calls, 0);
  EXPECT_EQ(f->stats().cache_entries, 0);
  EXPECT_THAT(f->Explain(), HasSubstr("1 keys eager after a failed compile"));
}

// A specialization the backend rejects (UNIMPLEMENTED) is skipped: its calls
// run eagerly, counted, with the reason in explain() (synchronous compile).
TEST_F(AsyncCompileThreadsTest, RejectedSpecializationRunsEager) {
  auto compiler = std::make_shared<GatedCompiler>();
  compiler->fail_code_ = absl::StatusCode::kUnimplemented;
  compiler->Open();
  FunctionOptions options;
  options.name = "skips";
  auto f = *Function::Create(graph_, compiler, options);
  for (int i = 0; i < 3; ++i) CallAndCheck(*f, 5, i);
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.cache_entries, 0);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.fallback_calls, 3);
  EXPECT_THAT(f->Explain(),
              HasSubstr("Eager (skipped: the test compiler refuses)"));
}

TEST_F(AsyncCompileThreadsTest, DestroyWaitsForTheCompileInProgress) {
  auto compiler = std::make_shared<GatedCompiler>();
  auto f = Make(compiler);
  CallAndCheck(*f, 8, 1);
  CallAndCheck(*f, 9, 2);  // a second key, queued behind the first
  compiler->WaitStarted(1);
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    f.reset();
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(destroyed);  // waiting for the compile that runs
  compiler->Open();
  destroyer.join();
  EXPECT_TRUE(destroyed);
  // The queued compile of the destroyed function was cancelled, not run.
  queue_.reset();
}

TEST_F(AsyncCompileThreadsTest, QueueOutlivesItsContextHolder) {
  auto compiler = std::make_shared<GatedCompiler>();
  compiler->Open();
  auto f = Make(compiler);
  queue_.reset();  // the function keeps the queue alive
  CallAndCheck(*f, 8, 1);
  WaitForEntries(*f, 1);
  CallAndCheck(*f, 8, 2);
  EXPECT_EQ(f->stats().hits, 1);
}

}  // namespace
}  // namespace guardjit
