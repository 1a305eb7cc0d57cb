#include "core/function.h"

#include <chrono>
#include <deque>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"
#include "tests/core/test_graphs.h"
#include "tests/core/toy_ops.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

using testing::EntryOf;
// Each compile sleeps 2 ms to widen the races of concurrent calls.
class CountingCompiler : public testing::RecordingCompiler {
 public:
  CountingCompiler() : RecordingCompiler(std::chrono::milliseconds(2)) {}
};

// Inputs x, y of float32 [n] in distinct buffers. The views point into the
// tensors' own size arrays, so an Inputs must not move.
struct Inputs {
  Inputs(const Inputs&) = delete;
  explicit Inputs(int64_t n, DType dtype = DType::kFloat32)
      : x(*Tensor::Zeros(dtype, {n})), y(*Tensor::Zeros(dtype, {n})) {
    tensors = {x, y};
    views = {InputView::Of(x), InputView::Of(y)};
  }
  CallSignature sig() const { return {views, ambient}; }
  Tensor x, y;
  std::vector<Tensor> tensors;
  std::vector<InputView> views;
  AmbientState ambient;
};

TEST(FunctionTest, HitsMissesAndRecompileReasons) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kStatic});
  Inputs a(3), b(2);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 1);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 1);
  FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 5);
  EXPECT_EQ(s.hits, 3);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.recompiles, 1);
  EXPECT_EQ(s.cache_entries, 2);
  ASSERT_EQ(f->RecompileReasons().size(), 1u);
  EXPECT_EQ(f->RecompileReasons()[0],
            "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 2");
  const std::string explain = f->Explain();
  EXPECT_THAT(explain, HasSubstr("Graph Count: 1"));
  EXPECT_THAT(explain, HasSubstr("Op Count: 1"));
  EXPECT_THAT(explain,
              HasSubstr("Calls: 5, hits: 3, misses: 2, recompiles: 1"));
  EXPECT_THAT(explain,
              HasSubstr("TENSOR_MATCH: check_tensor(x, torch.float32"));
  EXPECT_THAT(f->DumpGuards(), HasSubstr("size=[2], stride=[1]"));
}

TEST(FunctionTest, EachGuardKindCausesExactlyOneRecompile) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 16, DynamicMode::kStatic});
  Inputs base(4);
  ASSERT_EQ(EntryOf(f->Call(base.tensors, base.sig())), 0);

  Inputs dtype(4, DType::kFloat64);
  Inputs grad(4);
  grad.views[0].requires_grad = true;
  Inputs no_grad_mode(4);
  no_grad_mode.ambient.grad_mode = false;
  Inputs aliased(4);
  aliased.tensors[1] = aliased.tensors[0];
  aliased.views[1] = aliased.views[0];
  Inputs strided(4);
  Tensor wide = *Tensor::Zeros(DType::kFloat32, {8});
  strided.tensors[0] = wide.AsStrided({4}, {2});
  strided.views[0] = InputView::Of(strided.tensors[0]);
  Inputs rank(4);
  rank.tensors[1] = rank.tensors[1].AsStrided({2, 2}, {2, 1});
  rank.views[1] = InputView::Of(rank.tensors[1]);

  struct Case {
    Inputs* in;
    const char* reason;
  };
  const Case cases[] = {
      {&dtype, "tensor 'x' dtype mismatch. expected float32, actual float64"},
      {&grad, "tensor 'x' requires_grad mismatch"},
      {&no_grad_mode, "GLOBAL_STATE changed: grad_mode"},
      {&aliased, "Duplicate tensors found: 'x' and 'y'"},
      {&strided, "tensor 'x' stride mismatch at index 0. expected 1, actual 2"},
      {&rank, "tensor 'y' rank mismatch. expected 1, actual 2"},
  };
  int expected_compiles = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    EXPECT_EQ(EntryOf(f->Call(c.in->tensors, c.in->sig())), expected_compiles);
    EXPECT_EQ(EntryOf(f->Call(c.in->tensors, c.in->sig())),
              expected_compiles);  // now a hit
    ++expected_compiles;
    EXPECT_EQ(compiler->compiles.load(), expected_compiles);
    EXPECT_THAT(f->RecompileReasons().back(), HasSubstr(c.reason));
  }
  // Everything still hits its own entry.
  EXPECT_EQ(EntryOf(f->Call(base.tensors, base.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(aliased.tensors, aliased.sig())), 4);
}

TEST(FunctionTest, RecompileLimitThenRunOnlyWithOneWarning) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"limited", 8, DynamicMode::kStatic});
  std::vector<std::string> warnings;
  SetLogSink([&](LogTopic topic, absl::string_view m) {
    if (topic == LogTopic::kWarnings) warnings.emplace_back(m);
  });
  std::deque<Inputs> shapes;
  for (int n = 1; n <= 20; ++n) shapes.emplace_back(n);
  for (int round = 0; round < 2; ++round) {
    for (int n = 1; n <= 20; ++n) {
      const Inputs& in = shapes[n - 1];
      EXPECT_EQ(EntryOf(f->Call(in.tensors, in.sig())), n <= 8 ? n - 1 : -1);
    }
  }
  SetLogSink(nullptr);
  EXPECT_EQ(compiler->compiles.load(), 8);
  FunctionStats s = f->stats();
  EXPECT_EQ(s.cache_entries, 8);
  EXPECT_EQ(s.fallback_calls, 24);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0],
              HasSubstr("function 'limited' hit the recompile limit (8)"));
  EXPECT_THAT(warnings[0], HasSubstr("tensor 'x' size mismatch at index 0"));
  EXPECT_THAT(f->Explain(), HasSubstr("run-only"));
}

