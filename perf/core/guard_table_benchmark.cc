// Guard check on a hit (GuardTable::Lookup), next to an empty call measured in
// the same run. Cases: 2 rank-2 inputs with 1 entry and with 8 entries (the
// matching one inserted last; repeated calls, and calls rotating through all
// 8 entries so each goes through the hash index; and through 64), and 32
// rank-2 inputs with 1 entry.

#include <array>
#include <deque>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/guard_table.h"
#include "core/symbolic_inputs.h"

namespace guardjit {
namespace {

__attribute__((noinline)) void EmptyFunction(void* p) {
  benchmark::DoNotOptimize(p);
}

void BM_EmptyCall(benchmark::State& state) {
  int x = 0;
  for (auto _ : state) EmptyFunction(&x);
}
BENCHMARK(BM_EmptyCall);

// `inputs` float32 tensors of [rows, 8], each in its own (fake) buffer.
struct Call {
  Call(int inputs, int64_t rows)
      : sizes(inputs, {rows, 8}), strides(inputs, {8, 1}), bufs(inputs) {
    for (int i = 0; i < inputs; ++i) {
      views.push_back({DType::kFloat32, Device::Cpu(), false, 2,
                       sizes[i].data(), strides[i].data(), &bufs[i]});
    }
  }
  CallSignature sig() const { return {views, {}}; }
  std::vector<std::array<int64_t, 2>> sizes, strides;
  std::vector<int> bufs;
  std::vector<InputView> views;
};

// `rotate`: each lookup takes the next entry's call in turn, so the last-hit
// shortcut never applies and every lookup goes through the hash index.
void RunLookup(benchmark::State& state, int inputs, int entries,
               bool rotate = false) {
  std::deque<Call> calls;
  std::vector<std::unique_ptr<CacheEntry>> owned;
  std::vector<CacheEntry*> raw;
  std::vector<std::string> names;
  for (int i = 0; i < inputs; ++i) names.push_back("x" + std::to_string(i));
  for (int e = 0; e < entries; ++e) {
    calls.emplace_back(inputs, e + 1);
    owned.push_back(std::make_unique<CacheEntry>(
        e, StaticGuardTree(names, calls.back().sig()), nullptr));
    raw.push_back(owned.back().get());
  }
  GuardTable table(raw);
  std::vector<CallSignature> sigs;
  for (const Call& c : calls) sigs.push_back(c.sig());
  if (rotate) {
    size_t next = 0;
    for (auto _ : state) {
      CacheEntry* hit = table.Lookup(sigs[next]);
      benchmark::DoNotOptimize(hit);
      next = next + 1 == sigs.size() ? 0 : next + 1;
    }
    for (size_t e = 0; e < sigs.size(); ++e) {
      if (table.Lookup(sigs[e]) != raw[e]) state.SkipWithError("lookup missed");
    }
    return;
  }
  const CallSignature& sig = sigs.back();
  for (auto _ : state) {
    CacheEntry* hit = table.Lookup(sig);
    benchmark::DoNotOptimize(hit);
  }
  if (table.Lookup(sig) != raw.back()) state.SkipWithError("lookup missed");
}

// One dynamic entry (every dim symbolic, duck-sized): bindings, symbolic
// strides and range guards are evaluated on each lookup.
void BM_GuardCheck_2Inputs_1DynamicEntry(benchmark::State& state) {
  Call call(2, 5);
  ShapeEnv env;
  std::vector<DynamicDim> dims = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  SymbolicInputs inputs =
      MakeSymbolicInputs({"x0", "x1"}, call.sig(), dims, env);
  CacheEntry entry(0, MakeGuardTree(call.sig(), std::move(inputs), env),
                   nullptr);
  GuardTable table({&entry});
  CallSignature sig = call.sig();
  for (auto _ : state) {
    CacheEntry* hit = table.Lookup(sig);
    benchmark::DoNotOptimize(hit);
  }
  if (table.Lookup(sig) != &entry) state.SkipWithError("lookup missed");
}
BENCHMARK(BM_GuardCheck_2Inputs_1DynamicEntry);

void BM_GuardCheck_2Inputs_1Entry(benchmark::State& s) { RunLookup(s, 2, 1); }
void BM_GuardCheck_2Inputs_8Entries(benchmark::State& s) { RunLookup(s, 2, 8); }
void BM_GuardCheck_2Inputs_8Entries_Rotating(benchmark::State& s) {
  RunLookup(s, 2, 8, /*rotate=*/true);
}
// 64 entries (a raised recompile_limit): rotating lookups cost what they cost
// with 8, since one hash probe finds the candidates.
void BM_GuardCheck_2Inputs_64Entries_Rotating(benchmark::State& s) {
  RunLookup(s, 2, 64, /*rotate=*/true);
}
void BM_GuardCheck_32Inputs_1Entry(benchmark::State& s) { RunLookup(s, 32, 1); }
BENCHMARK(BM_GuardCheck_2Inputs_1Entry);
BENCHMARK(BM_GuardCheck_2Inputs_8Entries);
BENCHMARK(BM_GuardCheck_2Inputs_8Entries_Rotating);
BENCHMARK(BM_GuardCheck_2Inputs_64Entries_Rotating);
BENCHMARK(BM_GuardCheck_32Inputs_1Entry);

}  // namespace
}  // namespace guardjit

BENCHMARK_MAIN();