TEST(FunctionTest, ConcurrentMissesCompileOncePerSpecialization) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"mt", 64, DynamicMode::kStatic});
  std::deque<Inputs> shapes;
  for (int n = 1; n <= 5; ++n) shapes.emplace_back(n);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const Inputs& in = shapes[(i * 7 + t) % shapes.size()];
        auto out = f->Call(in.tensors, in.sig());
        if (!out.ok()) errors++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(compiler->compiles.load(), 5);
  FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 1600);
  EXPECT_EQ(s.hits + s.misses, 1600);
  EXPECT_EQ(s.misses, 5);
  // Each shape maps to one entry, whatever order the threads compiled them in.
  std::set<int64_t> seen;
  for (const Inputs& in : shapes)
    seen.insert(EntryOf(f->Call(in.tensors, in.sig())));
  EXPECT_EQ(seen.size(), 5u);
}

TEST(FunctionTest, RejectsBadOptions) {
  auto compiler = std::make_shared<CountingCompiler>();
  EXPECT_EQ(
      Function::Create(ToyAddGraph(), compiler, {"f", -1}).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Function::Create(nullptr, compiler, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kAuto, {{2, 0}}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kAuto, {{0, 0, 9, 3}}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kAuto, {{0, 1}}});
  Inputs a(3);
  EXPECT_EQ(f->Call(a.tensors, a.sig()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FunctionTest, AutomaticDynamicMakesChangedDimsSymbolic) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler, {});
  Inputs a(3), b(2), c(7), one(1);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 1);  // dynamic from here
  EXPECT_EQ(EntryOf(f->Call(c.tensors, c.sig())), 1);
  EXPECT_EQ(EntryOf(f->Call(one.tensors, one.sig())), 2);  // 1 specializes
  EXPECT_EQ(EntryOf(f->Call(c.tensors, c.sig())), 1);
  EXPECT_EQ(f->stats().cache_entries, 3);
  const std::string guards = f->DumpGuards();
  EXPECT_THAT(guards, HasSubstr("size=[None], stride=[1]"));
  EXPECT_THAT(guards, HasSubstr("LAMBDA_GUARD: y.size()[0] == x.size()[0]"));
  EXPECT_THAT(guards, HasSubstr("LAMBDA_GUARD: 2 <= x.size()[0]"));
  EXPECT_THAT(f->RecompileReasons().back(),
              HasSubstr("2 <= x.size()[0]  # x.size()[0] = 1"));
}

TEST(FunctionTest, DynamicModeAndMarkDynamicRanges) {
  auto compiler = std::make_shared<CountingCompiler>();
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kDynamic});
  Inputs a(3), b(5);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 0);

  auto g = *Function::Create(ToyAddGraph(), compiler,
                             {"g", 8, DynamicMode::kStatic, {}});
  EXPECT_EQ(EntryOf(g->Call(a.tensors, a.sig())), 1);
  EXPECT_EQ(EntryOf(g->Call(b.tensors, b.sig())), 2);

  auto h = *Function::Create(
      ToyAddGraph(), compiler,
      {"h", 8, DynamicMode::kAuto, {{0, 0, 2, 4}, {1, 0, 2, 4}}});
  Inputs big(6);
  EXPECT_EQ(EntryOf(h->Call(a.tensors, a.sig())), 3);
  EXPECT_EQ(EntryOf(h->Call(Inputs(4).tensors, Inputs(4).sig())), 3);
  EXPECT_EQ(EntryOf(h->Call(big.tensors, big.sig())), 4);
  EXPECT_THAT(h->RecompileReasons().back(),
              HasSubstr("x.size()[0] <= 4  # x.size()[0] = 6"));
  EXPECT_THAT(h->DumpGuards(), HasSubstr("LAMBDA_GUARD: x.size()[0] <= 4"));
}

// A compiler whose executables return the symbol values a hit hands them
// (RunContext::symbols), or -1 where the call had to read them; each value is
// checked against the input size it stands for.
class SymbolEchoCompiler : public Compiler {
 public:
  class Echo : public Executable {
   public:
    explicit Echo(std::vector<SymbolSource> symbols)
        : symbols_(std::move(symbols)) {}
    absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                     absl::Span<Tensor> outputs) const override {
      const absl::Span<const int64_t> bound = ctx.symbols;
      if (bound.size() != symbols_.size()) {
        outputs[0] = Tensor::FromScalar(Scalar(int64_t{-1}), DType::kInt64);
        return absl::OkStatus();
      }
      for (size_t i = 0; i < bound.size(); ++i) {
        const int64_t size = inputs[symbols_[i].input].size(symbols_[i].dim);
        if (bound[i] != size) {
          return absl::InternalError(absl::StrCat("symbol ", i, " bound to ",
                                                  bound[i], ", size ", size));
        }
      }
      outputs[0] = Tensor::FromScalar(
          Scalar(bound.empty() ? int64_t{0} : bound[0]), DType::kInt64);
      return absl::OkStatus();
    }
    size_t num_outputs() const override { return 1; }
    std::string Describe() const override { return "echo"; }

   private:
    std::vector<SymbolSource> symbols_;
  };
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph>, const Specialization& spec) override {
    return std::make_unique<Echo>(spec.symbols);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph>) override {
    return std::make_unique<Echo>(std::vector<SymbolSource>{});
  }
  std::string name() const override { return "echo"; }
};

TEST(FunctionTest, HitsHandTheGuardsSymbolValuesToTheExecutable) {
  auto f =
      *Function::Create(ToyAddGraph(), std::make_shared<SymbolEchoCompiler>(),
                        {"f", 8, DynamicMode::kAuto});
  Inputs a(3), b(5), one(1), c(7);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);  // static: no symbols
  for (int round = 0; round < 2; ++round) {
    // The miss on b makes the dim symbolic; the calls after it hit the
    // dynamic entry, first through the last-hit shortcut, and after the
    // call of size 1 (an entry of its own) through the indexed lookup.
    // (A miss runs its new entry without bound values.)
    EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), round == 0 ? -1 : 5);
    EXPECT_EQ(EntryOf(f->Call(c.tensors, c.sig())), 7);
    EXPECT_EQ(EntryOf(f->Call(one.tensors, one.sig())), 0);
    EXPECT_EQ(EntryOf(f->Call(c.tensors, c.sig())), 7);
    std::vector<Tensor> results(1);
    RunContext ctx;
    ASSERT_TRUE(f->Call(b.tensors, b.sig(), ctx, absl::MakeSpan(results)).ok());
    EXPECT_TRUE(ctx.symbols.empty());  // cleared after the run
    EXPECT_EQ(results[0].Item().to_int(), 5);
  }
}

// A compiler that takes `ms` per compile and records how many compiles ran
// at once.
class SlowCompiler : public CountingCompiler {
 public:
  explicit SlowCompiler(int ms) : ms_(ms) {}
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override {
    const int now = in_flight.fetch_add(1) + 1;
    for (int seen = max_in_flight.load();
         now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    in_flight.fetch_sub(1);
    return CountingCompiler::Compile(std::move(graph), spec);
  }
  std::atomic<int> in_flight{0}, max_in_flight{0};

 private:
  int ms_;
};

// Issue #13: one compile per miss key, not per function.
TEST(FunctionTest, MissesOnDifferentKeysCompileAtTheSameTime) {
  auto compiler = std::make_shared<SlowCompiler>(300);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kStatic});
  Inputs a(3), b(5);
  std::vector<std::thread> threads;
  threads.emplace_back(
      [&] { EXPECT_GE(EntryOf(f->Call(a.tensors, a.sig())), 0); });
  threads.emplace_back(
      [&] { EXPECT_GE(EntryOf(f->Call(b.tensors, b.sig())), 0); });
  // While both compile, stats and explain answer without waiting for them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = std::chrono::steady_clock::now();
  FunctionStats s = f->stats();
  (void)f->Explain();
  (void)f->DumpGuards();
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(150));
  EXPECT_EQ(s.cache_entries, 0);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(compiler->max_in_flight.load(), 2);
  EXPECT_EQ(compiler->compiles.load(), 2);
  EXPECT_EQ(f->stats().cache_entries, 2);
}

TEST(FunctionTest, MissesOnOneKeyCompileOnceAndTheOthersWait) {
  auto compiler = std::make_shared<SlowCompiler>(100);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 8, DynamicMode::kStatic});
  Inputs a(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back(
        [&] { EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(compiler->compiles.load(), 1);
  EXPECT_EQ(compiler->max_in_flight.load(), 1);
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 7);
}

// The recompile limit counts compiles in flight: 6 threads on 6 shapes with
// a limit of 2 make 2 entries, the rest run the fallback.
TEST(FunctionTest, ConcurrentMissesRespectTheRecompileLimit) {
  auto compiler = std::make_shared<SlowCompiler>(100);
  auto f = *Function::Create(ToyAddGraph(), compiler,
                             {"f", 2, DynamicMode::kStatic});
  std::vector<std::unique_ptr<Inputs>> inputs;
  for (int n = 2; n < 8; ++n) inputs.push_back(std::make_unique<Inputs>(n));
  std::vector<std::thread> threads;
  for (auto& in : inputs) {
    threads.emplace_back([&f, &in] { (void)f->Call(in->tensors, in->sig()); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(compiler->compiles.load(), 2);
  EXPECT_EQ(f->stats().cache_entries, 2);
  EXPECT_EQ(f->stats().fallback_calls, 4);
}

}  // namespace
}  // namespace guardjit
